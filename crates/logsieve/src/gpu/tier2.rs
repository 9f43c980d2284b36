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

    /// Tier 1 verified on the GPU: `literal` (one literal, every match of
    /// `q` contains it: `support::prefilter_support`'s plan) on `scan`,
    /// then `shift-and` over the lines it marked. Exact: what comes back is
    /// `q`'s matches, as [`GpuCorpus::search_shift_and`] finds them.
    /// Blocks (natively only).
    pub(crate) fn search_verified(
        &self,
        corpus: &Corpus,
        literal: &Query,
        q: &Query,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        if let Err(r) = crate::support::kernel_support(literal, Some(crate::Kernel::Scan)) {
            return Err(Error::backend(format!(
                "the GPU cannot run the prefilter's literal: {r}"
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
        let pipes = shift_and::pipes(&self.ctx)?;
        let lines = want == Want::Lines;
        let mut st = self.lock_state()?;
        // The literal's parameters (the state lock keeps another search
        // from overwriting the uniform before the submission).
        let prm = literal.map(|l| self.params_for(l).0);
        let imm = prm
            .as_ref()
            .filter(|_| c.info.scan_immediates)
            .map(scan::immediates);
        if let (Some(prm), None) = (&prm, &imm) {
            self.write_params(prm);
        }
        let t_built = t0.elapsed();
        let resident = st.automata.get(c, &pipes, &a, &self.segs, prm.is_some());
        let t_resident = t0.elapsed();
        let (counts, seg_lines, undecided, kernel_time) = c
            .scoped(async {
                let verify = ShiftAnd::new(c, &pipes, &resident);
                let driver = Verified {
                    scan: prm.as_ref().map(|prm| Scan {
                        pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(prm)),
                        immediates: imm.as_deref(),
                        clear_result: true,
                        count: None,
                        grid: c.grid(),
                    }),
                    verify,
                };
                let use_ts = self.timestamps_on();
                let mut enc = self.encode(&driver, &st.binds, use_ts);
                self.encode_readback(&mut enc, &driver, lines, use_ts);
                c.queue.submit([enc.finish()]);
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
                         ({} built so far), mapped at {:.1} us, kernel {}",
                        if prm.is_some() { " (verify)" } else { "" },
                        t_built.as_secs_f64() * 1e6,
                        t_resident.as_secs_f64() * 1e6,
                        st.automata.built,
                        t_mapped.as_secs_f64() * 1e6,
                        kernel_time
                            .map_or("-".into(), |k| format!("{:.1} us", k.as_secs_f64() * 1e6)),
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

/// `scan` (when tier 1) then `shift-and` on each segment, in one pass: the
/// automaton reads the bits `scan` set (wgpu orders the dispatches).
struct Verified<'a> {
    scan: Option<Scan<'a>>,
    verify: ShiftAnd<'a>,
}

impl KernelDriver for Verified<'_> {
    fn label(&self) -> &'static str {
        self.verify.label()
    }

    fn prepare(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(s) = &self.scan {
            s.prepare(enc);
        }
        self.verify.prepare(enc);
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &crate::gpu::segment::ResidentSegment) {
        if let Some(s) = &self.scan {
            s.clear(enc, seg);
        }
        self.verify.clear(enc, seg);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        if let Some(s) = &self.scan {
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
