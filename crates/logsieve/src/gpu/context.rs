//! The first step: the process-wide GPU context. Opens the adapter, asks
//! for the device with the largest buffer limits it allows, and builds the
//! pipelines once ([`super::pipelines`]; wgpu's `repeated_compute` habit),
//! so that a query only writes a small uniform and dispatches. It also
//! owns what every later step needs of the device: error scopes, fault
//! checks and the waits for submitted work.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::error::Error;

use super::kernels::{self, params, Grid};
use super::oneshot;
use super::pipelines::{Pipelines, STORAGE_BUFFERS};
use super::{GpuSelection, GpuTuning};

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

/// An adapter seen by [`GpuContext::probe_adapters`]: enumerated only, no
/// device created, so nothing is compiled or allocated.
#[derive(Clone, Debug)]
pub struct AdapterProbe {
    /// Adapter name.
    pub name: String,
    /// wgpu's device type (`DiscreteGpu`, `IntegratedGpu`, `Cpu`, ...).
    pub device_type: String,
    /// True for a software rasterizer (lavapipe, WARP).
    pub is_software: bool,
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

/// Errors reported by wgpu outside an error scope, and device loss: both
/// make every later GPU result untrustworthy, so they are checked after
/// each operation instead of letting wgpu's default handler panic.
#[derive(Default)]
pub(crate) struct Faults {
    pub(crate) lost: Mutex<Option<String>>,
    pub(crate) uncaptured: Mutex<Option<String>>,
}

/// What a [`GpuContext`] shares: the device and what was built with it.
pub(crate) struct Ctx {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: GpuInfo,
    /// The switches the context was created with.
    pub(crate) tuning: GpuTuning,
    /// The engine's bind-group layout and pipelines.
    pub(crate) pipes: Pipelines,
    pub(crate) faults: Arc<Faults>,
    /// Nanoseconds per timestamp tick (0 without timestamps).
    pub(crate) ts_period: f32,
    /// Natively, wait for the GPU by polling it for up to [`SPIN_LIMIT`]
    /// before blocking (see [`GpuContext::set_busy_wait`]).
    pub(crate) busy_wait: std::sync::atomic::AtomicBool,
    /// The keep-warm dispatch's pipeline and bind group, built on first
    /// use (`warm.rs`, which this module does not need to know).
    pub(crate) warm: std::sync::OnceLock<(wgpu::ComputePipeline, wgpu::BindGroup)>,
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

impl GpuContext {
    /// Opens the high-performance adapter, creates the device with the
    /// largest buffer limits the adapter allows, and compiles every kernel.
    ///
    /// Errors (never panics) when there is no adapter, when its limits are
    /// too small, or when device creation or compilation fails.
    ///
    /// Blocks (natively only: in a browser use [`GpuContext::new_async`]).
    ///
    /// Reads the environment ([`GpuTuning::from_env`]): for front ends
    /// only; the library and its tests use [`GpuContext::new_with`].
    pub fn new() -> Result<GpuContext, Error> {
        Self::new_with(&GpuTuning::from_env())
    }

    /// The adapters the same instance as [`GpuContext::new`] would see, best
    /// first (hardware before software), without creating a device: what a
    /// one-shot plan needs to know before deciding whether starting a GPU
    /// could pay. Empty when there is none.
    ///
    /// Cost: it loads the Vulkan loader and its drivers; measured at 49-71 ms
    /// warm (250 ms cold) on a busy 2-core machine with only lavapipe, so
    /// the CLI probes only when `--explain` asks or the corpus is large
    /// enough for a GPU to pay.
    pub fn probe_adapters() -> Vec<AdapterProbe> {
        let instance = Self::instance();
        let backends = Self::backends();
        let mut found: Vec<AdapterProbe> =
            pollster::block_on(instance.enumerate_adapters(backends))
                .into_iter()
                .map(|a| {
                    let ai = a.get_info();
                    AdapterProbe {
                        name: ai.name.clone(),
                        device_type: format!("{:?}", ai.device_type),
                        is_software: ai.device_type == wgpu::DeviceType::Cpu,
                    }
                })
                .collect();
        let rank = |p: &AdapterProbe| match p.device_type.as_str() {
            _ if p.is_software => 3,
            "DiscreteGpu" => 0,
            "IntegratedGpu" => 1,
            _ => 2,
        };
        found.sort_by_key(rank);
        found
    }

    /// [`GpuContext::new`] with `tuning` instead of the environment.
    pub fn new_with(tuning: &GpuTuning) -> Result<GpuContext, Error> {
        pollster::block_on(Self::new_async_with(tuning))
    }

    /// [`GpuContext::new`] without blocking: the entry point in a browser,
    /// where wgpu runs on WebGPU and every request is a JavaScript promise.
    /// Reads the environment ([`GpuTuning::from_env`]; in a browser there
    /// is none, so the defaults).
    pub async fn new_async() -> Result<GpuContext, Error> {
        Self::new_async_with(&GpuTuning::from_env()).await
    }

    /// [`GpuContext::new_async`] with `tuning` instead of the environment.
    // On wasm32 the WebGPU handles are JavaScript objects (neither `Send`
    // nor `Sync`); the `Arc` is then only shared within the one thread.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub async fn new_async_with(tuning: &GpuTuning) -> Result<GpuContext, Error> {
        let instance = Self::instance();
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
        Self::open_adapter(adapter, tuning).await
    }

    /// The wgpu instance: the primary backends unless `WGPU_BACKEND` says
    /// otherwise.
    fn instance() -> wgpu::Instance {
        quiet_display_probe();
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = Self::backends();
        wgpu::Instance::new(desc)
    }

    /// The backends asked of the instance: `WGPU_BACKEND`'s, else the
    /// primary ones (GL has no guaranteed compute and prints noise without
    /// a display).
    fn backends() -> wgpu::Backends {
        match std::env::var_os("WGPU_BACKEND") {
            Some(_) => wgpu::InstanceDescriptor::new_without_display_handle_from_env().backends,
            None => wgpu::Backends::PRIMARY,
        }
    }

    /// Opens one device on `adapter` and builds the pipelines.
    // See `new_async_with` on the `Arc` in a browser.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    async fn open_adapter(adapter: wgpu::Adapter, tuning: &GpuTuning) -> Result<GpuContext, Error> {
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
            && !tuning.no_immediates;
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
        let pipes = Pipelines::build(&device, immediates);
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
                tuning: tuning.clone(),
                pipes,
                faults,
                ts_period,
                busy_wait: std::sync::atomic::AtomicBool::new(true),
                warm: std::sync::OnceLock::new(),
            }),
        })
    }

    /// What the adapter is and allows.
    pub fn info(&self) -> &GpuInfo {
        &self.inner.info
    }

    /// The switches this context was created with.
    pub fn tuning(&self) -> &GpuTuning {
        &self.inner.tuning
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
    /// A buffer holding `contents` (padded to 4 bytes), written through the
    /// queue rather than mapped at creation: wgpu's `create_buffer_init`
    /// panics on a lost device (the mapped range of an invalid buffer,
    /// wgpu 30 util/device.rs:72), while a queue write is a validation
    /// error the request's error scope reports, so the shard falls back to
    /// the CPU (REGRESSION: multi_gpu's device-lost test, 3 literals).
    pub(crate) fn buffer_with(
        &self,
        label: &str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        let size = contents.len().max(4).next_multiple_of(4);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size as u64,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut padded = contents.to_vec();
        padded.resize(size, 0);
        self.queue.write_buffer(&buf, 0, &padded);
        buf
    }

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
                    if self.tuning.trace_queries {
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

    /// The bound on the dispatches' workgroups per dimension.
    pub(crate) fn grid(&self) -> Grid {
        Grid {
            max_per_dimension: self.info.max_compute_workgroups_per_dimension,
        }
    }
}

/// Preference order of adapter types: discrete first, software last.
#[cfg(not(target_arch = "wasm32"))]
fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu | wgpu::DeviceType::Other => 2,
        wgpu::DeviceType::Cpu => 3,
    }
}

/// One line per adapter found, in the preference order the indices of
/// [`GpuSelection::List`] refer to: `index: name (type, backend)`.
#[cfg(not(target_arch = "wasm32"))]
pub fn list_adapters() -> Vec<String> {
    pollster::block_on(GpuContext::adapters())
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let ai = a.get_info();
            format!("{i}: {} ({:?}, {:?})", ai.name, ai.device_type, ai.backend)
        })
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
impl GpuContext {
    /// Every adapter of the primary backends, in preference order
    /// (discrete, integrated, others, software; stable within a type).
    async fn adapters() -> Vec<wgpu::Adapter> {
        let instance = Self::instance();
        // The instance enables only the backends `instance` chose.
        let mut v = instance.enumerate_adapters(wgpu::Backends::all()).await;
        v.sort_by_key(|a| type_rank(a.get_info().device_type));
        v
    }

    /// Opens one device per adapter that `tuning.gpus` selects
    /// ([`GpuSelection`]): by default every discrete adapter, and without
    /// one the best adapter as [`GpuContext::shared_with`] opens it (the
    /// process's shared context). A count above the adapters found opens
    /// adapters again, each as its own device, and says so on stderr
    /// ("opening adapter X again as device k"). Blocks (natively only).
    pub fn open_selected(tuning: &GpuTuning) -> Result<Vec<GpuContext>, Error> {
        let adapters = pollster::block_on(Self::adapters());
        let picks: Vec<usize> = match &tuning.gpus {
            GpuSelection::All => {
                let discrete: Vec<usize> = (0..adapters.len())
                    .filter(|&i| {
                        adapters[i].get_info().device_type == wgpu::DeviceType::DiscreteGpu
                    })
                    .collect();
                if discrete.len() <= 1 {
                    return Ok(vec![Self::shared_with(tuning)?]);
                }
                discrete
            }
            GpuSelection::Count(n) => {
                if adapters.is_empty() {
                    // No adapter listed: the one request_adapter finds, if any.
                    let first = Self::new_with(tuning)?;
                    let mut v = vec![first];
                    for k in 1..*n {
                        eprintln!(
                            "logsieve: opening adapter {} again as device {k}",
                            v[0].info().name
                        );
                        v.push(Self::new_with(tuning)?);
                    }
                    return Ok(v);
                }
                (0..*n).map(|k| k % adapters.len()).collect()
            }
            GpuSelection::List(v) => {
                if let Some(&bad) = v.iter().find(|&&i| i >= adapters.len()) {
                    return Err(Error::backend(format!(
                        "--gpus: no adapter {bad}; found {}: {}",
                        adapters.len(),
                        list_adapters().join("; ")
                    )));
                }
                v.clone()
            }
        };
        let mut out = Vec::with_capacity(picks.len());
        for (k, &i) in picks.iter().enumerate() {
            if picks[..k].contains(&i) {
                eprintln!(
                    "logsieve: opening adapter {i} ({}) again as device {k}",
                    adapters[i].get_info().name
                );
            }
            out.push(pollster::block_on(Self::open_adapter(
                adapters[i].clone(),
                tuning,
            ))?);
        }
        Ok(out)
    }
}

// WebGPU handles are neither `Send` nor `Sync` (they are JavaScript
// objects), so a browser has no process-wide context in a static.
#[cfg(not(target_arch = "wasm32"))]
static SHARED: std::sync::OnceLock<Result<GpuContext, String>> = std::sync::OnceLock::new();

impl GpuContext {
    /// The process's context, created on first use; later calls return the
    /// same one (or the same error: adapters do not appear mid-run).
    ///
    /// Reads the environment ([`GpuTuning::from_env`]) when it creates the
    /// context: for front ends only; the library uses
    /// [`GpuContext::shared_with`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn shared() -> Result<GpuContext, Error> {
        Self::shared_by(GpuTuning::from_env)
    }

    /// [`GpuContext::shared`] created with `tuning`. The first caller's
    /// tuning wins: a later call with other switches gets the context
    /// already made (compare [`GpuContext::tuning`] where it matters).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn shared_with(tuning: &GpuTuning) -> Result<GpuContext, Error> {
        Self::shared_by(|| tuning.clone())
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn shared_by(tuning: impl FnOnce() -> GpuTuning) -> Result<GpuContext, Error> {
        SHARED
            .get_or_init(|| GpuContext::new_with(&tuning()).map_err(|e| e.to_string()))
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

    /// In a browser there is no blocking, process-wide context (see
    /// [`GpuContext::shared`]).
    #[cfg(target_arch = "wasm32")]
    pub fn shared_with(_tuning: &GpuTuning) -> Result<GpuContext, Error> {
        Self::shared()
    }
}

/// Mesa's Vulkan device-select layer looks for a display to pick the
/// default GPU, and without `XDG_RUNTIME_DIR` libwayland prints "error:
/// XDG_RUNTIME_DIR is invalid or not set" for every instance (122 lines in
/// a test run). The engine picks its adapter itself and draws nothing:
/// without a runtime directory (no display session), the layer is told to
/// stand aside (`NODEVICE_SELECT`), once, before the first instance.
fn quiet_display_probe() {
    #[cfg(all(unix, not(target_arch = "wasm32")))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let runtime = std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| std::path::Path::new(&d).is_absolute());
            if !runtime && std::env::var_os("NODEVICE_SELECT").is_none() {
                std::env::set_var("NODEVICE_SELECT", "1");
            }
        });
    }
}
