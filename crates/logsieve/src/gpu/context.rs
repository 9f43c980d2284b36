//! The process-wide GPU context: adapter, device, queue, the bind-group
//! layout and every pipeline, built once (wgpu's `repeated_compute` habit).

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::error::Error;

use super::kernels::{self, params};

/// What the adapter is and what it allows (`logsieve gpu-info`).
#[derive(Clone, Debug)]
pub struct GpuInfo {
    /// Adapter name, e.g. "NVIDIA H100 80GB HBM3" or "llvmpipe (LLVM ...)".
    pub name: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `Cpu`, ...
    pub device_type: String,
    /// `Vulkan`, `Metal`, `Dx12`, ...
    pub backend: String,
    /// Driver name and version.
    pub driver: String,
    /// True for a software rasterizer (lavapipe, WARP): never chosen by the
    /// automatic planner.
    pub is_software: bool,
    /// Largest storage buffer one binding may cover: the segment size bound.
    pub max_storage_buffer_binding_size: u64,
    /// Largest buffer the device may create.
    pub max_buffer_size: u64,
    /// Workgroups per dispatch dimension (dispatches are 2-D beyond it).
    pub max_compute_workgroups_per_dimension: u32,
    /// Storage buffers one shader stage may bind (the kernels use 8).
    pub max_storage_buffers_per_shader_stage: u32,
    /// Workgroup memory one workgroup may hold, in bytes: the size of the
    /// `bloom` kernel's filter (up to 32 KiB).
    pub max_compute_workgroup_storage_size: u32,
    /// GPU timestamp queries are available: kernel times are measured.
    pub timestamps: bool,
    /// Subgroup operations exist (not used: kernels stay WebGPU-portable).
    pub subgroups: bool,
    /// Whether `scan` takes its parameters as immediate data (push
    /// constants) rather than from a uniform buffer written per query.
    pub scan_immediates: bool,
    /// The adapter's features, as wgpu names them.
    pub features: String,
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        writeln!(f, "adapter:      {}", self.name)?;
        writeln!(
            f,
            "type:         {}{}",
            self.device_type,
            if self.is_software {
                " (software: never chosen by --backend auto)"
            } else {
                ""
            }
        )?;
        writeln!(f, "backend:      {}", self.backend)?;
        writeln!(f, "driver:       {}", self.driver)?;
        writeln!(f, "limits:")?;
        writeln!(
            f,
            "  max_storage_buffer_binding_size: {} ({:.1} MiB)",
            self.max_storage_buffer_binding_size,
            mib(self.max_storage_buffer_binding_size)
        )?;
        writeln!(
            f,
            "  max_buffer_size:                 {} ({:.1} MiB)",
            self.max_buffer_size,
            mib(self.max_buffer_size)
        )?;
        writeln!(
            f,
            "  max_compute_workgroups_per_dimension: {}",
            self.max_compute_workgroups_per_dimension
        )?;
        writeln!(
            f,
            "  max_storage_buffers_per_shader_stage: {}",
            self.max_storage_buffers_per_shader_stage
        )?;
        writeln!(
            f,
            "  max_compute_workgroup_storage_size: {}",
            self.max_compute_workgroup_storage_size
        )?;
        writeln!(
            f,
            "timestamps:   {}",
            if self.timestamps { "yes" } else { "no" }
        )?;
        writeln!(
            f,
            "subgroups:    {}",
            if self.subgroups { "yes" } else { "no" }
        )?;
        writeln!(
            f,
            "scan params:  {}",
            if self.scan_immediates {
                "immediate data (push constants)"
            } else {
                "uniform buffer"
            }
        )?;
        write!(f, "features:     {}", self.features)
    }
}

/// The compiled pipelines.
pub(crate) struct Pipelines {
    pub(crate) brute_line: wgpu::ComputePipeline,
    pub(crate) brute_byte: wgpu::ComputePipeline,
    pub(crate) two_phase_p1: wgpu::ComputePipeline,
    pub(crate) two_phase_p2: wgpu::ComputePipeline,
    /// `scan`'s pipelines, built when first needed.
    pub(crate) scan: ScanPipes,
    pub(crate) sig_build: wgpu::ComputePipeline,
    pub(crate) sig_p1: wgpu::ComputePipeline,
    pub(crate) plain_read: wgpu::ComputePipeline,
    pub(crate) count_result: wgpu::ComputePipeline,
    pub(crate) count_cand: wgpu::ComputePipeline,
    pub(crate) count_result_zero: wgpu::ComputePipeline,
}

/// `scan`'s pipelines ([`kernels::scan::pipeline_for`]), each built the
/// first time a query needs it (one compile is under a millisecond on the
/// H100; 65 at start-up would be about 55 ms).
pub(crate) struct ScanPipes {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    pipes: [std::sync::OnceLock<wgpu::ComputePipeline>; kernels::scan::PIPELINES],
}

impl ScanPipes {
    fn get(&self, device: &wgpu::Device, i: usize) -> &wgpu::ComputePipeline {
        self.pipes[i].get_or_init(|| {
            compute_pipeline(
                device,
                &self.layout,
                &self.module,
                "scan",
                &kernels::scan::constants(i),
            )
        })
    }
}

/// A compute pipeline of `entry` in `module`, with override `constants`.
fn compute_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    })
}

/// Errors reported by wgpu outside an error scope, and device loss: both
/// make every later GPU result untrustworthy, so they are checked after
/// each operation instead of letting wgpu's default handler panic.
#[derive(Default)]
pub(crate) struct Faults {
    pub(crate) lost: Mutex<Option<String>>,
    pub(crate) uncaptured: Mutex<Option<String>>,
}

pub(crate) struct Ctx {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: GpuInfo,
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) pipes: Pipelines,
    pub(crate) faults: Arc<Faults>,
    /// Nanoseconds per timestamp tick (0 without timestamps).
    pub(crate) ts_period: f32,
    /// Natively, wait for the GPU by polling it for up to [`SPIN_LIMIT`]
    /// before blocking (see [`GpuContext::set_busy_wait`]).
    pub(crate) busy_wait: std::sync::atomic::AtomicBool,
}

/// How long a native wait polls before it blocks in the driver.
#[cfg(not(target_arch = "wasm32"))]
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(2);

/// The GPU: one per process, shared by every uploaded corpus. Cheap to
/// clone (an `Arc`).
#[derive(Clone)]
pub struct GpuContext {
    pub(crate) inner: Arc<Ctx>,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.inner.info.name)
            .finish()
    }
}

/// A compute-stage buffer binding of a bind-group layout (every layout
/// here: the engine's, the many-literal kernels' and the pipeline's).
pub(crate) fn buffer_entry(
    binding: u32,
    ty: wgpu::BufferBindingType,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Bindings 0..=9, as `common.wgsl` declares them.
fn layout_entries() -> Vec<wgpu::BindGroupLayoutEntry> {
    let entry = buffer_entry;
    let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
    vec![
        entry(0, wgpu::BufferBindingType::Uniform),
        entry(1, wgpu::BufferBindingType::Uniform),
        entry(2, storage(true)),
        entry(3, storage(true)),
        entry(4, storage(true)),
        entry(5, storage(false)),
        entry(6, storage(false)),
        entry(7, storage(false)),
        entry(8, storage(false)),
        entry(9, storage(false)),
    ]
}

/// The storage buffers the kernels bind at once.
const STORAGE_BUFFERS: u32 = 8;

impl GpuContext {
    /// Opens the high-performance adapter, creates the device with the
    /// largest buffer limits the adapter allows, and compiles every kernel.
    ///
    /// Errors (never panics) when there is no adapter, when its limits are
    /// too small, or when device creation or compilation fails.
    ///
    /// Blocks (natively only: in a browser use [`GpuContext::new_async`]).
    pub fn new() -> Result<GpuContext, Error> {
        pollster::block_on(Self::new_async())
    }

    /// [`GpuContext::new`] without blocking: the entry point in a browser,
    /// where wgpu runs on WebGPU and every request is a JavaScript promise.
    // On wasm32 the WebGPU handles are JavaScript objects (neither `Send`
    // nor `Sync`); the `Arc` is then only shared within the one thread.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub async fn new_async() -> Result<GpuContext, Error> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        // GL has no guaranteed compute and prints noise without a display.
        if std::env::var_os("WGPU_BACKEND").is_none() {
            desc.backends = wgpu::Backends::PRIMARY;
        }
        let instance = wgpu::Instance::new(desc);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                Error::backend(format!(
                    "no GPU adapter found ({e}); install a Vulkan driver (for a software one: \
                     mesa-vulkan-drivers) or use --backend cpu"
                ))
            })?;
        let ai = adapter.get_info();
        let al = adapter.limits();
        let af = adapter.features();
        if al.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS {
            return Err(Error::backend(format!(
                "GPU adapter {} allows {} storage buffers per shader stage; the kernels need {}",
                ai.name, al.max_storage_buffers_per_shader_stage, STORAGE_BUFFERS
            )));
        }
        if al.max_storage_buffer_binding_size < (1 << 16) {
            return Err(Error::backend(format!(
                "GPU adapter {}: max_storage_buffer_binding_size {} is too small",
                ai.name, al.max_storage_buffer_binding_size
            )));
        }
        let timestamps = af.contains(wgpu::Features::TIMESTAMP_QUERY);
        let mut features = wgpu::Features::empty();
        if timestamps {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        // Natively, scan takes its parameters as immediate data (push
        // constants) where the adapter has enough; in a browser (not yet
        // in WebGPU) and elsewhere, from the uniform.
        let immediates = !cfg!(target_arch = "wasm32")
            && af.contains(wgpu::Features::IMMEDIATES)
            && al.max_immediate_size >= kernels::scan::IMM_SIZE
            && std::env::var_os("LOGSIEVE_NO_IMMEDIATES").is_none();
        if immediates {
            features |= wgpu::Features::IMMEDIATES;
        }
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: al.max_storage_buffer_binding_size,
            max_buffer_size: al.max_buffer_size,
            max_storage_buffers_per_shader_stage: STORAGE_BUFFERS,
            max_compute_workgroups_per_dimension: al.max_compute_workgroups_per_dimension,
            // The bloom kernel's filter lives in workgroup memory: as much
            // as the adapter offers (downlevel_defaults ask for 16,352
            // bytes; discrete GPUs offer 32-48 KiB).
            max_compute_workgroup_storage_size: al.max_compute_workgroup_storage_size,
            max_immediate_size: if immediates {
                kernels::scan::IMM_SIZE
            } else {
                0
            },
            // Ask for little else: any adapter that runs compute has it.
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("logsieve"),
                required_features: features,
                required_limits: limits,
                memory_hints: wgpu::MemoryHints::Performance,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                Error::backend(format!("GPU device creation failed on {}: {e}", ai.name))
            })?;
        let faults = Arc::new(Faults::default());
        {
            let faults = faults.clone();
            device.set_device_lost_callback(move |reason, msg| {
                if let Ok(mut l) = faults.lost.lock() {
                    l.get_or_insert_with(|| format!("GPU device lost ({reason:?}): {msg}"));
                }
            });
        }
        {
            let faults = faults.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                if let Ok(mut u) = faults.uncaptured.lock() {
                    u.get_or_insert_with(|| format!("GPU error: {e}"));
                }
            }));
        }
        let dl = device.limits();
        let info = GpuInfo {
            name: ai.name.clone(),
            device_type: format!("{:?}", ai.device_type),
            backend: format!("{:?}", ai.backend),
            driver: format!("{} {}", ai.driver, ai.driver_info)
                .trim()
                .to_string(),
            is_software: ai.device_type == wgpu::DeviceType::Cpu,
            max_storage_buffer_binding_size: dl.max_storage_buffer_binding_size,
            max_buffer_size: dl.max_buffer_size,
            max_compute_workgroups_per_dimension: dl.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: al.max_storage_buffers_per_shader_stage,
            max_compute_workgroup_storage_size: dl.max_compute_workgroup_storage_size,
            timestamps,
            subgroups: af.contains(wgpu::Features::SUBGROUP),
            scan_immediates: immediates,
            features: format!("{af:?}"),
        };
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("logsieve"),
            entries: &layout_entries(),
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("logsieve"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: if immediates {
                kernels::scan::IMM_SIZE
            } else {
                0
            },
        });
        let module = |m: &kernels::Module| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(m.label),
                source: wgpu::ShaderSource::Wgsl(m.source().into()),
            })
        };
        let pipe = |module: &wgpu::ShaderModule, entry: &str| {
            compute_pipeline(&device, &pl, module, entry, &[])
        };
        let m_bl = module(&kernels::brute_line::MODULE);
        let m_bb = module(&kernels::brute_byte::MODULE);
        let m_tp = module(&kernels::two_phase::MODULE);
        let m_sc = match immediates {
            true => device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("scan (immediates)"),
                source: wgpu::ShaderSource::Wgsl(kernels::scan::source_immediate().into()),
            }),
            false => module(&kernels::scan::MODULE),
        };
        let m_sg = module(&kernels::signature::MODULE);
        let m_pr = module(&kernels::plain_read::MODULE);
        let m_ct = module(&kernels::count::MODULE);
        let pipes = Pipelines {
            brute_line: pipe(&m_bl, "brute_line"),
            brute_byte: pipe(&m_bb, "brute_byte"),
            two_phase_p1: pipe(&m_tp, "phase1"),
            two_phase_p2: pipe(&m_tp, "phase2"),
            scan: ScanPipes {
                module: m_sc,
                layout: pl.clone(),
                pipes: std::array::from_fn(|_| std::sync::OnceLock::new()),
            },
            sig_build: pipe(&m_sg, "build"),
            sig_p1: pipe(&m_sg, "phase1"),
            plain_read: pipe(&m_pr, "plain_read"),
            count_result: pipe(&m_ct, "count_result"),
            count_cand: pipe(&m_ct, "count_cand"),
            count_result_zero: pipe(&m_ct, "count_result_zero"),
        };
        if let Some(e) = scope.pop().await {
            return Err(Error::backend(format!(
                "GPU kernel compilation failed on {}: {e}",
                ai.name
            )));
        }
        let ts_period = if timestamps {
            queue.get_timestamp_period()
        } else {
            0.0
        };
        debug_assert_eq!(params::WORDS * 4 % 16, 0);
        Ok(GpuContext {
            inner: Arc::new(Ctx {
                device,
                queue,
                info,
                layout,
                pipes,
                faults,
                ts_period,
                busy_wait: std::sync::atomic::AtomicBool::new(true),
            }),
        })
    }

    /// What the adapter is and allows.
    pub fn info(&self) -> &GpuInfo {
        &self.inner.info
    }

    /// Whether waits for the GPU poll before they block (natively; on by
    /// default). Off, every wait sleeps in the driver until the GPU is
    /// done: less CPU, more latency per query (see docs/bench).
    pub fn set_busy_wait(&self, on: bool) {
        self.inner
            .busy_wait
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Destroys the device, as a driver reset or a browser reclaiming the
    /// GPU would: every later operation on this context reports a lost
    /// device. For tests of device-loss handling.
    pub fn destroy_device(&self) {
        self.inner.device.destroy();
    }

    /// The device was lost (or reported an uncaught error): results from
    /// this context can no longer be trusted; make a new one.
    pub fn is_lost(&self) -> bool {
        self.inner.check_faults().is_err()
    }
}

impl Ctx {
    /// Runs `work` inside out-of-memory and validation error scopes, so a
    /// GPU error comes back as an `Err`, never as a silently wrong result.
    pub(crate) async fn scoped<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        self.scoped_as("during search", "search", work).await
    }

    /// [`Ctx::scoped`] whose errors name the work: "out of GPU memory
    /// {during}" and "GPU {what} failed".
    pub(crate) async fn scoped_as<T>(
        &self,
        during: &str,
        what: &str,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let res = work.await;
        let v = val.pop().await;
        let o = oom.pop().await;
        if let Some(e) = o {
            return Err(Error::backend(format!("out of GPU memory {during}: {e}")));
        }
        if let Some(e) = v {
            return Err(Error::backend(format!("GPU {what} failed: {e}")));
        }
        self.check_faults()?;
        res
    }

    /// An error if the device was lost or reported an error nobody caught:
    /// a result computed after that cannot be trusted.
    pub(crate) fn check_faults(&self) -> Result<(), Error> {
        if let Some(m) = self.faults.lost.lock().ok().and_then(|l| l.clone()) {
            return Err(Error::backend(m));
        }
        if let Some(m) = self.faults.uncaptured.lock().ok().and_then(|u| u.clone()) {
            return Err(Error::backend(m));
        }
        Ok(())
    }

    /// Waits for all submitted work (natively only: it blocks). With busy
    /// waiting on, it first polls the queue for up to [`SPIN_LIMIT`]: a
    /// query that takes a tenth of a millisecond should not pay for a sleep
    /// and a wake-up in the driver.
    pub(crate) fn wait(&self) -> Result<(), Error> {
        #[cfg(not(target_arch = "wasm32"))]
        if self.busy_wait.load(std::sync::atomic::Ordering::Relaxed) {
            let t = std::time::Instant::now();
            let mut polls = 0u32;
            while t.elapsed() < SPIN_LIMIT {
                let st = self
                    .device
                    .poll(wgpu::PollType::Poll)
                    .map_err(|e| Error::backend(format!("GPU wait failed: {e}")))?;
                polls += 1;
                if st.is_queue_empty() {
                    if super::resident::trace_queries() {
                        eprintln!(
                            "logsieve: wait: {polls} polls in {:.1} us",
                            t.elapsed().as_secs_f64() * 1e6
                        );
                    }
                    return Ok(());
                }
                std::hint::spin_loop();
            }
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::backend(format!("GPU wait failed: {e}")))?;
        Ok(())
    }

    /// Waits for all submitted work without blocking a browser: natively a
    /// blocking poll, on the web the queue's work-done callback.
    pub(crate) async fn wait_async(&self) -> Result<(), Error> {
        #[cfg(target_arch = "wasm32")]
        {
            let (tx, rx) = oneshot::channel();
            self.queue.on_submitted_work_done(move || tx.send(()));
            rx.await
                .ok_or_else(|| Error::backend("GPU work never completed (device lost?)"))
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.wait()
    }

    /// Maps each `buf[..size]` for reading (sizes of 0 are skipped), with
    /// one wait for all of them. Blocks: natively only.
    pub(crate) fn map_many(&self, bufs: &[(&wgpu::Buffer, u64)]) -> Result<(), Error> {
        pollster::block_on(self.map_many_async(bufs))
    }

    /// [`Ctx::map_many`] without blocking. Natively one blocking poll runs
    /// every map callback; in a browser the event loop runs them while
    /// this future waits.
    pub(crate) async fn map_many_async(&self, bufs: &[(&wgpu::Buffer, u64)]) -> Result<(), Error> {
        let mut pending = Vec::new();
        for (buf, size) in bufs.iter().filter(|(_, s)| *s > 0) {
            let (tx, rx) = oneshot::channel();
            buf.map_async(wgpu::MapMode::Read, 0..*size, move |r| tx.send(r));
            pending.push(rx);
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.wait()?;
        for rx in pending {
            match rx.await {
                Some(Ok(())) => {}
                Some(Err(e)) => return Err(Error::backend(format!("GPU readback failed: {e}"))),
                None => {
                    return Err(Error::backend(
                        "GPU readback failed: a map callback never ran (device lost?)",
                    ))
                }
            }
        }
        Ok(())
    }

    /// Records a scan of a segment of `n_bytes` (its bind group set) for
    /// the query parameters `prm`, with the query's immediate data where
    /// scan takes its parameters that way.
    pub(crate) fn record_scan(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        n_bytes: u32,
        prm: &[u32; params::WORDS],
        imm: Option<&[u8]>,
    ) {
        let i = kernels::scan::pipeline_for(
            prm[params::PAT_LEN] as usize,
            prm[params::D2] as i32,
            prm[params::DENSE] != 0,
        );
        pass.set_pipeline(self.pipes.scan.get(&self.device, i));
        // Immediates are set after a pipeline (wgpu's rule).
        if let Some(imm) = imm {
            pass.set_immediates(0, imm);
        }
        let (x, y) = self.grid(kernels::scan::groups(n_bytes));
        pass.dispatch_workgroups(x, y, 1);
    }

    /// The x, y of a 2-D dispatch of `groups` workgroups (one dimension
    /// holds at most `max_compute_workgroups_per_dimension`).
    pub(crate) fn grid(&self, groups: u64) -> (u32, u32) {
        let max = u64::from(self.info.max_compute_workgroups_per_dimension.max(1));
        let groups = groups.max(1);
        let x = groups.min(max);
        let y = groups.div_ceil(x);
        (x as u32, y as u32)
    }
}

// WebGPU handles are neither `Send` nor `Sync` (they are JavaScript
// objects), so a browser has no process-wide context in a static.
#[cfg(not(target_arch = "wasm32"))]
static SHARED: std::sync::OnceLock<Result<GpuContext, String>> = std::sync::OnceLock::new();

impl GpuContext {
    /// The process's context, created on first use; later calls return the
    /// same one (or the same error: adapters do not appear mid-run).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn shared() -> Result<GpuContext, Error> {
        SHARED
            .get_or_init(|| GpuContext::new().map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::backend)
    }

    /// In a browser there is no blocking, process-wide context: an error
    /// that says to use [`GpuContext::new_async`].
    #[cfg(target_arch = "wasm32")]
    pub fn shared() -> Result<GpuContext, Error> {
        Err(Error::backend(
            "no shared GPU context in a browser: create one with GpuContext::new_async",
        ))
    }
}

/// A one-shot channel whose receiver is a future, completed by wgpu's
/// callbacks (buffer mapped, submitted work done). Natively the caller polls
/// the device first, which runs the callbacks; in a browser the JavaScript
/// event loop runs them while the future waits, since nothing there may
/// block. (A dozen lines instead of a dependency on `futures-channel`.)
pub(crate) mod oneshot {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    struct Slot<T> {
        value: Option<T>,
        waker: Option<Waker>,
        closed: bool,
    }

    /// Completes the receiver once; dropped unsent (a callback that never
    /// runs, e.g. on device loss), the receiver yields `None`.
    pub(crate) struct Sender<T>(Arc<Mutex<Slot<T>>>);

    /// Resolves to the sent value, or `None` when the sender was dropped.
    pub(crate) struct Receiver<T>(Arc<Mutex<Slot<T>>>);

    pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
        let slot = Arc::new(Mutex::new(Slot {
            value: None,
            waker: None,
            closed: false,
        }));
        (Sender(slot.clone()), Receiver(slot))
    }

    fn close<T>(slot: &Mutex<Slot<T>>, value: Option<T>) {
        let waker = {
            let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
            if value.is_some() {
                s.value = value;
            }
            s.closed = true;
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    impl<T> Sender<T> {
        pub(crate) fn send(self, value: T) {
            close(&self.0, Some(value));
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            close(&self.0, None);
        }
    }

    impl<T> Future for Receiver<T> {
        type Output = Option<T>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
            let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(v) = s.value.take() {
                return Poll::Ready(Some(v));
            }
            if s.closed {
                return Poll::Ready(None);
            }
            s.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}
