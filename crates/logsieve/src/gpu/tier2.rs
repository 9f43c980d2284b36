//! Tier 2 of regex on the GPU: a search run by the `shift-and` kernel
//! (`kernels/shift_and.rs`) over every resident segment, the query's
//! position automaton (`query::glushkov`) in one table buffer. Matching
//! lines come back as the result bits (exact); lines the automaton could
//! not decide (a byte >= 0x80 under a Unicode-dependent regex) as the
//! candidate bits, read back only when there are some, and decided by the
//! CPU matcher ([`Candidates::verify`]).
//!
//! [`GpuCorpus::search_verified`] is tier 1 verified on the GPU: `scan`
//! marks the lines holding the required literal, `compact` lists them and
//! `shift-and` (with its filter) runs the automaton over only those, one
//! thread per listed line, in one command buffer: no candidate readback
//! and no CPU pass (but for undecided lines).

use std::sync::Arc;

use web_time::Instant;

use super::corpus::GpuCorpus;
use super::corpus::State;
use super::kernels::scan::{self, Scan};
use super::kernels::shift_and::{self, ResidentAutomaton, ShiftAnd, ShiftAndPipes};
use super::kernels::{params as P, KernelDriver, SegmentRun};
use super::readback::{self, Candidates, PerSegment, RawHits};
use super::run::{GpuJob, Readout};
use super::search::GpuSearch;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::classes::ClassSet;
use crate::query::glushkov::Automaton;
use crate::query::Query;
use crate::results::Want;

impl GpuCorpus {
    /// [`GpuCorpus::search_part`] with the `shift-and` kernel: `automaton`
    /// is `q`'s (support's, [`crate::support::shift_and_support`]).
    pub(crate) async fn search_shift_and(
        &self,
        corpus: &Corpus,
        q: &Query,
        automaton: Arc<Automaton>,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        self.shift_and_inner(corpus, q, automaton, None, want).await
    }

    /// Tier 1 verified on the GPU: `literal` (one literal, or up to
    /// `support::MAX_SCANS`, every match of `q` contains one of them:
    /// `support::prefilter_support`'s plan) on `scan`, one pass each with
    /// their line bits OR-ed, then `shift-and` over the lines they marked.
    /// Exact: what comes back is `q`'s matches, as
    /// [`GpuCorpus::search_shift_and`] finds them. Several passes share one
    /// submission with scan's immediates (each its own parameters); without
    /// them each pass but the last has a submission of its own after its
    /// uniform write. Blocks (natively only).
    pub(crate) fn search_verified(
        &self,
        corpus: &Corpus,
        literal: &Query,
        q: &Query,
        classes: Option<&ClassSet>,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        // A class string (the plan's, `PrefilterPlan::classes`) needs
        // neither the literals nor the automaton: `scan` answers it exactly
        // in one pass.
        if let Some(cs) = classes {
            return self.search_classes(corpus, q, cs, want);
        }
        let pats = literal.patterns();
        let one_ok = |p: &Vec<u8>| !p.is_empty() && p.len() <= crate::support::MAX_PATTERN;
        if pats.len() == 1 {
            if let Err(r) = crate::support::kernel_support(literal, Some(crate::Kernel::Scan)) {
                return Err(Error::backend(format!(
                    "the GPU cannot run the prefilter's literal: {r}"
                )));
            }
        } else if pats.len() > crate::support::MAX_SCANS
            || !pats.iter().all(one_ok)
            || literal.case() == crate::query::CaseMode::Unicode
        {
            return Err(Error::backend(format!(
                "the prefilter's {} literals are not {} or fewer ASCII ones of 1-{} bytes",
                pats.len(),
                crate::support::MAX_SCANS,
                crate::support::MAX_PATTERN
            )));
        }
        let automaton = crate::support::shift_and_support(q)
            .map_err(|u| Error::backend(format!("the GPU cannot run this query: {u}")))?;
        pollster::block_on(self.shift_and_inner(corpus, q, automaton, Some(literal), want))
    }

    async fn shift_and_inner(
        &self,
        corpus: &Corpus,
        q: &Query,
        automaton: Arc<Automaton>,
        literal: Option<&Query>,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let lines = want == Want::Lines;
        // The literals' parameters (written under the state lock, so that
        // another search cannot overwrite the uniform before the
        // submission).
        let prms: Vec<_> = literal.map_or(Vec::new(), |l| {
            let fold = l.case() == crate::query::CaseMode::Ascii;
            l.patterns()
                .iter()
                .map(|p| self.params_for_literal(p, fold).0)
                .collect()
        });
        let job = ShiftAndJob {
            pipes: shift_and::pipes(&self.ctx).await?,
            automaton,
            prms,
            lines,
        };
        let (readout, _, undecided) = self.run(corpus, &job).await?;
        // The undecided lines, decided by the CPU matcher.
        let verified = match undecided {
            Some(ids) => {
                let found = PerSegment {
                    matched: ids.iter().map(|v| v.len() as u64).collect(),
                    lines: Some(ids),
                };
                let cands = readback::collect(corpus, q, &self.segs, &[], found);
                let n = cands.matched.iter().sum::<u64>();
                Some((
                    Candidates::unverified(cands)?.verify(corpus, q, lines, 0),
                    n,
                ))
            }
            None => None,
        };
        let n = verified.as_ref().map(|(_, n)| *n);
        let (mut raw, report) = self.part_answer(corpus, q, readout, t0, n, None);
        if let Some((confirmed, _)) = verified {
            raw.add(confirmed);
        }
        Ok((raw, report))
    }
}

/// A regex's automaton on `shift-and`, over every line or (tier 1) over
/// the lines `scan` marks for `prms`' literals.
struct ShiftAndJob {
    pipes: Arc<ShiftAndPipes>,
    automaton: Arc<Automaton>,
    /// The prefilter's literals' uniform words (none: every line).
    prms: Vec<[u32; P::WORDS]>,
    lines: bool,
}

/// What the job made resident and wrote before recording.
struct ShiftAndStaged {
    resident: Arc<ResidentAutomaton>,
    /// The literals' passes recorded with the automaton (the others ran
    /// in submissions of their own, `stage`).
    inline: std::ops::Range<usize>,
    /// Whether the first inline pass clears the line bits.
    first_clears: bool,
    /// Each literal's parameters as `scan`'s immediate data, natively.
    imms: Option<Vec<Vec<u8>>>,
    /// Automata built on this corpus so far (the trace).
    built: u64,
}

impl GpuJob for ShiftAndJob {
    type Staged = ShiftAndStaged;
    type Driver<'a> = Verified<'a>;
    /// The undecided lines' ids, per segment, when there are some.
    type Out = Option<Vec<Vec<u64>>>;

    fn name(&self) -> &'static str {
        crate::Kernel::ShiftAnd.name()
    }

    fn lines(&self) -> bool {
        self.lines
    }

    fn stage(&self, g: &GpuCorpus, st: &mut State) -> Result<ShiftAndStaged, Error> {
        let c = &*g.ctx.inner;
        let imms: Option<Vec<Vec<u8>>> = c
            .info
            .scan_immediates
            .then(|| self.prms.iter().map(scan::immediates).collect());
        // Without immediates the uniform holds one literal at a time: the
        // passes before the last run in submissions of their own, each
        // after its write (wgpu applies a buffer write before the next
        // submission), the first clearing the line bits; the last pass
        // runs with the automaton.
        let mut inline = 0..self.prms.len();
        let mut first_clears = true;
        if imms.is_none() && self.prms.len() > 1 {
            let (last, before) = self.prms.split_last().expect("several");
            for (i, prm) in before.iter().enumerate() {
                g.write_params(prm);
                let pass = Scan {
                    pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(prm)),
                    immediates: None,
                    clear_result: i == 0,
                    count: None,
                    grid: c.grid(),
                };
                let enc = g.encode(&pass, &st.binds, false);
                c.queue.submit([enc.finish()]);
            }
            g.write_params(last);
            inline = before.len()..self.prms.len();
            first_clears = false;
        } else if let (Some(prm), None) = (self.prms.first(), &imms) {
            g.write_params(prm);
        }
        let resident = st.automata.get(
            c,
            &self.pipes,
            &self.automaton,
            &g.segs,
            !self.prms.is_empty(),
            &g.rare.freq,
        );
        Ok(ShiftAndStaged {
            resident,
            inline,
            first_clears,
            imms,
            built: st.automata.built,
        })
    }

    fn driver<'a>(
        &'a self,
        g: &'a GpuCorpus,
        _st: &'a State,
        staged: &'a ShiftAndStaged,
    ) -> Result<Verified<'a>, Error> {
        let c = &*g.ctx.inner;
        Ok(Verified {
            scans: staged
                .inline
                .clone()
                .enumerate()
                .map(|(i, k)| {
                    let prm = &self.prms[k];
                    Scan {
                        pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(prm)),
                        immediates: staged.imms.as_ref().map(|v| v[k].as_slice()),
                        // The first pass clears the line bits, the
                        // others OR theirs in.
                        clear_result: i == 0 && staged.first_clears,
                        count: None,
                        grid: c.grid(),
                    }
                })
                .collect(),
            verify: ShiftAnd::new(c, &self.pipes, &staged.resident),
        })
    }

    async fn after(
        &self,
        g: &GpuCorpus,
        _st: &mut State,
        _staged: &ShiftAndStaged,
        readout: &Readout,
        out: &mut Self::Out,
    ) -> Result<(), Error> {
        let undecided: u64 = readout.counts.iter().map(|c| u64::from(c[1])).sum();
        if undecided == 0 {
            return Ok(());
        }
        // The undecided lines' ids: the candidate bits, copied where the
        // result bits were read back.
        let c = &*g.ctx.inner;
        let mut enc = c.device.create_command_encoder(&Default::default());
        for s in g.segs.iter().filter(|s| s.n_words > 0) {
            enc.copy_buffer_to_buffer(
                &s.buffers.candidates,
                0,
                &g.readback.bits,
                s.bits_at,
                u64::from(s.n_words) * 4,
            );
        }
        c.queue.submit([enc.finish()]);
        c.map_many_async(&g.readback.maps(&g.segs, true, false)[1..])
            .await?;
        *out = Some(g.readback.read_bits(&g.segs)?);
        Ok(())
    }

    fn describe(&self, staged: &ShiftAndStaged, _out: &Self::Out) -> String {
        format!(
            "{} ({} automata built so far)",
            if self.prms.is_empty() {
                ""
            } else {
                " (verify)"
            },
            staged.built
        )
    }
}

/// `scan` once per literal (when tier 1) then `shift-and` on each segment,
/// in one pass: the automaton reads the bits the scans set (wgpu orders
/// the dispatches).
struct Verified<'a> {
    scans: Vec<Scan<'a>>,
    verify: ShiftAnd<'a>,
}

impl KernelDriver for Verified<'_> {
    fn label(&self) -> &'static str {
        self.verify.label()
    }

    fn prepare(&self, enc: &mut wgpu::CommandEncoder) {
        for s in &self.scans {
            s.prepare(enc);
        }
        self.verify.prepare(enc);
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &crate::gpu::segment::ResidentSegment) {
        for s in &self.scans {
            s.clear(enc, seg);
        }
        self.verify.clear(enc, seg);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        for s in &self.scans {
            s.record(
                pass,
                SegmentRun {
                    segment: run.segment,
                    bind: run.bind,
                    index: run.index,
                },
            );
        }
        self.verify.record(pass, run);
    }
}
