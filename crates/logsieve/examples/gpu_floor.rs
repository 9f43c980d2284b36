//! What a GPU query costs before logsieve does anything: wgpu and the
//! driver alone, on the first adapter. Medians of `--iters` rounds, µs:
//!
//! * `submit([])`: an empty submission;
//! * `tiny`: one one-workgroup dispatch that writes 16 bytes, a copy into a
//!   mappable buffer, the submission, `map_async`, polling until the map
//!   callback, reading, unmapping (logsieve's count readback, minus its
//!   kernel): split into finish, submit, wait and read;
//! * `read N MB`: the same round trip whose kernel reads an N MB resident
//!   buffer as `vec4<u32>` (grid-stride) and writes one word.
//!
//! With `--gap-ms N` each round follows N ms of idle; `--keep-ms K` with
//! `--keep fg|bg|spin` fills the idle: `fg` the measuring thread submits
//! a tiny dispatch every K ms, `bg` another thread does, `spin` another
//! thread spins on a core (no GPU work).
//!
//! Usage: `gpu_floor [--iters N] [--mb N] [--gap-ms N] [--keep-ms K --keep fg|bg|spin]`.

use std::time::{Duration, Instant};

const TINY: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < 4u) { out[g.x] = g.x + 1u; }
}
"#;

const READ: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> data: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>,
        @builtin(num_workgroups) n: vec3<u32>) {
    let stride = n.x * 256u;
    var acc = vec4<u32>(0u);
    var i = g.x;
    let len = arrayLength(&data);
    loop {
        if (i >= len) { break; }
        acc ^= data[i];
        i += stride;
    }
    if (acc.x == 0x12345678u && acc.y == 0x9abcdefu) { out[0] = acc.z; }
}
"#;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    groups: u32,
}

fn main() {
    let mut iters = 200usize;
    let mut mb = 194u64;
    let mut gap_ms = 0u64;
    let mut keep_ms = 0u64;
    let mut keep = String::from("fg");
    let usage = || -> ! {
        eprintln!(
            "usage: gpu_floor [--iters N] [--mb N] [--gap-ms N] [--keep-ms K --keep fg|bg|spin]"
        );
        std::process::exit(2)
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        if f == "--keep" && ["fg", "bg", "spin"].contains(&v.as_str()) {
            keep = v;
            continue;
        }
        let v: u64 = v.parse().unwrap_or_else(|_| usage());
        match f.as_str() {
            "--iters" => iters = v as usize,
            "--mb" => mb = v,
            "--gap-ms" => gap_ms = v,
            "--keep-ms" => keep_ms = v,
            _ => usage(),
        }
    }
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&Default::default())).expect("no adapter");
    let info = adapter.get_info();
    let limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: limits.clone(),
        ..Default::default()
    }))
    .expect("device");
    println!(
        "adapter: {} ({:?}, {:?})",
        info.name, info.device_type, info.backend
    );

    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let rb = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bytes = (mb << 20)
        .min(limits.max_storage_buffer_binding_size)
        .min(limits.max_buffer_size)
        / 16
        * 16;
    let data = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("data"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let chunk = vec![0x5au8; 16 << 20];
    let mut at = 0;
    while at < bytes {
        let n = (bytes - at).min(chunk.len() as u64);
        queue.write_buffer(&data, at, &chunk[..n as usize]);
        at += n;
    }
    let kernel = |src: &str, with_data: bool, groups: u32| {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(src.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: out.as_entire_binding(),
        }];
        if with_data {
            entries.push(wgpu::BindGroupEntry {
                binding: 1,
                resource: data.as_entire_binding(),
            });
        }
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        Kernel {
            pipeline,
            bind,
            groups,
        }
    };
    let tiny = kernel(TINY, false, 1);
    let read = kernel(READ, true, 132 * 16);

    let spin = || loop {
        let st = device.poll(wgpu::PollType::Poll).expect("poll");
        if st.is_queue_empty() {
            break;
        }
        std::hint::spin_loop();
    };
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("upload");

    // One round trip, split: [finish, submit, wait (map callback), read].
    let round = |k: &Kernel| -> [f64; 4] {
        let t = Instant::now();
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&k.pipeline);
            pass.set_bind_group(0, &k.bind, &[]);
            pass.dispatch_workgroups(k.groups, 1, 1);
        }
        enc.copy_buffer_to_buffer(&out, 0, &rb, 0, 16);
        let cb = enc.finish();
        let t_finish = t.elapsed();
        queue.submit([cb]);
        let t_submit = t.elapsed();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        rb.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            r.expect("map");
            d.store(true, std::sync::atomic::Ordering::Release);
        });
        while !done.load(std::sync::atomic::Ordering::Acquire) {
            spin();
        }
        let t_wait = t.elapsed();
        let v = rb.slice(..).get_mapped_range().expect("mapped");
        std::hint::black_box(v[0]);
        drop(v);
        rb.unmap();
        let t_read = t.elapsed();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        [
            us(t_finish),
            us(t_submit - t_finish),
            us(t_wait - t_submit),
            us(t_read - t_wait),
        ]
    };

    let mut empty = Vec::new();
    for _ in 0..iters {
        let t = Instant::now();
        queue.submit([]);
        empty.push(t.elapsed().as_secs_f64() * 1e6);
        spin();
    }
    println!("submit([]): {:.1} us", median(&mut empty));

    // The keep-alive: a tiny dispatch, submitted and waited for.
    let nudge = || {
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&tiny.pipeline);
            pass.set_bind_group(0, &tiny.bind, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        queue.submit([enc.finish()]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("nudge");
    };
    let keep_every = Duration::from_millis(keep_ms);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let idle = |gap: Duration| {
        if keep_ms == 0 || keep != "fg" {
            std::thread::sleep(gap);
            return;
        }
        let end = Instant::now() + gap;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(keep_every));
            if Instant::now() >= end {
                break;
            }
            nudge();
        }
    };

    let gap = Duration::from_millis(gap_ms);
    std::thread::scope(|sc| {
        if keep_ms > 0 && keep != "fg" {
            sc.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if keep == "bg" {
                        std::thread::sleep(keep_every);
                        nudge();
                    } else {
                        std::hint::spin_loop();
                    }
                }
            });
        }
        for (name, k) in [("tiny", &tiny), ("read", &read)] {
            for _ in 0..20 {
                round(k);
            }
            let mut parts: [Vec<f64>; 5] = Default::default();
            for _ in 0..iters {
                if !gap.is_zero() {
                    idle(gap);
                }
                let r = round(k);
                for (p, v) in parts.iter_mut().zip(r) {
                    p.push(v);
                }
                parts[4].push(r.iter().sum());
            }
            let [f, s, w, rd, tot] = &mut parts;
            let label = match name {
                "read" => format!("read {} MB", bytes >> 20),
                _ => name.to_string(),
            };
            let kept = match keep_ms {
                0 => String::new(),
                k => format!(", keep {keep} every {k} ms"),
            };
            println!(
                "{label}: total {:.1} us (finish {:.1}, submit {:.1}, wait {:.1}, read {:.1}); gap {gap_ms} ms{kept}",
                median(tot),
                median(f),
                median(s),
                median(w),
                median(rd)
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
