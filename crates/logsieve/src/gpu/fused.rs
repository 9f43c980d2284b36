//! Several single-literal counts in one submission: each query's `scan`
//! and pop-count over every segment in a compute pass of its own, its
//! counters copied to its own slot of one readback buffer, then one submit
//! and one wait for all of them. The session's fuser
//! (`session/fuse.rs`) gathers the counts queued while the device is busy
//! and hands them here; each answer is its own query's (the passes run in
//! order, and each count-only pop-count zeroes the bits it counted, so
//! the next query starts from clear bits, as one query after another
//! would).

use std::time::Duration;

use web_time::Instant;

use super::corpus::GpuCorpus;
use super::kernels::count::PopCount;
use super::kernels::scan::{self, Scan};
use super::kernels::{params as P, KernelDriver, SegmentRun};
use super::readback::{PerSegment, RawHits};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;

/// Where one fused submission's host time went (for the session's
/// profile of fused counts).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BatchTimes {
    /// Waiting for the corpus's state lock (another search running).
    pub(crate) lock: Duration,
    /// Recording the passes and copies.
    pub(crate) encode: Duration,
    /// `Queue::submit`.
    pub(crate) submit: Duration,
    /// From the submission to the readback mapped (the GPU's work and
    /// the polls).
    pub(crate) wait: Duration,
    /// Reading the mapped counters.
    pub(crate) read: Duration,
}

/// Per query, each segment's counters (`[matching lines, ...]`).
pub(crate) type BatchCounters = Vec<Vec<[u32; 4]>>;
impl GpuCorpus {
    /// Whether [`GpuCorpus::count_batch`] can count `q`: a whole corpus
    /// (not a shard), `scan` taking its parameters as immediate data (so
    /// each query of a submission carries its own), and a query `scan`
    /// runs (one literal).
    pub(crate) fn can_fuse(&self, q: &Query) -> bool {
        self.holds().is_none()
            && self.ctx.inner.info.scan_immediates
            && crate::kernel::Kernel::effective(Some(crate::kernel::Kernel::Scan), q)
                .multi()
                .is_none()
            && super::unsupported_reason(q).is_none()
    }

    /// `scan`'s uniform words for `q` (the fuser's job carries them).
    pub(crate) fn scan_params(&self, q: &Query) -> [u32; P::WORDS] {
        self.params_for(q).0
    }

    /// Counts the lines matching each query of `prms` (their
    /// [`GpuCorpus::scan_params`]) on every segment, in one submission:
    /// per query, each segment's counters (`[matching lines, ...]`).
    /// Blocks: natively only.
    pub(crate) fn count_batch(
        &self,
        prms: &[[u32; P::WORDS]],
    ) -> Result<(BatchCounters, BatchTimes), Error> {
        pollster::block_on(self.count_batch_async(prms))
    }

    // The state lock is held across the wait on purpose, as in
    // `GpuCorpus::run`: searches of one corpus share its buffers.
    #[allow(clippy::await_holding_lock)]
    async fn count_batch_async(
        &self,
        prms: &[[u32; P::WORDS]],
    ) -> Result<(BatchCounters, BatchTimes), Error> {
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let t0 = Instant::now();
        let mut st = self.lock_state()?;
        let mut times = BatchTimes {
            lock: t0.elapsed(),
            ..Default::default()
        };
        let nseg = self.segs.len();
        if prms.is_empty() || nseg == 0 {
            st.clean = st.was_clean;
            return Ok((vec![Vec::new(); prms.len()], times));
        }
        let slot = nseg as u64 * 16;
        let size = slot * prms.len() as u64;
        // One readback buffer for the largest submission so far.
        if st.batch_readback.as_ref().is_none_or(|b| b.size() < size) {
            st.batch_readback = Some(c.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback fused counts"),
                size: size.next_power_of_two().max(16),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let rb = st.batch_readback.clone().expect("made above");
        let was_clean = st.was_clean;
        let res = c
            .scoped(async {
                let t = Instant::now();
                let p = &c.pipes;
                let grid = c.grid();
                let mut enc = c.device.create_command_encoder(&Default::default());
                for (i, prm) in prms.iter().enumerate() {
                    let imm = scan::immediates(prm);
                    let driver = Scan {
                        pipeline: p.scan.get(&c.device, scan::pipeline_of(prm)),
                        immediates: Some(&imm),
                        // Only the first query may find bits another
                        // search left set; each pop-count zeroes them.
                        clear_result: i == 0 && !was_clean,
                        count: Some(PopCount {
                            result: &p.count_result_zero,
                            candidates: None,
                        }),
                        grid,
                    };
                    for s in &self.segs {
                        driver.clear(&mut enc, s);
                    }
                    {
                        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: Some(driver.label()),
                            timestamp_writes: None,
                        });
                        for (index, (segment, bind)) in self.segs.iter().zip(&st.binds).enumerate()
                        {
                            driver.record(
                                &mut pass,
                                SegmentRun {
                                    segment,
                                    bind,
                                    index,
                                },
                            );
                        }
                    }
                    for (j, s) in self.segs.iter().enumerate() {
                        enc.copy_buffer_to_buffer(
                            &s.buffers.counters,
                            0,
                            &rb,
                            i as u64 * slot + j as u64 * 16,
                            16,
                        );
                    }
                }
                times.encode = t.elapsed();
                let t = Instant::now();
                c.queue.submit([enc.finish()]);
                times.submit = t.elapsed();
                let t = Instant::now();
                c.map_many_async(&[(&rb, size)]).await?;
                times.wait = t.elapsed();
                let t = Instant::now();
                let out = {
                    let v = rb
                        .get_mapped_range(0..size)
                        .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
                    v.chunks_exact(slot as usize)
                        .map(|q| {
                            q.chunks_exact(16)
                                .map(|ch| {
                                    let w = |k: usize| {
                                        u32::from_le_bytes(
                                            ch[k * 4..k * 4 + 4].try_into().expect("4 bytes"),
                                        )
                                    };
                                    [w(0), w(1), w(2), w(3)]
                                })
                                .collect()
                        })
                        .collect::<Vec<Vec<[u32; 4]>>>()
                };
                rb.unmap();
                times.read = t.elapsed();
                Ok(out)
            })
            .await;
        // Every pop-count zeroed the bits it counted.
        st.clean = res.is_ok();
        Ok((res?, times))
    }

    /// Whether [`GpuCorpus::count_in_one_pass`] can count the literals
    /// of fused requests: every resident segment is one document's (the
    /// many-literal kernels' per-pattern counters add up over the whole
    /// pass, and a request's answer is per document).
    pub(crate) fn one_pass_fits(&self) -> bool {
        self.segs
            .first()
            .is_none_or(|f| self.segs.iter().all(|s| s.doc == f.doc))
    }

    /// Counts the lines holding each literal of `set` (a literal query of
    /// several patterns, each of which a fused request asked alone) in one
    /// pass of a many-literal kernel over every resident segment: per
    /// pattern of `set`, its counters in [`GpuCorpus::count_batch`]'s form
    /// (the lines on the first segment, which holds the one document's
    /// share; [`GpuCorpus::one_pass_fits`] must hold). The CPU's oversized
    /// segments are left to each request's own merge, as after
    /// `count_batch`. With the counters, the pass's kernel time where the
    /// device has timestamps (a first run's wall time holds building the
    /// kernel's pipelines). Blocks: natively only.
    pub(crate) fn count_in_one_pass(
        &self,
        corpus: &Corpus,
        set: &Query,
    ) -> Result<(BatchCounters, Option<Duration>), Error> {
        use super::kernels::multi_common::CountersRead;
        if !self.one_pass_fits() {
            return Err(Error::backend(
                "one pass counts need one document on the GPU",
            ));
        }
        if self.segs.is_empty() {
            // Every line is the CPU's (each longer than a segment):
            // nothing for the pass to count; each request's merge adds them.
            // REGRESSION (fused_counts proptest): this was an error.
            return Ok((vec![Vec::new(); set.patterns().len()], None));
        }
        let kernel = super::multi::MultiKernel::Bloom;
        super::pattern_set::check_multi(set, kernel)?;
        let (up, run) = pollster::block_on(self.run_multi(corpus, set, kernel, false, true, None))?;
        let n = set.patterns().len();
        let mut lines = vec![0u64; n];
        match run.pcounts {
            Some(CountersRead::Listed(listed)) => {
                for e in &listed {
                    for p in up.tables.patterns_of(e.group) {
                        lines[p] = e.lines;
                    }
                }
            }
            Some(CountersRead::Full { words, .. }) => {
                for (p, &g) in up.tables.set.group_of.iter().enumerate() {
                    let g = 4 * g as usize;
                    lines[p] = u64::from(words[g]) | (u64::from(words[g + 1]) << 32);
                }
            }
            None => return Err(Error::backend("per-pattern counters were not read back")),
        }
        let nseg = self.segs.len();
        let counts = lines
            .into_iter()
            .map(|l| {
                let mut c = vec![[0u32; 4]; nseg];
                // Counters are u32 per segment: a share past that is
                // split over the segments (they add up per document).
                let mut left = l;
                for slot in c.iter_mut() {
                    let take = left.min(u64::from(u32::MAX));
                    slot[0] = take as u32;
                    left -= take;
                }
                c
            })
            .collect();
        Ok((counts, run.kernel_time))
    }

    /// One query's answer from its counters of [`GpuCorpus::count_batch`]:
    /// the CPU's oversized segments added, then `-v` and `-m`.
    pub(crate) fn finish_count(
        &self,
        corpus: &Corpus,
        q: &Query,
        counts: &[[u32; 4]],
        max_count: Option<u64>,
    ) -> Vec<crate::DocHits> {
        let raw: RawHits = self.collect(corpus, q, PerSegment::new(counts, None));
        raw.finish(&self.line_counts(), q.invert(), max_count)
    }
}
