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

use web_time::Instant;

use super::corpus::GpuCorpus;
use super::kernels::scan::{self, Scan};
use super::kernels::shift_and::{self, ShiftAnd};
use super::kernels::{KernelDriver, SegmentRun};
use super::readback::{self, Candidates, PerSegment, RawHits};
use super::search::GpuSearch;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::classes::ClassSet;
use crate::query::Query;
use crate::results::Want;

impl GpuCorpus {
    /// [`GpuCorpus::search_part`] with the `shift-and` kernel.
    // The state lock is held across the awaits, as in `search_async`.
    #[allow(clippy::await_holding_lock)]
    pub(crate) async fn search_shift_and(
        &self,
        corpus: &Corpus,
        q: &Query,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        self.shift_and_inner(corpus, q, None, want).await
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
        pollster::block_on(self.shift_and_inner(corpus, q, Some(literal), want))
    }

    // The state lock is held across the awaits, as in `search_async`.
    #[allow(clippy::await_holding_lock)]
    async fn shift_and_inner(
        &self,
        corpus: &Corpus,
        q: &Query,
        literal: Option<&Query>,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let a = crate::support::shift_and_support(q)
            .map_err(|u| Error::backend(format!("the GPU cannot run this query: {u}")))?;
        self.check_corpus(corpus)?;
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let pipes = shift_and::pipes(&self.ctx).await?;
        let lines = want == Want::Lines;
        let mut st = self.lock_state()?;
        // The literals' parameters (the state lock keeps another search
        // from overwriting the uniform before the submission).
        let prms: Vec<_> = literal.map_or(Vec::new(), |l| {
            let fold = l.case() == crate::query::CaseMode::Ascii;
            l.patterns()
                .iter()
                .map(|p| self.params_for_literal(p, fold).0)
                .collect()
        });
        let imms: Option<Vec<Vec<u8>>> = c
            .info
            .scan_immediates
            .then(|| prms.iter().map(scan::immediates).collect());
        // Without immediates the uniform holds one literal at a time: the
        // passes before the last run in submissions of their own, each
        // after its write (wgpu applies a buffer write before the next
        // submission), the first clearing the line bits; the last pass
        // runs with the automaton.
        let mut inline = &prms[..];
        let mut first_clears = true;
        if imms.is_none() && prms.len() > 1 {
            let (last, before) = prms.split_last().expect("several");
            for (i, prm) in before.iter().enumerate() {
                self.write_params(prm);
                let pass = Scan {
                    pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(prm)),
                    immediates: None,
                    clear_result: i == 0,
                    count: None,
                    grid: c.grid(),
                };
                let enc = self.encode(&pass, &st.binds, false);
                c.queue.submit([enc.finish()]);
            }
            self.write_params(last);
            inline = std::slice::from_ref(last);
            first_clears = false;
        } else if let (Some(prm), None) = (prms.first(), &imms) {
            self.write_params(prm);
        }
        let t_built = t0.elapsed();
        let resident =
            st.automata
                .get(c, &pipes, &a, &self.segs, !prms.is_empty(), &self.rare.freq);
        let t_resident = t0.elapsed();
        let (counts, seg_lines, undecided, kernel_time) = c
            .scoped(async {
                let verify = ShiftAnd::new(c, &pipes, &resident);
                let driver = Verified {
                    scans: inline
                        .iter()
                        .enumerate()
                        .map(|(i, prm)| Scan {
                            pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(prm)),
                            immediates: imms.as_ref().map(|v| v[i].as_slice()),
                            // The first pass clears the line bits, the
                            // others OR theirs in.
                            clear_result: i == 0 && first_clears,
                            count: None,
                            grid: c.grid(),
                        })
                        .collect(),
                    verify,
                };
                let use_ts = self.timestamps_on();
                let mut enc = self.encode(&driver, &st.binds, use_ts);
                self.encode_readback(&mut enc, &driver, lines, use_ts);
                let t_encoded = t0.elapsed();
                c.queue.submit([enc.finish()]);
                let t_submitted = t0.elapsed();
                c.map_many_async(&self.readback_maps(&driver, lines, use_ts))
                    .await?;
                let t_mapped = t0.elapsed();
                let counts = self.readback.read_counts(&self.segs)?;
                let kernel_time = match use_ts {
                    true => self.readback.read_timestamps(c.ts_period)?,
                    false => None,
                };
                if c.tuning.trace_queries {
                    eprintln!(
                        "logsieve: shift-and{} query: automaton at {:.1} us, resident at {:.1} us \
                         ({} built so far), encoded at {:.1} us, submitted at {:.1} us, \
                         mapped at {:.1} us, kernel {}",
                        if prms.is_empty() { "" } else { " (verify)" },
                        t_built.as_secs_f64() * 1e6,
                        t_resident.as_secs_f64() * 1e6,
                        st.automata.built,
                        t_encoded.as_secs_f64() * 1e6,
                        t_submitted.as_secs_f64() * 1e6,
                        t_mapped.as_secs_f64() * 1e6,
                        super::readback::trace_kernel(kernel_time),
                    );
                }
                let seg_lines = match lines {
                    true => Some(self.readback.read_bits(&self.segs)?),
                    false => None,
                };
                let undecided: u64 = counts.iter().map(|c| u64::from(c[1])).sum();
                // The undecided lines' ids: the candidate bits, copied
                // where the result bits were read back.
                let undecided = match undecided {
                    0 => None,
                    _ => {
                        let mut enc = c.device.create_command_encoder(&Default::default());
                        for s in self.segs.iter().filter(|s| s.n_words > 0) {
                            enc.copy_buffer_to_buffer(
                                &s.buffers.candidates,
                                0,
                                &self.readback.bits,
                                s.bits_at,
                                u64::from(s.n_words) * 4,
                            );
                        }
                        c.queue.submit([enc.finish()]);
                        c.map_many_async(&self.readback.maps(&self.segs, true, false)[1..])
                            .await?;
                        Some(self.readback.read_bits(&self.segs)?)
                    }
                };
                Ok((counts, seg_lines, undecided, kernel_time))
            })
            .await?;
        st.clean = false;
        drop(st);
        let mut raw = self.collect(corpus, q, PerSegment::new(&counts, seg_lines));
        let verified = match undecided {
            Some(ids) => {
                let found = PerSegment {
                    matched: ids.iter().map(|v| v.len() as u64).collect(),
                    lines: Some(ids),
                };
                let cands = readback::collect(corpus, q, &self.segs, &[], found);
                let n = cands.matched.iter().sum::<u64>();
                raw.add(Candidates::unverified(cands)?.verify(corpus, q, lines, 0));
                Some(n)
            }
            None => None,
        };
        Ok((
            raw,
            GpuSearch {
                docs: Vec::new(),
                kernel_time,
                end_to_end: t0.elapsed(),
                candidates: verified,
                positions: None,
            },
        ))
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
