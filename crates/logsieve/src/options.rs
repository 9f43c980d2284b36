//! Options a caller passes in: per query ([`SearchOptions`]) and per
//! process ([`Tuning`]). The library reads no environment variable; front
//! ends fill these from flags and, where they choose, from the environment
//! ([`Tuning::from_env`]).

pub use crate::cpu::multi::CpuMulti;
use crate::kernel::Kernel;
use crate::results::Want;

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Let the routing point decide.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU engine (an error if it cannot run the query).
    Gpu,
}

/// Options for one search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    /// Which backend.
    pub backend: BackendChoice,
    /// CPU threads for one document; 0 means all cores.
    pub threads: usize,
    /// Count only, or the line ids too.
    pub want: Want,
    /// Stop after this many selected lines per document (`-m`).
    pub max_count: Option<u64>,
    /// Gather the planner's informational factors too (`--explain`).
    pub explain: bool,
    /// The GPU kernel (`--gpu-kernel`); `None` picks the best for the
    /// query's shape.
    pub gpu_kernel: Option<Kernel>,
    /// With [`Want::Lines`]: line ids wanted. False lets the CPU engine
    /// give only the selected lines' starts (`DocHits::starts`, `lines`
    /// empty) and skip counting newlines, for a printer that prints no line
    /// numbers (rg counts lines only for `-n`). Other backends may still
    /// give ids.
    pub line_ids: bool,
    /// Which documents and which time window the request is about
    /// (everything by default); every backend answers over it alone.
    pub scope: crate::Scope,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            backend: BackendChoice::Auto,
            threads: 1,
            want: Want::Lines,
            max_count: None,
            explain: false,
            gpu_kernel: None,
            line_ids: true,
            scope: crate::Scope::default(),
        }
    }
}

/// Process-wide tuning and diagnostics, read once at the edge.
#[derive(Clone, Debug, Default)]
pub struct Tuning {
    /// The CPU many-literal matcher (`LOGSIEVE_CPU_MULTI=ac|prefix`).
    pub cpu_multi: CpuMulti,
    /// Where the planner keeps its calibration (`LOGSIEVE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/logsieve`, else `~/.cache/logsieve`); `None`: no
    /// calibration file is read or written.
    pub cache_dir: Option<std::path::PathBuf>,
    /// The GPU backend's switches.
    #[cfg(feature = "gpu")]
    pub gpu: crate::gpu::GpuTuning,
}

impl Tuning {
    /// The tuning the environment asks for: `LOGSIEVE_CPU_MULTI`,
    /// `LOGSIEVE_CACHE_DIR` / `XDG_CACHE_HOME` / `HOME`, and the GPU's
    /// `LOGSIEVE_*` switches. Front ends call this; the library never does.
    pub fn from_env() -> Tuning {
        use std::path::PathBuf;
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let cache_dir = var("LOGSIEVE_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("logsieve")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("logsieve")));
        let cpu_multi = match std::env::var("LOGSIEVE_CPU_MULTI").as_deref() {
            Ok("ac") => CpuMulti::AhoCorasick,
            Ok("prefix") => CpuMulti::PrefixHash,
            _ => CpuMulti::Auto,
        };
        Tuning {
            cpu_multi,
            cache_dir,
            #[cfg(feature = "gpu")]
            gpu: crate::gpu::GpuTuning::from_env(),
        }
    }
}
