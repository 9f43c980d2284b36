//! `GET /metrics`: Prometheus text exposition, counted by hand (a few
//! counters and one histogram do not need a metrics crate).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Latency bucket bounds, seconds: 0.1 ms (a resident GPU count) to 10 s.
const BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.0, 10.0,
];

/// The server's counters.
#[derive(Default)]
pub struct Metrics {
    /// (kind, backend) → answered queries.
    queries: Mutex<BTreeMap<(String, String), u64>>,
    /// error kind → answers.
    errors: Mutex<BTreeMap<String, u64>>,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_ns: AtomicU64,
}

/// What the metrics page shows besides the counters.
pub struct Gauges {
    /// Bytes of the corpus in host memory.
    pub host_bytes: u64,
    /// Bytes resident on the GPU (0 without one).
    pub gpu_bytes: u64,
    /// Load progress, 0..=1.
    pub progress: f64,
    /// 1 once ready.
    pub ready: bool,
    /// Queries running now.
    pub in_flight: u64,
}

/// The backend label: `cpu` or `gpu` (the kernel would multiply series).
pub fn backend_label(name: &str) -> &str {
    name.split(['/', ' ']).next().unwrap_or(name)
}

impl Metrics {
    /// Counts an answered query of `kind` on `backend` that took `took`.
    pub fn query(&self, kind: &str, backend: &str, took: Duration) {
        *self
            .queries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((kind.to_string(), backend_label(backend).to_string()))
            .or_default() += 1;
        let s = took.as_secs_f64();
        for (b, c) in BUCKETS.iter().zip(&self.buckets) {
            if s <= *b {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns
            .fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Queries answered so far (every kind).
    pub fn answered(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Counts an error answer.
    pub fn error(&self, kind: &str) {
        *self
            .errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(kind.to_string())
            .or_default() += 1;
    }

    /// The exposition text.
    pub fn render(&self, g: &Gauges) -> String {
        let mut s = String::new();
        s.push_str("# HELP logsieve_queries_total Queries answered, by kind and backend.\n");
        s.push_str("# TYPE logsieve_queries_total counter\n");
        for ((kind, backend), n) in self
            .queries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                s,
                "logsieve_queries_total{{kind=\"{kind}\",backend=\"{backend}\"}} {n}"
            );
        }
        s.push_str("# HELP logsieve_errors_total Error answers, by kind.\n");
        s.push_str("# TYPE logsieve_errors_total counter\n");
        for (kind, n) in self.errors.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = writeln!(s, "logsieve_errors_total{{kind=\"{kind}\"}} {n}");
        }
        s.push_str("# HELP logsieve_query_seconds Query latency (search phase, server side).\n");
        s.push_str("# TYPE logsieve_query_seconds histogram\n");
        for (b, c) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                s,
                "logsieve_query_seconds_bucket{{le=\"{b}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(s, "logsieve_query_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            s,
            "logsieve_query_seconds_sum {}",
            self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9
        );
        let _ = writeln!(s, "logsieve_query_seconds_count {count}");
        s.push_str("# HELP logsieve_resident_bytes Corpus bytes held, by memory.\n");
        s.push_str("# TYPE logsieve_resident_bytes gauge\n");
        let _ = writeln!(
            s,
            "logsieve_resident_bytes{{memory=\"host\"}} {}",
            g.host_bytes
        );
        let _ = writeln!(
            s,
            "logsieve_resident_bytes{{memory=\"gpu\"}} {}",
            g.gpu_bytes
        );
        s.push_str("# HELP logsieve_load_progress Loading progress, 0 to 1.\n");
        s.push_str("# TYPE logsieve_load_progress gauge\n");
        let _ = writeln!(s, "logsieve_load_progress {}", g.progress);
        s.push_str("# HELP logsieve_ready 1 once the corpus answers queries.\n");
        s.push_str("# TYPE logsieve_ready gauge\n");
        let _ = writeln!(s, "logsieve_ready {}", u8::from(g.ready));
        s.push_str("# HELP logsieve_in_flight Queries running now.\n");
        s.push_str("# TYPE logsieve_in_flight gauge\n");
        let _ = writeln!(s, "logsieve_in_flight {}", g.in_flight);
        s
    }
}

/// The session's routes ([`logsieve::session::MemoCounts`]): how many came
/// from the route memo (a repeated request on an unchanged corpus) and how
/// many were planned.
pub fn render_routes(s: &mut String, c: logsieve::session::MemoCounts) {
    s.push_str("# HELP logsieve_routes_total Routes chosen, by whether the route memo kept them or the routing point planned them.\n");
    s.push_str("# TYPE logsieve_routes_total counter\n");
    let _ = writeln!(s, "logsieve_routes_total{{memo=\"kept\"}} {}", c.memoised);
    let _ = writeln!(s, "logsieve_routes_total{{memo=\"planned\"}} {}", c.planned);
}

/// The session's fused GPU counts (`logsieve::session::FusionProfile`):
/// submissions, queries counted in them, and where their time went, by
/// step — what a GPU count spends besides its kernel.
pub fn render_fusion(s: &mut String, p: &logsieve::session::FusionProfile) {
    s.push_str(
        "# HELP logsieve_gpu_fused_submissions_total GPU submissions of fused literal counts.\n",
    );
    s.push_str("# TYPE logsieve_gpu_fused_submissions_total counter\n");
    let _ = writeln!(s, "logsieve_gpu_fused_submissions_total {}", p.batches);
    s.push_str(
        "# HELP logsieve_gpu_fused_queries_total Literal counts answered by those submissions.\n",
    );
    s.push_str("# TYPE logsieve_gpu_fused_queries_total counter\n");
    let _ = writeln!(s, "logsieve_gpu_fused_queries_total {}", p.queries);
    s.push_str("# HELP logsieve_gpu_fused_shared_total Fused counts answered by an identical query's pass in their batch.\n");
    s.push_str("# TYPE logsieve_gpu_fused_shared_total counter\n");
    let _ = writeln!(s, "logsieve_gpu_fused_shared_total {}", p.shared);
    s.push_str("# HELP logsieve_gpu_one_passes_total Many-literal passes that counted several fused literals with one read of the corpus.\n");
    s.push_str("# TYPE logsieve_gpu_one_passes_total counter\n");
    let _ = writeln!(s, "logsieve_gpu_one_passes_total {}", p.one_passes);
    s.push_str(
        "# HELP logsieve_gpu_one_pass_literals_total Distinct literals those passes counted.\n",
    );
    s.push_str("# TYPE logsieve_gpu_one_pass_literals_total counter\n");
    let _ = writeln!(
        s,
        "logsieve_gpu_one_pass_literals_total {}",
        p.one_pass_queries
    );
    s.push_str("# HELP logsieve_gpu_one_pass_seconds_total Time of those passes.\n");
    s.push_str("# TYPE logsieve_gpu_one_pass_seconds_total counter\n");
    let _ = writeln!(s, "logsieve_gpu_one_pass_seconds_total {}", p.one_pass_s);
    s.push_str("# HELP logsieve_gpu_fused_seconds_total Time of fused counts by step: queued (each query, until its submission starts), lock, encode, submit, wait (kernels and polling), read (per submission), finish (each query).\n");
    s.push_str("# TYPE logsieve_gpu_fused_seconds_total counter\n");
    for (step, v) in [
        ("queued", p.queued_s),
        ("lock", p.lock_s),
        ("encode", p.encode_s),
        ("submit", p.submit_s),
        ("wait", p.wait_s),
        ("read", p.read_s),
        ("finish", p.finish_s),
    ] {
        let _ = writeln!(s, "logsieve_gpu_fused_seconds_total{{step=\"{step}\"}} {v}");
    }
}

/// Count requests answered by a concurrent run of the same count
/// (`logsieve::Session::coalesced_counts`).
pub fn render_coalesced(s: &mut String, n: u64) {
    s.push_str("# HELP logsieve_counts_coalesced_total Count requests answered by a concurrent run of the same count (same query, options and route).\n");
    s.push_str("# TYPE logsieve_counts_coalesced_total counter\n");
    let _ = writeln!(s, "logsieve_counts_coalesced_total {n}");
}
