//! The planner's calibration: throughputs and latencies per device class,
//! refined by measured runs and kept per device in a JSON file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::DeviceClass;
use crate::kernel::Kernel;

/// Throughputs and latencies the scores use; defaults per device class,
/// refined by measurement ([`Calibration::record`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// CPU literal search, one thread, GB/s.
    pub cpu_gbps: f64,
    /// GPU kernel throughput over the resident corpus, GB/s, per kernel.
    pub gpu_gbps: BTreeMap<Kernel, f64>,
    /// Fixed cost of one GPU query (uniform write, dispatch, readback), ms.
    pub gpu_latency_ms: f64,
    /// Host-to-GPU upload, GB/s.
    pub upload_gbps: f64,
    /// Adapter, device and pipeline creation, ms.
    pub gpu_startup_ms: f64,
    /// Below this many bytes the CPU always answers.
    pub crossover_bytes: u64,
    /// Runs recorded so far (0 = defaults only).
    pub samples: u64,
}

/// The CPU's single-literal speed before any measurement, GB/s.
pub(crate) const DEFAULT_CPU_GBPS: f64 = 8.0;

impl Calibration {
    /// Conservative defaults for a device class (before any measurement).
    pub fn defaults(class: DeviceClass) -> Calibration {
        let (gbps, lat, up, start, cross) = match class {
            DeviceClass::Discrete => (500.0, 0.1, 10.0, 150.0, 500_000),
            DeviceClass::Integrated => (60.0, 0.2, 8.0, 150.0, 2_000_000),
            DeviceClass::Software | DeviceClass::Other => (1.0, 5.0, 1.0, 300.0, 2_000_000),
        };
        let mut gpu_gbps = BTreeMap::new();
        gpu_gbps.insert(Kernel::Scan, gbps);
        Calibration {
            cpu_gbps: DEFAULT_CPU_GBPS,
            gpu_gbps,
            gpu_latency_ms: lat,
            upload_gbps: up,
            gpu_startup_ms: start,
            crossover_bytes: cross,
            samples: 0,
        }
    }

    /// The fastest calibrated single-literal kernel and its throughput
    /// (the many-literal kernels' speeds are kept apart: they run other
    /// queries).
    pub fn best_kernel(&self) -> (Kernel, f64) {
        self.gpu_gbps
            .iter()
            .filter(|(k, _)| Kernel::ALL.contains(k))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(k, v)| (*k, *v))
            .unwrap_or((Kernel::Scan, 1.0))
    }

    /// Folds one measurement in (exponential moving average, weight 1/4),
    /// and moves the crossover to where the two estimates meet.
    pub fn record(&mut self, m: &Measurement) {
        self.fold(m, 0.25);
    }

    /// Takes a probe's runs as they are, in place of the defaults they
    /// stand in for (no averaging): for an adapter whose class says nothing
    /// of its speed. WebGPU reports every adapter but a fallback one as
    /// `Other`, whose defaults are a software device's (1 GB/s, 5 ms): the
    /// page on an NVIDIA H200 routed every search to its one-thread CPU.
    /// A GPU run's fixed cost is taken as at most the whole run, so the
    /// model gives back the measured time at the probe's size.
    pub fn adopt(&mut self, probe: &[Measurement]) {
        for m in probe {
            if let MeasuredBackend::Gpu { .. } = m.backend {
                let ms = m.seconds * 1e3;
                if ms.is_finite() && ms > 0.0 {
                    self.gpu_latency_ms = self.gpu_latency_ms.min(ms);
                }
            }
            self.fold(m, 1.0);
        }
    }

    /// Folds one run in with weight `w` (the old value keeps `1 - w`).
    fn fold(&mut self, m: &Measurement, w: f64) {
        let ema = |old: f64, new: f64| {
            if new.is_finite() && new > 0.0 {
                old * (1.0 - w) + new * w
            } else {
                old
            }
        };
        let secs = m.seconds.max(1e-9);
        match &m.backend {
            MeasuredBackend::Cpu { threads } => {
                let per_thread = m.bytes as f64 / secs / 1e9 / (*threads).max(1) as f64;
                self.cpu_gbps = ema(self.cpu_gbps, per_thread);
            }
            MeasuredBackend::Gpu { kernel } => {
                let lat = self.gpu_latency_ms;
                let body = (secs * 1e3 - lat).max(secs * 1e3 * 0.1) / 1e3;
                let g = m.bytes as f64 / body / 1e9;
                // Tier 2's first run compiles its pipelines (0.47 s on the
                // H100, where a run takes 3.4 ms): it starts from the
                // planner's default and averages in, or that one run kept
                // auto off the GPU (docs/bench/h100-2026-11-24-regex.md).
                let first = super::unit_default_gbps(self, *kernel).unwrap_or(g);
                let e = self.gpu_gbps.entry(*kernel).or_insert(first);
                *e = ema(*e, g);
            }
        }
        self.samples += 1;
        // Where bytes/cpu = latency + bytes/gpu (resident): the crossover.
        let (_, g) = self.best_kernel();
        let inv = 1.0 / (self.cpu_gbps * 1e9) - 1.0 / (g * 1e9);
        if inv > 0.0 {
            let x = (self.gpu_latency_ms / 1e3 / inv) as u64;
            self.crossover_bytes = x.clamp(64 << 10, 1 << 30);
        }
    }

    fn to_json(&self) -> String {
        let kernels: Vec<String> = self
            .gpu_gbps
            .iter()
            .map(|(k, v)| format!("\"{}\":{v}", k.name()))
            .collect();
        format!(
            "{{\"cpu_gbps\":{},\"gpu_gbps\":{{{}}},\"gpu_latency_ms\":{},\"upload_gbps\":{},\"gpu_startup_ms\":{},\"crossover_bytes\":{},\"samples\":{}}}",
            self.cpu_gbps,
            kernels.join(","),
            self.gpu_latency_ms,
            self.upload_gbps,
            self.gpu_startup_ms,
            self.crossover_bytes,
            self.samples
        )
    }

    fn from_json(s: &str, class: DeviceClass) -> Option<Calibration> {
        let v: serde_json::Value = serde_json::from_str(s).ok()?;
        let f = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_f64())
                .filter(|x| x.is_finite() && *x > 0.0)
        };
        let mut c = Calibration::defaults(class);
        c.cpu_gbps = f("cpu_gbps")?;
        c.gpu_latency_ms = f("gpu_latency_ms")?;
        c.upload_gbps = f("upload_gbps")?;
        c.gpu_startup_ms = f("gpu_startup_ms")?;
        c.crossover_bytes = f("crossover_bytes")? as u64;
        c.samples = v.get("samples")?.as_u64()?;
        let ks = v.get("gpu_gbps")?.as_object()?;
        c.gpu_gbps.clear();
        for (k, x) in ks {
            let x = x.as_f64().filter(|x| x.is_finite() && *x > 0.0)?;
            // A kernel this build does not know (an older or newer
            // logsieve) is skipped, not an error.
            if let Some(k) = Kernel::from_name(k) {
                c.gpu_gbps.insert(k, x);
            }
        }
        if c.gpu_gbps.is_empty() {
            return None;
        }
        Some(c)
    }

    /// The calibration file for a device in the cache directory `dir`
    /// ([`crate::Tuning::cache_dir`]), one JSON file per device name.
    pub fn path_for(dir: &Path, device: &str) -> PathBuf {
        let safe: String = device
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        dir.join(format!("calibration-{safe}.json"))
    }

    /// Loads the calibration for `device` from `dir`; no directory or a
    /// missing file gives the defaults, a corrupt one the defaults and a
    /// warning.
    pub fn load(
        dir: Option<&Path>,
        device: &str,
        class: DeviceClass,
    ) -> (Calibration, Option<String>) {
        let Some(path) = dir.map(|d| Calibration::path_for(d, device)) else {
            return (Calibration::defaults(class), None);
        };
        match std::fs::read_to_string(&path) {
            Ok(s) => match Calibration::from_json(&s, class) {
                Some(c) => (c, None),
                None => (
                    Calibration::defaults(class),
                    Some(format!(
                        "ignoring corrupt calibration file {} (using defaults)",
                        path.display()
                    )),
                ),
            },
            Err(_) => (Calibration::defaults(class), None),
        }
    }

    /// Saves the calibration for `device` in `dir` (errors are returned,
    /// not fatal; no directory: nothing is written).
    pub fn save(&self, dir: Option<&Path>, device: &str) -> std::io::Result<()> {
        let Some(dir) = dir else {
            return Ok(());
        };
        let path = Calibration::path_for(dir, device);
        std::fs::create_dir_all(dir)?;
        // Write then rename, so a crash never leaves half a file.
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_json())?;
        std::fs::rename(tmp, path)
    }
}

/// One measured run, for [`Calibration::record`].
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Which backend ran.
    pub backend: MeasuredBackend,
    /// Bytes searched.
    pub bytes: u64,
    /// Wall time of the search.
    pub seconds: f64,
}

/// The backend of a [`Measurement`].
#[derive(Clone, Debug)]
pub enum MeasuredBackend {
    /// The CPU engine with this many threads.
    Cpu {
        /// Threads used.
        threads: usize,
    },
    /// A GPU kernel.
    Gpu {
        /// The kernel.
        kernel: Kernel,
    },
}
