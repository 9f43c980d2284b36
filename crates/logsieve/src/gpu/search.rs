//! A search for one literal: the query uniform, one kernel driver run over
//! every resident segment in one command buffer, one wait for every
//! readback, then the merge.
//!
//! Data flow: the host folds the pattern (`-i`), picks the rare bytes from
//! the byte frequencies gathered at upload and writes the uniform (or,
//! natively, hands `scan` its parameters as immediate data); one command
//! buffer clears the per-line bit sets, runs the kernel on every segment
//! and pop-counts the result bits; the host reads back 16 bytes per
//! segment (and the bit sets when line ids are wanted), applies `-v` and
//! `-m`, and merges the oversized segments that the CPU searched.

use std::time::Duration;

// `std::time::Instant` panics on wasm32; this is the same type natively.
use web_time::Instant;

use super::corpus::{GpuCorpus, State};
use super::kernels::brute_byte::BruteByte;
use super::kernels::brute_line::BruteLine;
use super::kernels::count::PopCount;
use super::kernels::scan::{self, ClassScans, Scan};
use super::kernels::signature::{self, Signature};
use super::kernels::two_phase::{self, TwoPhase};
use super::kernels::{params as P, plain_read, KernelDriver, SegmentRun};
use super::rare::RarePick;
use super::readback::{PerSegment, RawHits};
use super::run::Readout;
use super::{GpuKernel, MultiKernel};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::classes::ClassSet;
use crate::query::{CaseMode, Query};
use crate::support::{GpuPlan, GpuWork};
use crate::{DocHits, Want};

/// The result of one GPU search.
#[derive(Clone, Debug)]
pub struct GpuSearch {
    /// One entry per document, as the CPU engine returns them.
    pub docs: Vec<DocHits>,
    /// GPU time of the query's compute pass (timestamps), when supported.
    pub kernel_time: Option<Duration>,
    /// Wall time from writing the parameters to the answer on the host.
    pub end_to_end: Duration,
    /// Lines that survived phase 1 (two-phase, signature): the elimination
    /// rate is `1 - candidates / lines`.
    pub candidates: Option<u64>,
    /// Byte offsets in the document of every match start (overlapping
    /// matches included), per document, ascending: brute-byte with
    /// [`Want::Lines`] only.
    pub positions: Option<Vec<Vec<u64>>>,
}

impl GpuCorpus {
    /// Searches the uploaded `corpus` (the same one that was uploaded) for
    /// `q` with `kernel`. Errors when the query is unsupported
    /// ([`unsupported_reason`]), the corpus differs, or the device fails;
    /// a result is never silently wrong.
    pub fn search(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
    ) -> Result<GpuSearch, Error> {
        self.search_max(corpus, q, kernel, want, None)
    }

    /// [`GpuCorpus::search`] with `-m`: at most `max_count` selected lines
    /// per document. Blocks (natively only: in a browser use
    /// [`GpuCorpus::search_async`]).
    pub fn search_max(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        pollster::block_on(self.search_async(corpus, q, kernel, want, max_count))
    }

    /// [`GpuCorpus::search_max`] without blocking. Natively, searches of
    /// one corpus from several threads take turns ([`GpuCorpus::run`]);
    /// in a browser (one thread) a search started while another awaits
    /// the GPU is an error.
    pub async fn search_async(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        self.check_whole()?;
        let plan = plan_for(q, kernel)?;
        self.search_planned_async(corpus, q, &plan, want, max_count)
            .await
    }

    /// What the search finds in the lines this corpus holds (a shard, or
    /// the whole corpus), before `-v` and `-m`; the returned
    /// [`GpuSearch`]'s `docs` are empty. Blocks (natively only).
    pub(crate) fn search_part(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        pollster::block_on(self.search_part_async(corpus, q, kernel, want))
    }

    /// [`GpuCorpus::search_part`] without blocking: support's plan for
    /// `kernel` ([`crate::support::kernel_support`]), run as it is.
    pub(crate) async fn search_part_async(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let plan = plan_for(q, kernel)?;
        self.search_part_planned_async(corpus, q, &plan, want).await
    }

    /// [`GpuCorpus::search_max`] of a plan support made for `q` (the
    /// route's, [`crate::session::Route::job`]): its kernel and compiled
    /// work run as they are, nothing asked of support again. Blocks
    /// (natively only).
    pub fn search_planned(
        &self,
        corpus: &Corpus,
        q: &Query,
        plan: &GpuPlan,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        pollster::block_on(self.search_planned_async(corpus, q, plan, want, max_count))
    }

    /// [`GpuCorpus::search_planned`] without blocking.
    pub async fn search_planned_async(
        &self,
        corpus: &Corpus,
        q: &Query,
        plan: &GpuPlan,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        self.check_whole()?;
        let t0 = Instant::now();
        let (raw, mut r) = self
            .search_part_planned_async(corpus, q, plan, want)
            .await?;
        r.docs = raw.finish(&self.line_counts(), q.invert(), max_count);
        r.end_to_end = t0.elapsed();
        Ok(r)
    }

    /// [`GpuCorpus::search_planned`] over the lines this corpus holds (a
    /// shard, or the whole corpus), before `-v` and `-m`. Blocks.
    pub(crate) fn search_part_planned(
        &self,
        corpus: &Corpus,
        q: &Query,
        plan: &GpuPlan,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        pollster::block_on(self.search_part_planned_async(corpus, q, plan, want))
    }

    /// [`GpuCorpus::search_part_planned`] without blocking: the job of the
    /// plan's kernel family on the one run ([`GpuCorpus::run`]).
    pub(crate) async fn search_part_planned_async(
        &self,
        corpus: &Corpus,
        q: &Query,
        plan: &GpuPlan,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let kernel = plan.kernel;
        let literal = match (&plan.work, kernel) {
            (_, GpuKernel::Stats) => {
                return Err(Error::backend(
                    "the stats kernel counts columns; it does not search",
                ))
            }
            (GpuWork::Automaton(a), _) => {
                return self.search_shift_and(corpus, q, a.clone(), want).await
            }
            (GpuWork::Bitap(b), _) => return self.search_bitap(corpus, q, b, want).await,
            (GpuWork::Literals, GpuKernel::ShiftAnd | GpuKernel::Bitap) => {
                return Err(Error::backend(format!(
                    "a {kernel} plan without its compiled work"
                )))
            }
            (GpuWork::Literals, GpuKernel::Trie) => {
                return self.search_multi(corpus, q, MultiKernel::Trie, want).await
            }
            (GpuWork::Literals, GpuKernel::Ac) => {
                return self.search_multi(corpus, q, MultiKernel::Ac, want).await
            }
            (GpuWork::Literals, GpuKernel::PrefixHash) => {
                return self
                    .search_multi(corpus, q, MultiKernel::PrefixHash, want)
                    .await
            }
            (GpuWork::Literals, GpuKernel::Bloom) => {
                return self.search_multi(corpus, q, MultiKernel::Bloom, want).await
            }
            (GpuWork::Literals, GpuKernel::BruteLine) => Literal::BruteLine,
            (GpuWork::Literals, GpuKernel::BruteByte) => Literal::BruteByte,
            (GpuWork::Literals, GpuKernel::TwoPhase) => Literal::TwoPhase,
            (GpuWork::Literals, GpuKernel::Scan) => Literal::Scan,
            (GpuWork::Literals, GpuKernel::Signature) => Literal::Signature,
        };
        let job = LiteralJob {
            corpus,
            q,
            kernel: literal,
            lines: want == Want::Lines,
            classes: None,
        };
        self.run_literal(&job).await
    }

    /// Tier 1 for a regex that is a class string on this corpus
    /// ([`crate::support::class_scan`]): one `scan` pass that tests the
    /// class string's rarest bytes and compares the survivors with its
    /// classes. Exact: the lines it marks are the regex's matching lines
    /// (no candidates, no automaton). Blocks.
    pub(crate) fn search_classes(
        &self,
        corpus: &Corpus,
        q: &Query,
        cs: &ClassSet,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        // Two class strings a pass where they fit (`scan::class_passes`).
        let prms = match self.ctx.inner.tuning.no_class_pairs {
            false => scan::class_passes(&cs.alts, &self.rare),
            true => cs
                .alts
                .iter()
                .map(|a| scan::class_params(a, &self.rare))
                .collect(),
        };
        let job = LiteralJob {
            corpus,
            q,
            kernel: Literal::Scan,
            lines: want == Want::Lines,
            classes: Some(prms),
        };
        pollster::block_on(self.run_literal(&job))
    }

    async fn run_literal(&self, job: &LiteralJob<'_>) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let (readout, _, positions) = self.run(job.corpus, job).await?;
        let candidates = job.kernel.phased().then(|| {
            readout.counts.iter().map(|c| u64::from(c[1])).sum::<u64>() + self.cpu_segs.len() as u64
        });
        Ok(self.part_answer(job.corpus, job.q, readout, t0, candidates, positions))
    }

    /// A family's answer over the lines this corpus holds from its run's
    /// readout: the hits (with the CPU's oversized segments), and the
    /// report timed from `t0`.
    pub(crate) fn part_answer(
        &self,
        corpus: &Corpus,
        q: &Query,
        readout: Readout,
        t0: Instant,
        candidates: Option<u64>,
        positions: Option<Vec<Vec<u64>>>,
    ) -> (RawHits, GpuSearch) {
        let raw = self.collect(corpus, q, PerSegment::new(&readout.counts, readout.bits));
        let report = GpuSearch {
            docs: Vec::new(),
            kernel_time: readout.kernel_time,
            end_to_end: t0.elapsed(),
            candidates,
            positions,
        };
        (raw, report)
    }

    /// A uniform and every segment's bind group for each class pass after
    /// the first (`prms`), made on first use and written only when its
    /// words change (as [`GpuCorpus::write_params`]).
    fn stage_class_slots(&self, st: &mut State, prms: &[[u32; P::WORDS]]) {
        let c = &*self.ctx.inner;
        st.class_slots.truncate(prms.len().saturating_sub(1));
        st.class_slots
            .retain(|(_, b, _)| b.len() == self.segs.len());
        while st.class_slots.len() + 1 < prms.len() {
            let buf = c.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("class params"),
                size: (P::WORDS * 4) as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let binds = (0..self.segs.len())
                .map(|i| {
                    self.segs[i].bind(
                        &c.device,
                        &c.pipes.layout,
                        &st.positions[i],
                        &st.signatures[i],
                        &buf,
                    )
                })
                .collect();
            st.class_slots.push((buf, binds, None));
        }
        for (prm, (buf, _, last)) in prms[1..].iter().zip(&mut st.class_slots) {
            if last.as_deref() != Some(prm) {
                let bytes: Vec<u8> = prm.iter().flat_map(|w| w.to_le_bytes()).collect();
                c.queue.write_buffer(buf, 0, &bytes);
                *last = Some(Box::new(*prm));
            }
        }
    }

    /// Records `driver` over every segment: its clears, then one compute
    /// pass (bracketed by timestamps when `timestamps`) in which each
    /// segment gets its dispatches. `binds`: each segment's bind group in
    /// the engine's layout.
    pub(crate) fn encode(
        &self,
        driver: &dyn KernelDriver,
        binds: &[wgpu::BindGroup],
        timestamps: bool,
    ) -> wgpu::CommandEncoder {
        let c = &*self.ctx.inner;
        let mut enc = c.device.create_command_encoder(&Default::default());
        driver.prepare(&mut enc);
        for s in &self.segs {
            driver.clear(&mut enc, s);
        }
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(driver.label()),
                timestamp_writes: self.readback.timestamp_writes().filter(|_| timestamps),
            });
            for (index, (segment, bind)) in self.segs.iter().zip(binds).enumerate() {
                driver.record(
                    &mut pass,
                    SegmentRun {
                        segment,
                        bind,
                        index,
                    },
                );
            }
            driver.finish(&mut pass);
        }
        enc
    }

    /// Records the readback copies after [`GpuCorpus::encode`]: every
    /// segment's counters (and with `lines` its result bits), the driver's
    /// own, and with `timestamps` the pass's times.
    pub(crate) fn encode_readback(
        &self,
        enc: &mut wgpu::CommandEncoder,
        driver: &dyn KernelDriver,
        lines: bool,
        timestamps: bool,
    ) {
        self.readback.copy(enc, &self.segs, lines);
        driver.copy_out(enc);
        if timestamps {
            self.readback.resolve_timestamps(enc);
        }
    }

    /// What to map after the submission of [`GpuCorpus::encode_readback`]'s
    /// copies.
    pub(crate) fn readback_maps<'a>(
        &'a self,
        driver: &'a dyn KernelDriver,
        lines: bool,
        timestamps: bool,
    ) -> Vec<(&'a wgpu::Buffer, u64)> {
        let mut maps = self.readback.maps(&self.segs, lines, timestamps);
        maps.extend(driver.readback());
        maps
    }

    /// The query uniform.
    pub(crate) fn params_for(&self, q: &Query) -> ([u32; P::WORDS], Vec<u8>) {
        let lit = &q.literals().expect("checked by unsupported_reason")[0];
        self.params_for_literal(lit, q.case() == CaseMode::Ascii)
    }

    /// The query uniform of one literal (`fold`: ASCII `-i`).
    pub(crate) fn params_for_literal(&self, lit: &[u8], fold: bool) -> ([u32; P::WORDS], Vec<u8>) {
        let folded = if fold {
            lit.to_ascii_lowercase()
        } else {
            lit.to_vec()
        };
        let mut p = [0u32; P::WORDS];
        for (i, &b) in folded.iter().enumerate() {
            p[P::PAT + i] = u32::from(b);
            p[P::PATW + i / 4] |= u32::from(b) << ((i % 4) * 8);
        }
        p[P::NEED..P::NEED + 32].copy_from_slice(&two_phase::need_counts(&folded));
        p[P::SIG..P::SIG + 4].copy_from_slice(&signature::query_mask(&folded));
        p[P::PAT_LEN] = folded.len() as u32;
        p[P::FOLD] = u32::from(fold);
        // Under -i a letter stands for both of its cases.
        let tests: Vec<_> = folded
            .iter()
            .map(|&b| Some((b, fold && b.is_ascii_lowercase())))
            .collect();
        let pick = self.rare.pick(&tests).unwrap_or(RarePick {
            r1: 0,
            r2: None,
            dense: false,
        });
        // Position i's byte broadcast, and the OR that folds its cases.
        let test = |i: usize| {
            let (b, both) = tests[i].unwrap_or_default();
            (u32::from(b) * 0x0101_0101, u32::from(both) * 0x2020_2020)
        };
        p[P::R1] = pick.r1 as u32;
        (p[P::B1], p[P::OR1]) = test(pick.r1);
        p[P::DENSE] = u32::from(pick.dense);
        if let Some(r2) = pick.r2 {
            p[P::D2] = (r2 as i32 - pick.r1 as i32) as u32;
            (p[P::B2], p[P::OR2]) = test(r2);
        }
        p[P::WIN_LO] = 0;
        p[P::WIN_HI] = u32::MAX;
        p[P::MAGIC] = plain_read::MAGIC;
        (p, folded)
    }
}

/// Support's plan for `q` on `kernel` ([`crate::support::kernel_support`]),
/// for the entry points that name a kernel; the stats kernel does not
/// search.
fn plan_for(q: &Query, kernel: GpuKernel) -> Result<GpuPlan, Error> {
    if kernel == GpuKernel::Stats {
        return Err(Error::backend(
            "the stats kernel counts columns; it does not search",
        ));
    }
    crate::support::kernel_support(q, Some(kernel))
        .map_err(|r| Error::backend(format!("the GPU cannot run this query: {r}")))
}

/// The single-literal kernels: what differs between them on the one run
/// is their driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Literal {
    BruteLine,
    BruteByte,
    TwoPhase,
    Scan,
    Signature,
}

impl Literal {
    fn kernel(self) -> GpuKernel {
        match self {
            Literal::BruteLine => GpuKernel::BruteLine,
            Literal::BruteByte => GpuKernel::BruteByte,
            Literal::TwoPhase => GpuKernel::TwoPhase,
            Literal::Scan => GpuKernel::Scan,
            Literal::Signature => GpuKernel::Signature,
        }
    }

    /// A first phase that leaves candidates (counted for the report).
    fn phased(self) -> bool {
        matches!(self, Literal::TwoPhase | Literal::Signature)
    }
}

/// One literal (or a class set's passes) on one of the single-literal
/// kernels.
struct LiteralJob<'j> {
    corpus: &'j Corpus,
    q: &'j Query,
    kernel: Literal,
    lines: bool,
    /// A class set's passes' parameter words (`search_classes`, `scan`
    /// only); else the query's one literal.
    classes: Option<Vec<[u32; P::WORDS]>>,
}

/// What a literal job wrote before recording.
struct LiteralStaged {
    /// The (first) pass's uniform words.
    prm: [u32; P::WORDS],
    /// The literal as the kernel compares it (`-i` folded).
    folded: Vec<u8>,
    /// `scan`'s parameters as immediate data (natively, one literal).
    imm: Option<Vec<u8>>,
    /// The result bits are already zero: `scan` need not clear them.
    skip_result: bool,
}

impl super::run::GpuJob for LiteralJob<'_> {
    type Staged = LiteralStaged;
    type Driver<'a>
        = Box<dyn KernelDriver + 'a>
    where
        Self: 'a;
    /// Brute-byte's match positions, with lines.
    type Out = Option<Vec<Vec<u64>>>;

    fn name(&self) -> &'static str {
        self.kernel.kernel().name()
    }

    fn lines(&self) -> bool {
        self.lines
    }

    fn leaves_clean(&self) -> bool {
        // A count-only scan's pop-count zeroed the result bits.
        self.kernel == Literal::Scan && !self.lines
    }

    fn stage(&self, g: &GpuCorpus, st: &mut State) -> Result<LiteralStaged, Error> {
        let c = &*g.ctx.inner;
        if self.kernel == Literal::Signature {
            g.ensure_signatures(st);
        }
        let (prm, folded) = match &self.classes {
            Some(p) => {
                g.stage_class_slots(st, p);
                (p[0], Vec::new())
            }
            None => g.params_for(self.q),
        };
        // Natively scan's parameters travel as immediate data (a class
        // string's do not fit: its pipelines read the uniform).
        let imm =
            (self.kernel == Literal::Scan && self.classes.is_none() && c.info.scan_immediates)
                .then(|| scan::immediates(&prm));
        if imm.is_none() {
            g.write_params(&prm);
        }
        Ok(LiteralStaged {
            prm,
            folded,
            imm,
            // scan zeroes its counters itself, and its result bits are
            // already zero after a count-only scan.
            skip_result: self.kernel == Literal::Scan && st.was_clean,
        })
    }

    fn driver<'a>(
        &'a self,
        g: &'a GpuCorpus,
        st: &'a State,
        staged: &'a LiteralStaged,
    ) -> Result<Box<dyn KernelDriver + 'a>, Error> {
        let c = &*g.ctx.inner;
        let p = &c.pipes;
        let grid = c.grid();
        let count = PopCount {
            result: match self.leaves_clean() {
                true => &p.count_result_zero,
                false => &p.count_result,
            },
            candidates: self.kernel.phased().then_some(&p.count_cand),
        };
        Ok(match (self.kernel, &self.classes) {
            (Literal::BruteLine, _) => Box::new(BruteLine {
                pipeline: &p.brute_line,
                count,
                grid,
            }),
            (Literal::BruteByte, _) => Box::new(BruteByte {
                pipeline: &p.brute_byte,
                count,
                grid,
            }),
            (Literal::TwoPhase, _) => Box::new(TwoPhase {
                phase1: &p.two_phase_p1,
                phase2: &p.two_phase_p2,
                count,
                grid,
            }),
            (Literal::Signature, _) => Box::new(Signature {
                phase1: &p.sig_p1,
                phase2: &p.two_phase_p2,
                count,
                grid,
            }),
            (Literal::Scan, Some(classes)) => Box::new(ClassScans {
                passes: classes
                    .iter()
                    .enumerate()
                    .map(|(k, prm)| {
                        let pipe = p.scan_classes.get(&c.device, scan::class_pipeline_of(prm));
                        (pipe, k.checked_sub(1).map(|j| &st.class_slots[j].1[..]))
                    })
                    .collect(),
                clear_result: !staged.skip_result,
                count,
                grid,
            }),
            (Literal::Scan, None) => Box::new(Scan {
                pipeline: p.scan.get(&c.device, scan::pipeline_of(&staged.prm)),
                immediates: staged.imm.as_deref(),
                clear_result: !staged.skip_result,
                count: Some(count),
                grid,
            }),
        })
    }

    async fn after(
        &self,
        g: &GpuCorpus,
        st: &mut State,
        staged: &LiteralStaged,
        readout: &Readout,
        out: &mut Self::Out,
    ) -> Result<(), Error> {
        if self.kernel == Literal::BruteByte {
            *out = g
                .brute_byte_positions(
                    self.corpus,
                    self.q,
                    st,
                    &readout.counts,
                    &staged.prm,
                    &staged.folded,
                    self.lines,
                )
                .await?;
        }
        Ok(())
    }

    fn describe(&self, staged: &LiteralStaged, _out: &Self::Out) -> String {
        let tests = |ps: &[[u32; P::WORDS]]| {
            ps.iter()
                .map(scan::describe_tests)
                .collect::<Vec<_>>()
                .join(" | ")
        };
        match (&self.classes, self.kernel) {
            (Some(c), _) => format!(" ({} class passes: {})", c.len(), tests(c)),
            (None, Literal::Scan) => format!(" (tests {})", tests(&[staged.prm])),
            (None, _) => String::new(),
        }
    }
}
