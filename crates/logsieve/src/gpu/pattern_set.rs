//! A search for a set of literals, and per-pattern counts: the
//! many-literal driver ([`LiteralSet`], `kernels/multi_common.rs`) run
//! over the resident segments like any other kernel, reusing the result
//! bit sets, the pop-count and the readback; the per-pattern counters are
//! the driver's own readback. Oversized lines and self-overlapping
//! patterns' occurrences are counted on the CPU.

use std::sync::{Arc, Mutex, Weak};

use web_time::Instant;

use super::context::Ctx;
use super::corpus::{GpuCorpus, State};
use super::kernels::multi_common::{self, CountersRead, LiteralSet, MultiPipes, Uploaded};
use super::multi::MultiKernel;
use super::readback::{PerSegment, RawHits};
use super::run::{GpuJob, Readout};
use super::search::GpuSearch;
use crate::corpus::Corpus;
use crate::cpu::multi::{count_range, GroupCounts, Occurrences, PatternSet};
use crate::error::Error;
use crate::query::Query;
use crate::results::Want;

/// A pattern set's GPU tables, built and uploaded once per device and
/// kernel and then kept for as long as the set lives (a watchlist's,
/// [`crate::watchlist`]): a 10k-pattern set's tables take tens of ms to
/// build on the host, ten times a 1M-line corpus's kernel time.
#[derive(Default)]
pub struct PreparedTables {
    held: Mutex<Vec<(Weak<Ctx>, Arc<Uploaded>)>>,
}

impl std::fmt::Debug for PreparedTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedTables({} uploaded)", self.uploaded())
    }
}

impl PreparedTables {
    /// Tables uploaded and held (one per device and kernel).
    pub fn uploaded(&self) -> usize {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.retain(|(w, _)| w.strong_count() > 0);
        h.len()
    }

    /// The tables of `q` for `kernel` (resolved) on context `c`: the held
    /// ones, else built, uploaded and held.
    fn get(
        &self,
        c: &Arc<Ctx>,
        pipes: &MultiPipes,
        q: &Query,
        kernel: MultiKernel,
        max_binding: u64,
    ) -> Result<Arc<Uploaded>, Error> {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.retain(|(w, _)| w.strong_count() > 0);
        if let Some((_, u)) = h
            .iter()
            .find(|(w, u)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(c)) && u.kernel == kernel)
        {
            return Ok(u.clone());
        }
        let u = pipes.upload(c, q, kernel, max_binding)?;
        h.push((Arc::downgrade(c), u.clone()));
        Ok(u)
    }

    /// Drops the tables held for `c` (after a failed run).
    fn forget(&self, c: &Arc<Ctx>) {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.retain(|(w, _)| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), Arc::as_ptr(c)));
    }
}

/// Per-pattern counts from one device, with how they were read.
pub(crate) struct PerPatternCounts {
    pub(crate) lines: Vec<u64>,
    pub(crate) occurrences: Vec<u64>,
    /// The pass's time (GPU timestamps, where the device has them).
    pub(crate) kernel_time: Option<std::time::Duration>,
    pub(crate) how: CountersHow,
}

/// How per-pattern counters came back from the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CountersHow {
    /// Only the patterns that hit, listed on the GPU (this many groups).
    Listed(usize),
    /// Every counter: `listed` groups hit, more than the list's readback
    /// held (a second round trip); `None`: the list is off
    /// (`GpuTuning::pattern_list` 0).
    Full { listed: Option<usize> },
}

impl std::fmt::Display for CountersHow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountersHow::Listed(n) => write!(f, "{n} patterns hit, listed on the GPU"),
            CountersHow::Full { listed: Some(n) } => write!(
                f,
                "{n} patterns hit, more than the list read back held: every counter read"
            ),
            CountersHow::Full { listed: None } => write!(f, "every counter read (list off)"),
        }
    }
}

/// Errors unless `kernel` runs `q` ([`crate::support::kernel_support`]):
/// for the entry points that no route planned.
pub(crate) fn check_multi(q: &Query, kernel: MultiKernel) -> Result<(), Error> {
    crate::support::kernel_support(q, Some(kernel.into()))
        .map(|_| ())
        .map_err(|r| Error::backend(format!("the GPU cannot run this query: {r}")))
}

/// What one multi-literal run read back.
pub(crate) struct Run {
    /// Per segment: [matching lines, .., .., ..].
    counts: Vec<[u32; 4]>,
    /// Per segment: matching line ids (with `lines`).
    seg_lines: Option<Vec<Vec<u64>>>,
    /// With per-pattern counts: the groups that hit, or every counter.
    pub(crate) pcounts: Option<CountersRead>,
    pub(crate) kernel_time: Option<std::time::Duration>,
}

impl GpuCorpus {
    /// [`GpuCorpus::search_max`] for the multi-literal kernels.
    pub(crate) async fn search_multi(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let lines = want == Want::Lines;
        let (_, run) = self
            .run_multi(corpus, q, kernel, lines, false, None)
            .await?;
        let raw = self.collect(corpus, q, PerSegment::new(&run.counts, run.seg_lines));
        Ok((
            raw,
            GpuSearch {
                docs: Vec::new(),
                kernel_time: run.kernel_time,
                end_to_end: t0.elapsed(),
                candidates: None,
                positions: None,
            },
        ))
    }

    /// Lines containing each pattern of `q`, and its non-overlapping
    /// occurrences, counted on the GPU with `kernel` (the module
    /// [`crate::pattern_counts`] defines them; `bloom` runs `ac` for
    /// patterns shorter than 4 bytes). Blocks (natively only).
    pub fn count_per_pattern(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        self.check_whole()?;
        self.count_per_pattern_part(corpus, q, kernel, None)
    }

    /// Builds and uploads `q`'s tables for `kernel` into `prepared` now
    /// (a watchlist, when it is defined), so that its first count does not
    /// pay for them.
    pub fn prepare_tables(
        &self,
        q: &Query,
        kernel: MultiKernel,
        prepared: &PreparedTables,
    ) -> Result<(), Error> {
        check_multi(q, kernel)?;
        let c = &self.ctx.inner;
        let max_binding = c
            .info
            .max_storage_buffer_binding_size
            .min(c.info.max_buffer_size);
        let pipes = multi_common::pipes(&self.ctx)?;
        prepared.get(c, &pipes, q, kernel.for_query(q), max_binding)?;
        Ok(())
    }

    /// [`GpuCorpus::count_per_pattern`] over the lines this corpus holds
    /// (a shard's counts add up with the other parts'), with the tables
    /// held in `prepared` when given (built and kept there on first use).
    pub(crate) fn count_per_pattern_part(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        prepared: Option<&PreparedTables>,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        self.count_per_pattern_timed(corpus, q, kernel, prepared)
            .map(|c| (c.lines, c.occurrences))
    }

    /// [`GpuCorpus::count_per_pattern_part`], with the kernel time and how
    /// the counters came back.
    pub(crate) fn count_per_pattern_timed(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        prepared: Option<&PreparedTables>,
    ) -> Result<PerPatternCounts, Error> {
        check_multi(q, kernel)?;
        let t0 = Instant::now();
        let (up, run) =
            pollster::block_on(self.run_multi(corpus, q, kernel, false, true, prepared))?;
        let t_run = t0.elapsed();
        let tables = &up.tables;
        let set = &tables.set;
        let (g, n) = (set.uniq.len(), set.group_of.len());
        let Some(read) = run.pcounts else {
            return Err(Error::backend("per-pattern counters were not read back"));
        };
        let how;
        // Per group, when the CPU has a share (oversized lines,
        // self-overlapping occurrences); else per pattern directly.
        let mut groups: Option<(GroupCounts, Vec<usize>)> = None;
        let (mut lines, mut occs) = (vec![0u64; n], vec![0u64; n]);
        match read {
            // The common case: the patterns that hit, scattered into
            // zeroed per-pattern vectors. Before the list, the full
            // counters (500,000 words at 100k patterns) took 0.6-0.8 ms
            // to read back and 0.5-0.9 ms to turn into counts on the H100
            // machine (docs/bench/h100-2026-11-25-eviction.md §2).
            CountersRead::Listed(listed) => {
                how = CountersHow::Listed(listed.len());
                let flagged: Vec<usize> = listed
                    .iter()
                    .filter(|e| e.flagged)
                    .map(|e| e.group as usize)
                    .collect();
                if self.cpu_segs.is_empty() && flagged.is_empty() {
                    for e in &listed {
                        for p in tables.patterns_of(e.group) {
                            lines[p] = e.lines;
                            occs[p] = e.occurrences;
                        }
                    }
                } else {
                    let mut c = GroupCounts::zero(g);
                    for e in &listed {
                        c.lines[e.group as usize] = e.lines;
                        c.occurrences[e.group as usize] = e.occurrences;
                    }
                    groups = Some((c, flagged));
                }
            }
            CountersRead::Full { words: pc, listed } => {
                how = CountersHow::Full { listed };
                let w = |i: usize| u64::from(pc[i]) | (u64::from(pc[i + 1]) << 32);
                let flagged: Vec<usize> = (0..g).filter(|&k| pc[4 * g + k] != 0).collect();
                let mut c = GroupCounts::zero(g);
                for k in 0..g {
                    c.lines[k] = w(4 * k);
                    c.occurrences[k] = w(4 * k + 2);
                }
                groups = Some((c, flagged));
            }
        }
        if let Some((mut c, flagged)) = groups {
            self.correct_on_cpu(corpus, q, set, &flagged, &mut c);
            for (p, &k) in set.group_of.iter().enumerate() {
                lines[p] = c.lines[k as usize];
                occs[p] = c.occurrences[k as usize];
            }
        }
        if self.ctx.inner.tuning.trace_queries {
            eprintln!(
                "[multi] run {:.3} ms, counts to patterns {:.3} ms",
                t_run.as_secs_f64() * 1e3,
                (t0.elapsed() - t_run).as_secs_f64() * 1e3
            );
        }
        Ok(PerPatternCounts {
            lines,
            occurrences: occs,
            kernel_time: run.kernel_time,
            how,
        })
    }

    /// What the GPU's counters leave to the CPU: lines too large for a
    /// binding (never uploaded), and the exact occurrences of the groups
    /// in `flagged` (self-overlapping occurrences).
    fn correct_on_cpu(
        &self,
        corpus: &Corpus,
        q: &Query,
        set: &PatternSet,
        flagged: &[usize],
        c: &mut GroupCounts,
    ) {
        let lens: Vec<usize> = set.uniq.iter().map(|p| p.len()).collect();
        // Lines too large for a binding were never uploaded: the CPU
        // counts them.
        if !self.cpu_segs.is_empty() {
            if let Some(occ) = Occurrences::new(set.clone(), q.cpu_multi()) {
                for (di, seg) in &self.cpu_segs {
                    let hay = corpus.docs()[*di].data();
                    let r = count_range(
                        &occ,
                        &lens,
                        hay,
                        seg.bytes.start as usize,
                        seg.bytes.end as usize,
                    );
                    c.add(&r);
                }
            }
        }
        // Self-overlapping occurrences were flagged: recount those
        // patterns' occurrences exactly on the CPU (rare in IOC lists).
        if !flagged.is_empty() {
            let sub: Vec<Vec<u8>> = flagged.iter().map(|&k| set.uniq[k].clone()).collect();
            let sub = PatternSet::new(&sub, set.fold);
            let sub_lens: Vec<usize> = sub.uniq.iter().map(|p| p.len()).collect();
            if let Some(occ) = Occurrences::new(sub, q.cpu_multi()) {
                // Over the lines this corpus holds: its segments (line
                // aligned, and no pattern holds a '\n') and oversized ones.
                let mut exact = GroupCounts::zero(sub_lens.len());
                let ranges = self
                    .segs
                    .iter()
                    .map(|s| (s.doc, s.bytes.clone()))
                    .chain(self.cpu_segs.iter().map(|(d, s)| (*d, s.bytes.clone())));
                for (di, r) in ranges {
                    let hay = corpus.docs()[di].data();
                    exact.add(&count_range(
                        &occ,
                        &sub_lens,
                        hay,
                        r.start as usize,
                        r.end as usize,
                    ));
                }
                for (j, &k) in flagged.iter().enumerate() {
                    c.occurrences[k] = exact.occurrences[j];
                }
            }
        }
    }

    /// Runs `kernel` (resolved by [`MultiKernel::for_query`]) over every
    /// segment: result bits (read back with `lines`), per-segment counts,
    /// and with `per_pattern` the counters. Returns the tables it ran
    /// with.
    pub(crate) async fn run_multi(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        lines: bool,
        per_pattern: bool,
        prepared: Option<&PreparedTables>,
    ) -> Result<(Arc<Uploaded>, Run), Error> {
        let job = MultiJob {
            q,
            kernel: kernel.for_query(q),
            pipes: multi_common::pipes(&self.ctx)?,
            prepared,
            lines,
            per_pattern,
        };
        match self.run(corpus, &job).await {
            Ok((readout, up, pcounts)) => {
                // How many patterns hit: the next run's list readback is
                // sized for it.
                match &pcounts {
                    Some(CountersRead::Full {
                        listed: Some(n), ..
                    }) => up.set_listed(*n),
                    Some(CountersRead::Listed(l)) => up.set_listed(l.len()),
                    _ => {}
                }
                Ok((
                    up,
                    Run {
                        counts: readout.counts,
                        seg_lines: readout.bits,
                        pcounts,
                        kernel_time: readout.kernel_time,
                    },
                ))
            }
            Err(e) => {
                // The upload itself may be what failed (out of memory):
                // never reuse those tables.
                match prepared {
                    Some(p) => p.forget(&self.ctx.inner),
                    None => job.pipes.forget_tables(),
                }
                Err(e)
            }
        }
    }
}

/// A set of literals on one of the many-literal kernels.
struct MultiJob<'j> {
    q: &'j Query,
    /// Resolved ([`MultiKernel::for_query`]).
    kernel: MultiKernel,
    pipes: Arc<MultiPipes>,
    /// Where the set's tables are kept (a watchlist's), if anywhere.
    prepared: Option<&'j PreparedTables>,
    lines: bool,
    per_pattern: bool,
}

impl GpuJob for MultiJob<'_> {
    /// The set's tables, uploaded (or held).
    type Staged = Arc<Uploaded>;
    type Driver<'a>
        = LiteralSet<'a>
    where
        Self: 'a;
    /// With per-pattern counts: the groups that hit, or every counter.
    type Out = Option<CountersRead>;

    fn name(&self) -> &'static str {
        self.kernel.name()
    }

    fn lines(&self) -> bool {
        self.lines
    }

    /// The many-literal kernels always measure their pass.
    fn timestamps(&self, _g: &GpuCorpus) -> bool {
        true
    }

    fn stage(&self, g: &GpuCorpus, _st: &mut State) -> Result<Arc<Uploaded>, Error> {
        let c = &g.ctx.inner;
        let max_binding = c
            .info
            .max_storage_buffer_binding_size
            .min(c.info.max_buffer_size);
        match self.prepared {
            Some(p) => p.get(c, &self.pipes, self.q, self.kernel, max_binding),
            None => self.pipes.tables(c, self.q, self.kernel, max_binding),
        }
    }

    fn driver<'a>(
        &'a self,
        g: &'a GpuCorpus,
        _st: &'a State,
        up: &'a Arc<Uploaded>,
    ) -> Result<LiteralSet<'a>, Error> {
        LiteralSet::new(
            &g.ctx.inner,
            &self.pipes,
            up,
            self.kernel,
            &g.segs,
            self.per_pattern,
        )
    }

    async fn read<'a>(
        &'a self,
        g: &GpuCorpus,
        driver: &LiteralSet<'a>,
        _readout: &Readout,
    ) -> Result<Option<CountersRead>, Error> {
        let mut pcounts = driver.read_counts()?;
        if let Some(CountersRead::Full {
            words,
            listed: Some(_),
        }) = &mut pcounts
        {
            // More patterns hit than the list's readback held: the full
            // counters, in a second round trip (exact either way).
            *words = driver.read_full(&g.ctx.inner).await?;
        }
        Ok(pcounts)
    }

    fn describe(&self, _up: &Arc<Uploaded>, pcounts: &Option<CountersRead>) -> String {
        match pcounts {
            None => String::new(),
            Some(CountersRead::Listed(l)) => format!(" ({} patterns listed)", l.len()),
            Some(CountersRead::Full {
                words,
                listed: Some(n),
            }) => format!(
                " ({n} patterns listed past the readback: {} counter words read again)",
                words.len()
            ),
            Some(CountersRead::Full {
                words,
                listed: None,
            }) => {
                format!(" ({} counter words, list off)", words.len())
            }
        }
    }
}
