//! Fused GPU counts: single-literal count requests that arrive while the
//! device is busy share one submission.
//!
//! A GPU count takes ~0.12 ms end to end on the H100 (194 MB), of which
//! the `scan` kernel is ~0.075 ms; the rest — encoding, the submission,
//! polling until the readback maps, the state lock handed from thread to
//! thread — is paid once per submission. Requests take turns on the
//! device, so with 64 clients that fixed part was paid 64 times over
//! (2,794-3,329 requests/s, docs/bench/h100-2026-11-24-serve.md). Here the
//! first request to find no submission under way leads: it counts its own
//! query and whatever is queued by then (at most [`MAX_BATCH`]) in one
//! submission (`GpuCorpus::count_batch`), hands each waiting request its
//! counters, and passes the lead to the next queued request, if any. No
//! request waits for a window to fill: alone, a request is a batch of one,
//! as before.
//!
//! Every answer is its own query's: the batch returns each query's
//! counters; the requester adds the CPU's oversized segments and applies
//! `-v` and `-m` itself. A request whose token fires while queued is
//! dropped from the batch. `GpuTuning::no_fuse` (`LOGSIEVE_NO_FUSE=1`)
//! turns fusion off (the before/after switch of the benchmark).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::cancel::Cancel;
use crate::error::Error;
use crate::gpu::{GpuCorpus, GpuSearch, ScanParams};
use crate::query::Query;

/// Queries in one submission at most: 64 scans of 194 MB are ~5 ms of
/// kernel time on the H100, as long as a request should wait behind others.
pub(crate) const MAX_BATCH: usize = 64;

type Counts = Vec<[u32; 4]>;

enum JobState {
    Waiting,
    /// Leads the next batch (the lead was handed over).
    Lead,
    Done(Result<Counts, Error>),
    Taken,
}

struct Job {
    prm: ScanParams,
    queued_at: web_time::Instant,
    cancel: Cancel,
    state: Mutex<JobState>,
    cv: Condvar,
}

impl Job {
    fn set(&self, s: JobState) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = s;
        self.cv.notify_one();
    }
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Arc<Job>>,
    /// A request leads (is running a batch, or was handed the lead).
    leading: bool,
}

/// The fuser of one session's GPU counts, and its profile.
#[derive(Default)]
pub(crate) struct Fuser {
    queue: Mutex<Queue>,
    profile: Profile,
}

/// Sums over every fused submission, nanoseconds (see
/// [`FusionProfile`]).
#[derive(Default)]
struct Profile {
    batches: AtomicU64,
    queries: AtomicU64,
    queued_ns: AtomicU64,
    lock_ns: AtomicU64,
    encode_ns: AtomicU64,
    submit_ns: AtomicU64,
    wait_ns: AtomicU64,
    read_ns: AtomicU64,
    finish_ns: AtomicU64,
}

/// Where fused GPU counts spent their time, summed since the session
/// started ([`crate::Session::fusion_profile`]): per submission (lock,
/// encode, submit, wait, read) and per query (queued, finish).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FusionProfile {
    /// Submissions.
    pub batches: u64,
    /// Queries counted in them (`queries / batches`: the mean batch).
    pub queries: u64,
    /// Seconds queries waited for their batch to start (queued behind
    /// the running one).
    pub queued_s: f64,
    /// Seconds waiting for the corpus's state lock (a non-fused search).
    pub lock_s: f64,
    /// Seconds recording the passes.
    pub encode_s: f64,
    /// Seconds in `Queue::submit`.
    pub submit_s: f64,
    /// Seconds from the submission to the readback mapped (kernels and
    /// polling).
    pub wait_s: f64,
    /// Seconds reading the counters.
    pub read_s: f64,
    /// Seconds turning counters into answers (each requester's own).
    pub finish_s: f64,
}

fn add(a: &AtomicU64, d: std::time::Duration) {
    a.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
}

impl Fuser {
    /// The profile so far.
    pub(crate) fn profile(&self) -> FusionProfile {
        let p = &self.profile;
        let s = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e9;
        FusionProfile {
            batches: p.batches.load(Ordering::Relaxed),
            queries: p.queries.load(Ordering::Relaxed),
            queued_s: s(&p.queued_ns),
            lock_s: s(&p.lock_ns),
            encode_s: s(&p.encode_ns),
            submit_s: s(&p.submit_ns),
            wait_s: s(&p.wait_ns),
            read_s: s(&p.read_ns),
            finish_s: s(&p.finish_ns),
        }
    }

    /// Counts `q` on `g` (which [`GpuCorpus::can_fuse`]), sharing a
    /// submission with the counts queued meanwhile; blocks until answered.
    pub(crate) fn count(
        &self,
        session: &super::Session,
        g: &GpuCorpus,
        q: &Query,
        max_count: Option<u64>,
        cancel: &Cancel,
    ) -> Result<GpuSearch, Error> {
        cancel.check()?;
        let t0 = web_time::Instant::now();
        let job = Arc::new(Job {
            prm: g.scan_params(q),
            queued_at: t0,
            cancel: cancel.clone(),
            state: Mutex::new(JobState::Waiting),
            cv: Condvar::new(),
        });
        let lead_now = {
            let mut qu = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            qu.jobs.push_back(Arc::clone(&job));
            !std::mem::replace(&mut qu.leading, true)
        };
        let mut lead = lead_now;
        if !lead {
            let mut st = job.state.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                match &*st {
                    JobState::Waiting => {
                        st = job.cv.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                    JobState::Lead => {
                        lead = true;
                        break;
                    }
                    JobState::Done(_) | JobState::Taken => break,
                }
            }
        }
        if lead {
            self.lead(session, g);
        }
        let counts = {
            let mut st = job.state.lock().unwrap_or_else(|p| p.into_inner());
            match std::mem::replace(&mut *st, JobState::Taken) {
                JobState::Done(r) => r?,
                _ => return Err(Error::backend("fused GPU count: no answer (internal)")),
            }
        };
        let tf = web_time::Instant::now();
        let docs = g.finish_count(session.corpus(), q, &counts, max_count);
        add(&self.profile.finish_ns, tf.elapsed());
        Ok(GpuSearch {
            docs,
            kernel_time: None,
            end_to_end: t0.elapsed(),
            candidates: None,
            positions: None,
        })
    }

    /// Runs one batch (the queue's first [`MAX_BATCH`] jobs, the leader's
    /// own among them: it is first in the queue when it leads), answers
    /// every job of it, then hands the lead to the next queued job or
    /// gives it up.
    fn lead(&self, session: &super::Session, g: &GpuCorpus) {
        let batch: Vec<Arc<Job>> = {
            let mut qu = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            let n = qu.jobs.len().min(MAX_BATCH);
            qu.jobs.drain(..n).collect()
        };
        // Requests cancelled while queued are answered at once, unsearched.
        let (live, gone): (Vec<Arc<Job>>, Vec<Arc<Job>>) =
            batch.into_iter().partition(|j| !j.cancel.is_cancelled());
        for j in gone {
            j.set(JobState::Done(Err(Error::cancelled())));
        }
        for j in &live {
            add(&self.profile.queued_ns, j.queued_at.elapsed());
        }
        if !live.is_empty() {
            let prms: Vec<ScanParams> = live.iter().map(|j| j.prm).collect();
            let run =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.count_batch(&prms)));
            match run {
                Ok(Ok((counts, t))) => {
                    let p = &self.profile;
                    p.batches.fetch_add(1, Ordering::Relaxed);
                    p.queries.fetch_add(live.len() as u64, Ordering::Relaxed);
                    add(&p.lock_ns, t.lock);
                    add(&p.encode_ns, t.encode);
                    add(&p.submit_ns, t.submit);
                    add(&p.wait_ns, t.wait);
                    add(&p.read_ns, t.read);
                    // The batch's throughput: its queries' bytes over its
                    // time on the device (the latency is paid once). A
                    // query's own wall time includes its wait in the queue
                    // and would make the GPU look slow under load.
                    let k = live.len() as u64;
                    session.record(&crate::planner::Measurement {
                        backend: crate::planner::MeasuredBackend::Gpu {
                            kernel: crate::kernel::Kernel::Scan,
                        },
                        bytes: session.corpus().total_bytes() * k,
                        seconds: (t.encode + t.submit + t.wait + t.read).as_secs_f64(),
                    });
                    for (j, c) in live.iter().zip(counts) {
                        j.set(JobState::Done(Ok(c)));
                    }
                }
                Ok(Err(e)) => {
                    let m = e.to_string();
                    for j in &live {
                        j.set(JobState::Done(Err(Error::backend(m.clone()))));
                    }
                }
                Err(_) => {
                    for j in &live {
                        j.set(JobState::Done(Err(Error::backend(
                            "fused GPU count failed (a panic in the GPU backend)",
                        ))));
                    }
                }
            }
        }
        let next = {
            let mut qu = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            match qu.jobs.front() {
                Some(j) => Some(Arc::clone(j)),
                None => {
                    qu.leading = false;
                    None
                }
            }
        };
        if let Some(j) = next {
            j.set(JobState::Lead);
        }
    }
}
