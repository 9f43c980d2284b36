//! The one GPU run: every search of the resident corpus, whatever its
//! kernel family, goes through [`GpuCorpus::run`]. The run owns what
//! every family shares: the corpus check, the device's faults, the state
//! lock, the error scope, the encoding of the driver over every segment
//! with the corpus's readback copies, the submission, the one wait for
//! every readback, and the counters, line bits and kernel time read back.
//! A family ([`GpuJob`]) says only what differs: what it stages under the
//! lock (a uniform, tables, an automaton), its driver, what it reads back
//! beyond the corpus's readout, and any later round trip.
//!
//! The families: `search.rs` (the single-literal kernels and `scan`'s
//! class passes), `tier2.rs` (`shift-and`, alone or verifying `scan`),
//! `fuzzy.rs` (`bitap`) and `pattern_set.rs` (the many-literal kernels).
//! Two paths encode for themselves: the fuser's batch of counts
//! (`fused.rs`, one pass per query into a readback of its own) and the
//! stats pipeline (`stats.rs`, which submits `scan` ahead of its own
//! kernel and waits for it there).

use std::time::Duration;

use web_time::Instant;

use super::corpus::{GpuCorpus, State};
use super::kernels::KernelDriver;
use crate::corpus::Corpus;
use crate::error::Error;

/// What every run reads back: each segment's counters (`[matching lines,
/// candidates, appended positions, -]`), each segment's matching-line ids
/// when the job wants lines, and the pass's GPU time where timestamps are
/// on.
pub(crate) struct Readout {
    pub(crate) counts: Vec<[u32; 4]>,
    pub(crate) bits: Option<Vec<Vec<u64>>>,
    pub(crate) kernel_time: Option<Duration>,
}

/// A kernel family on the one run: only what differs between families.
pub(crate) trait GpuJob {
    /// What the job makes under the state lock before it records: the
    /// words it wrote to the uniform, tables it uploaded, the automaton it
    /// made resident. Its driver borrows it.
    type Staged;
    /// The driver recorded over every segment.
    type Driver<'a>: KernelDriver
    where
        Self: 'a;
    /// What the job reads back beyond the [`Readout`] (default: nothing
    /// until [`GpuJob::read`] or [`GpuJob::after`] says otherwise).
    type Out: Default;

    /// The job's kernel, in traces.
    fn name(&self) -> &'static str;

    /// Whether the matching lines' ids are read back.
    fn lines(&self) -> bool;

    /// Whether the pass is bracketed by timestamps (default: as the
    /// corpus is set, [`GpuCorpus::set_timestamps`]).
    fn timestamps(&self, g: &GpuCorpus) -> bool {
        g.timestamps_on()
    }

    /// Whether a successful run leaves every segment's result bits zero
    /// (a count-only `scan`, whose pop-count zeroes what it counts).
    fn leaves_clean(&self) -> bool {
        false
    }

    /// Under the state lock, before recording: what the driver needs.
    fn stage(&self, g: &GpuCorpus, st: &mut State) -> Result<Self::Staged, Error>;

    /// The driver over `g`'s segments.
    fn driver<'a>(
        &'a self,
        g: &'a GpuCorpus,
        st: &'a State,
        staged: &'a Self::Staged,
    ) -> Result<Self::Driver<'a>, Error>;

    /// The job's own readback, while its driver lives (after the one
    /// wait: its buffers are mapped). Default: none.
    async fn read<'a>(
        &'a self,
        _g: &GpuCorpus,
        _driver: &Self::Driver<'a>,
        _readout: &Readout,
    ) -> Result<Self::Out, Error> {
        Ok(Self::Out::default())
    }

    /// After the driver is gone, with the state writable and the lock
    /// still held: a further round trip (default: none).
    async fn after(
        &self,
        _g: &GpuCorpus,
        _st: &mut State,
        _staged: &Self::Staged,
        _readout: &Readout,
        _out: &mut Self::Out,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// What the trace adds after the kernel's name (default: nothing).
    fn describe(&self, _staged: &Self::Staged, _out: &Self::Out) -> String {
        String::new()
    }
}

impl GpuCorpus {
    /// Runs `job` over every resident segment of `corpus` (the corpus
    /// that was uploaded): the one preamble of every GPU search. Natively
    /// runs of one corpus from several threads take turns (the state
    /// lock); in a browser (one thread) a run started while another awaits
    /// the GPU is an error.
    // The state lock is held across the awaits on purpose: it serialises
    // runs of this corpus (they share the uniform, the result bits and the
    // readback buffers). Natively the future runs on the caller's thread
    // under `block_on`; on wasm32 the lock is only ever tried.
    #[allow(clippy::await_holding_lock)]
    pub(crate) async fn run<J: GpuJob>(
        &self,
        corpus: &Corpus,
        job: &J,
    ) -> Result<(Readout, J::Staged, J::Out), Error> {
        self.check_corpus(corpus)?;
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let t0 = Instant::now();
        let mut st = self.lock_state()?;
        let t_locked = t0.elapsed();
        let lines = job.lines();
        let use_ts = job.timestamps(self);
        let r = c
            .scoped(async {
                let staged = job.stage(self, &mut st)?;
                let t_staged = t0.elapsed();
                let (readout, mut out, t) = {
                    let driver = job.driver(self, &st, &staged)?;
                    let mut enc = self.encode(&driver, &st.binds, use_ts);
                    self.encode_readback(&mut enc, &driver, lines, use_ts);
                    let t_encoded = t0.elapsed();
                    c.queue.submit([enc.finish()]);
                    let t_submitted = t0.elapsed();
                    c.map_many_async(&self.readback_maps(&driver, lines, use_ts))
                        .await?;
                    let t_mapped = t0.elapsed();
                    let readout = Readout {
                        counts: self.readback.read_counts(&self.segs)?,
                        kernel_time: match use_ts {
                            true => self.readback.read_timestamps(c.ts_period)?,
                            false => None,
                        },
                        bits: match lines {
                            true => Some(self.readback.read_bits(&self.segs)?),
                            false => None,
                        },
                    };
                    let out = job.read(self, &driver, &readout).await?;
                    (readout, out, [t_encoded, t_submitted, t_mapped])
                };
                job.after(self, &mut st, &staged, &readout, &mut out)
                    .await?;
                if c.tuning.trace_queries {
                    let us = |d: Duration| d.as_secs_f64() * 1e6;
                    eprintln!(
                        "logsieve: {}{} query: locked at {:.1} us, staged at {:.1} us, \
                         encoded at {:.1} us, submitted at {:.1} us, mapped at {:.1} us, \
                         done at {:.1} us, kernel {}",
                        job.name(),
                        job.describe(&staged, &out),
                        us(t_locked),
                        us(t_staged),
                        us(t[0]),
                        us(t[1]),
                        us(t[2]),
                        us(t0.elapsed()),
                        super::readback::trace_kernel(readout.kernel_time),
                    );
                }
                Ok((readout, staged, out))
            })
            .await;
        if r.is_ok() {
            st.clean = job.leaves_clean();
        }
        r
    }
}
