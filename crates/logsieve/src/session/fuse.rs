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
//! A batch counts each distinct query once (identical parameters share a
//! pass). Where the batch holds several distinct literals of 4+ bytes
//! (case-sensitive, one document resident), one pass of a many-literal
//! kernel (`bloom`, per-pattern line counts) can count them all with one
//! read of the corpus instead of one `scan` pass each: the fuser does so
//! when its price says the pass is cheaper than the scans it replaces
//! ([`one_pass_pays`]: the scans' speed from the session's calibration,
//! the pass's from its own runs, measured like the batch's). At 200M
//! lines (38.8 GB) a `scan` pass takes ~13 ms on the H200, so 16 clients
//! with 16 literals were bound at ~77 answers/s by passes alone.
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
use crate::query::{CaseMode, Query, QueryBuilder, Syntax};

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
    /// The literal, when one many-literal pass can count it: 4+ bytes,
    /// case-sensitive (bloom's keys are 4 bytes; one fold a pass).
    lit: Option<Vec<u8>>,
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
    /// The many-literal pass's throughput over the session's corpus,
    /// GB/s as `f64` bits (0: not measured yet), folded in with weight
    /// 1/4 a run, as the calibration's kernels are.
    one_pass_gbps: AtomicU64,
}

/// Before it is measured, the many-literal pass is priced this many
/// times slower than one `scan` pass: fused only from this many literals.
const ONE_PASS_PRIOR: f64 = 4.0;

/// The fewest bytes of pattern a many-literal pass counts (`bloom`'s keys).
const ONE_PASS_MIN_LEN: usize = 4;

/// Whether one many-literal pass at `one_pass_gbps` over the corpus costs
/// less than `k` `scan` passes at `scan_gbps` (a batch's fixed costs are
/// paid once either way).
pub(crate) fn one_pass_pays(scan_gbps: f64, one_pass_gbps: f64, k: usize) -> bool {
    k >= 2 && scan_gbps > 0.0 && one_pass_gbps * k as f64 > scan_gbps
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
    shared: AtomicU64,
    one_passes: AtomicU64,
    one_pass_queries: AtomicU64,
    one_pass_ns: AtomicU64,
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
    /// Queries answered by another query of their batch with the same
    /// parameters (no pass of their own).
    pub shared: u64,
    /// Many-literal passes that counted several literals at once.
    pub one_passes: u64,
    /// Distinct literals counted by those passes.
    pub one_pass_queries: u64,
    /// Seconds of those passes (from the lead's call to the counts).
    pub one_pass_s: f64,
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
            shared: p.shared.load(Ordering::Relaxed),
            one_passes: p.one_passes.load(Ordering::Relaxed),
            one_pass_queries: p.one_pass_queries.load(Ordering::Relaxed),
            one_pass_s: s(&p.one_pass_ns),
        }
    }

    /// The many-literal pass's measured throughput, GB/s, if any.
    fn one_pass_gbps(&self) -> Option<f64> {
        let v = f64::from_bits(self.one_pass_gbps.load(Ordering::Relaxed));
        (v > 0.0).then_some(v)
    }

    /// Folds one pass's throughput in (weight 1/4).
    fn fold_one_pass(&self, gbps: f64) {
        if !(gbps.is_finite() && gbps > 0.0) {
            return;
        }
        let v = match self.one_pass_gbps() {
            Some(old) => 0.75 * old + 0.25 * gbps,
            None => gbps,
        };
        self.one_pass_gbps.store(v.to_bits(), Ordering::Relaxed);
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
        let lit = match q.literals() {
            Some([l]) if q.case() == CaseMode::Sensitive && l.len() >= ONE_PASS_MIN_LEN => {
                Some(l.clone())
            }
            _ => None,
        };
        let job = Arc::new(Job {
            prm: g.scan_params(q),
            lit,
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
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.run_batch(session, g, &live)
            }));
            match run {
                Ok(Ok(counts)) => {
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

    /// Counts every job of a batch: each distinct query once, the
    /// literals one many-literal pass can count in that pass where it
    /// pays ([`one_pass_pays`]), the rest in one submission of `scan`
    /// passes. Per job, its counters.
    fn run_batch(
        &self,
        session: &super::Session,
        g: &GpuCorpus,
        live: &[Arc<Job>],
    ) -> Result<Vec<Counts>, Error> {
        let p = &self.profile;
        // Distinct parameters, and which of them each job asked.
        let mut uniq: Vec<&Job> = Vec::new();
        let mut of = Vec::with_capacity(live.len());
        for j in live {
            match uniq.iter().position(|u| u.prm == j.prm) {
                Some(i) => {
                    of.push(i);
                    p.shared.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    of.push(uniq.len());
                    uniq.push(j);
                }
            }
        }
        let mut out: Vec<Option<Counts>> = vec![None; uniq.len()];
        let lits: Vec<usize> = (0..uniq.len()).filter(|&i| uniq[i].lit.is_some()).collect();
        let bytes = session.corpus().total_bytes();
        let scan_gbps = session
            .calibration()
            .gpu_gbps
            .get(&crate::kernel::Kernel::Scan)
            .copied()
            .unwrap_or(0.0);
        let one_gbps = self.one_pass_gbps().unwrap_or(scan_gbps / ONE_PASS_PRIOR);
        if g.one_pass_fits() && one_pass_pays(scan_gbps, one_gbps, lits.len()) {
            let pats: Vec<&[u8]> = lits
                .iter()
                .filter_map(|&i| uniq[i].lit.as_deref())
                .collect();
            let t = web_time::Instant::now();
            let set = QueryBuilder::new().syntax(Syntax::Fixed).build(&pats);
            // A set the pass cannot take is counted by scans below.
            if let Ok((cs, kernel)) =
                set.and_then(|set| g.count_in_one_pass(session.corpus(), &set))
            {
                let took = t.elapsed();
                p.one_passes.fetch_add(1, Ordering::Relaxed);
                p.one_pass_queries
                    .fetch_add(lits.len() as u64, Ordering::Relaxed);
                add(&p.one_pass_ns, took);
                // Priced by its kernel's time where timestamps give it:
                // the first pass's wall time holds the kernel's pipeline
                // builds (0.61 s for 13 literals over 194 MB on the H200,
                // 2026-12-01), which would price it out for good.
                let secs = kernel.unwrap_or(took).as_secs_f64().max(1e-9);
                self.fold_one_pass(bytes as f64 / secs / 1e9);
                for (&i, c) in lits.iter().zip(cs) {
                    out[i] = Some(c);
                }
            }
        }
        let rest: Vec<usize> = (0..uniq.len()).filter(|&i| out[i].is_none()).collect();
        if !rest.is_empty() {
            let prms: Vec<ScanParams> = rest.iter().map(|&i| uniq[i].prm).collect();
            let (counts, t) = g.count_batch(&prms)?;
            p.batches.fetch_add(1, Ordering::Relaxed);
            p.queries.fetch_add(prms.len() as u64, Ordering::Relaxed);
            add(&p.lock_ns, t.lock);
            add(&p.encode_ns, t.encode);
            add(&p.submit_ns, t.submit);
            add(&p.wait_ns, t.wait);
            add(&p.read_ns, t.read);
            // The batch's throughput: its passes' bytes over its time on
            // the device (the latency is paid once). A query's own wall
            // time includes its wait in the queue and would make the GPU
            // look slow under load.
            session.record(&crate::planner::Measurement {
                backend: crate::planner::MeasuredBackend::Gpu {
                    kernel: crate::kernel::Kernel::Scan,
                },
                bytes: bytes * prms.len() as u64,
                seconds: (t.encode + t.submit + t.wait + t.read).as_secs_f64(),
            });
            for (&i, c) in rest.iter().zip(counts) {
                out[i] = Some(c);
            }
        }
        of.iter()
            .map(|&i| {
                out[i]
                    .clone()
                    .ok_or_else(|| Error::backend("fused GPU count: a query was not counted"))
            })
            .collect()
    }
}

impl super::Session {
    /// Test hook: counts `queries` (each one case-sensitive literal of 4+
    /// bytes) in one many-literal pass, as a batch of the fuser does when
    /// that pays, and answers each as its own search would (`-v`, `-m`
    /// applied): the selected lines per document.
    #[doc(hidden)]
    pub fn count_in_one_pass_batch(
        &self,
        queries: &[&Query],
        max_count: Option<u64>,
    ) -> Result<Vec<Vec<u64>>, Error> {
        let Some(g) = self.gpu() else {
            return Err(Error::backend("no GPU attached"));
        };
        let mut pats: Vec<&[u8]> = Vec::new();
        for q in queries {
            match q.literals() {
                Some([l])
                    if g.can_fuse(q)
                        && q.case() == CaseMode::Sensitive
                        && l.len() >= ONE_PASS_MIN_LEN =>
                {
                    pats.push(l)
                }
                _ => {
                    return Err(Error::backend(format!(
                        "{:?} cannot share a many-literal pass",
                        q.patterns()
                    )))
                }
            }
        }
        let set = QueryBuilder::new().syntax(Syntax::Fixed).build(&pats)?;
        let (counts, _) = g.count_in_one_pass(self.corpus(), &set)?;
        Ok(queries
            .iter()
            .zip(&counts)
            .map(|(q, c)| {
                g.finish_count(self.corpus(), q, c, max_count)
                    .iter()
                    .map(|d| d.count)
                    .collect()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::one_pass_pays;

    #[test]
    fn one_pass_is_priced_against_the_scans_it_replaces() {
        // A pass a quarter of scan's speed pays from five literals.
        assert!(!one_pass_pays(3000.0, 750.0, 4));
        assert!(one_pass_pays(3000.0, 750.0, 5));
        // A pass as fast as a scan pays from two; one literal never.
        assert!(one_pass_pays(3000.0, 3000.0, 2));
        assert!(!one_pass_pays(3000.0, 3000.0, 1));
        // No scan measurement, no price: scans.
        assert!(!one_pass_pays(0.0, 100.0, 16));
    }
}
