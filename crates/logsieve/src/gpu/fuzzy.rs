//! `--fuzzy K` on the GPU: a search run by the `bitap` kernel
//! (`kernels/bitap.rs`) over every resident segment, the query's packed
//! pattern chain (`query::bitap`) in one table buffer. Every line is
//! decided on the GPU (ASCII `-i` is in the masks), so matching lines come
//! back as the result bits with one submission and one wait; nothing is
//! verified on the host. Async all the way (the browser runs it).

use web_time::Instant;

use super::corpus::GpuCorpus;
use super::kernels::bitap::{self, BitapDriver};
use super::readback::{PerSegment, RawHits};
use super::search::GpuSearch;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;
use crate::results::Want;

impl GpuCorpus {
    /// [`GpuCorpus::search_part`] with the `bitap` kernel.
    // The state lock is held across the awaits, as in `search_async`.
    #[allow(clippy::await_holding_lock)]
    pub(crate) async fn search_bitap(
        &self,
        corpus: &Corpus,
        q: &Query,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let b = crate::support::bitap_support(q)
            .map_err(|u| Error::backend(format!("the GPU cannot run this query: {u}")))?;
        self.check_corpus(corpus)?;
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let pipes = bitap::pipes(&self.ctx, bitap::width_for(b.words), b.k).await?;
        let lines = want == Want::Lines;
        let mut st = self.lock_state()?;
        let (counts, seg_lines, kernel_time) = c
            .scoped(async {
                let driver = BitapDriver::new(c, &pipes, &b, &self.segs);
                let use_ts = self.timestamps_on();
                let mut enc = self.encode(&driver, &st.binds, use_ts);
                self.encode_readback(&mut enc, &driver, lines, use_ts);
                c.queue.submit([enc.finish()]);
                c.map_many_async(&self.readback_maps(&driver, lines, use_ts))
                    .await?;
                let counts = self.readback.read_counts(&self.segs)?;
                let kernel_time = match use_ts {
                    true => self.readback.read_timestamps(c.ts_period)?,
                    false => None,
                };
                let seg_lines = match lines {
                    true => Some(self.readback.read_bits(&self.segs)?),
                    false => None,
                };
                Ok((counts, seg_lines, kernel_time))
            })
            .await?;
        st.clean = false;
        drop(st);
        let raw = self.collect(corpus, q, PerSegment::new(&counts, seg_lines));
        Ok((
            raw,
            GpuSearch {
                docs: Vec::new(),
                kernel_time,
                end_to_end: t0.elapsed(),
                candidates: None,
                positions: None,
            },
        ))
    }
}
