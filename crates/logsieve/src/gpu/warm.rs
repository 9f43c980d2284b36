//! The keep-warm dispatch (`serve --keep-warm`): one workgroup that writes
//! 16 bytes, submitted and waited for, so that a device idle between
//! queries does not let its clocks fall. After 100 ms idle a resident
//! count's floor rose from ~0.1 to ~0.24 ms on the H200, and a dispatch
//! like this one every 2 ms bought half of that back (`examples/gpu_floor.rs`).
//! It touches no corpus buffer: it can run beside any search.

use super::context::GpuContext;
use crate::error::Error;

const TINY: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < 4u) { out[g.x] = out[g.x] + g.x + 1u; }
}
"#;

/// The dispatch's pipeline and the bind group of its 16-byte buffer.
fn build(device: &wgpu::Device) -> (wgpu::ComputePipeline, wgpu::BindGroup) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("keep warm"),
        source: wgpu::ShaderSource::Wgsl(TINY.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("keep warm"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buf = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("keep warm"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("keep warm"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buf.as_entire_binding(),
        }],
    });
    (pipeline, bind)
}

impl GpuContext {
    /// Runs the keep-warm dispatch and waits for it (natively only: it
    /// blocks).
    pub fn nudge(&self) -> Result<(), Error> {
        let c = &*self.inner;
        c.check_faults()?;
        let (pipeline, bind) = c.warm.get_or_init(|| build(&c.device));
        let mut enc = c.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        c.queue.submit([enc.finish()]);
        c.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::backend(format!("GPU wait failed: {e}")))?;
        Ok(())
    }
}
