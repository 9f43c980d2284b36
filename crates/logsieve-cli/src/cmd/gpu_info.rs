//! `logsieve gpu-info`: the GPU adapter, its limits and features.

use logsieve::gpu::GpuContext;

use crate::exit::{err, EXIT_ERROR};

/// Runs `logsieve gpu-info`; returns the exit code.
pub fn run() -> i32 {
    match GpuContext::new() {
        Ok(c) => {
            println!("{}", c.info());
            0
        }
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}
