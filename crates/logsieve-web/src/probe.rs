//! The speeds the page's routes are planned with, measured in the tab
//! after an upload ([`probe`]).

use std::rc::Rc;

use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gpu::{GpuCorpus, GpuKernel};
use logsieve::planner::{MeasuredBackend, Measurement};
use logsieve::{Corpus, Document, QueryBuilder, Syntax, Want};

use crate::engine::now_ms;

/// The literal a probe searches for: no log line holds it.
const PROBE: &str = "\u{1}logsieve probe\u{1}";

/// Bytes of the corpus the CPU half of a probe searches.
const PROBE_CPU_BYTES: usize = 8 << 20;

/// Times the resident corpus's `scan` (best of three after a first run,
/// which compiles) and the page's one-thread CPU engine over the first
/// 8 MiB, on a literal no line holds, for
/// [`crate::WebEngine::adopt_probe`].
/// WebGPU names no adapter's class, so only a measurement tells a GPU
/// from a slow one: on an NVIDIA H200 the class's defaults (a software
/// device's) kept every search on the CPU at 150-580 ms for 1M lines
/// where `scan` took 5-9 ms (2026-12-01, Chromium 156).
pub async fn probe(g: Rc<GpuCorpus>, corpus: Rc<Corpus>) -> Result<Vec<Measurement>, String> {
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&[PROBE])
        .map_err(|e| e.to_string())?;
    let bytes = corpus.total_bytes();
    let mut best = f64::INFINITY;
    for i in 0..4 {
        let t0 = now_ms();
        g.search_async(&corpus, &q, GpuKernel::Scan, Want::Count, None)
            .await
            .map_err(|e| e.to_string())?;
        if i > 0 {
            best = best.min(now_ms() - t0);
        }
    }
    let mut sample = Vec::with_capacity(PROBE_CPU_BYTES.min(bytes as usize));
    for d in corpus.docs() {
        let room = PROBE_CPU_BYTES - sample.len();
        if room == 0 {
            break;
        }
        let data = d.data();
        let take = if data.len() <= room {
            data.len()
        } else {
            // Cut after the last whole line that fits.
            data[..room]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(room, |i| i + 1)
        };
        sample.extend_from_slice(&data[..take]);
        if !sample.ends_with(b"\n") {
            sample.push(b'\n');
        }
    }
    let doc = Document::from_bytes("probe", sample);
    let opts = CpuOptions {
        threads: 1,
        want: Want::Count,
        max_count: None,
        line_ids: false,
    };
    let t0 = now_ms();
    search_doc(&doc, &q, &opts);
    let cpu_ms = now_ms() - t0;
    Ok(vec![
        Measurement {
            backend: MeasuredBackend::Cpu { threads: 1 },
            bytes: doc.data().len() as u64,
            seconds: cpu_ms / 1e3,
        },
        Measurement {
            backend: MeasuredBackend::Gpu {
                kernel: GpuKernel::Scan,
            },
            bytes,
            seconds: best / 1e3,
        },
    ])
}
