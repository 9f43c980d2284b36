//! `--gpus` and `--gpu-memory`: which GPUs a search opens and how much of
//! their memory the corpus may take (the rest stays in host memory,
//! searched by the CPU). One group, flattened into `search` and `stats`.

use clap::Args;
use logsieve::gpu::{parse_size, GpuSelection};

use super::heading;

/// The GPUs and their memory budget.
#[derive(Args, Debug, Clone, Default)]
pub struct GpuArgs {
    /// GPUs to spread the corpus over: all, a count N, or indices.
    ///
    /// `all`: every discrete GPU, else the best adapter; a count N; or
    /// adapter indices such as `0,2` (see `logsieve gpu-info`). A count
    /// above the adapters found opens adapters again, each as its own
    /// device.
    #[arg(
        long,
        value_name = "all|N|LIST",
        value_parser = GpuSelection::parse,
        help_heading = heading::ENGINE
    )]
    pub gpus: Option<GpuSelection>,

    /// GPU memory the corpus may take over all GPUs (512M, 40G).
    ///
    /// K, M, G, T: powers of 1024. The newest lines go to the GPUs; the
    /// rest stays in host memory and the CPU searches it alongside.
    /// Default: what the GPUs hold.
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = parse_size,
        help_heading = heading::ENGINE
    )]
    pub gpu_memory: Option<u64>,
}

impl GpuArgs {
    /// `tuning` with these flags applied over the environment's
    /// (`LOGSIEVE_GPUS`, `LOGSIEVE_GPU_MEMORY`).
    pub fn tuned(&self, tuning: &logsieve::Tuning) -> logsieve::Tuning {
        let mut t = tuning.clone();
        if let Some(g) = &self.gpus {
            t.gpu.gpus = g.clone();
        }
        if let Some(m) = self.gpu_memory {
            t.gpu.gpu_memory = Some(m);
        }
        t
    }
}
