//! `--fuzzy K` on the GPU: a search run by the `bitap` kernel
//! (`kernels/bitap.rs`) over every resident segment, the query's packed
//! pattern chain (`query::bitap`) in one table buffer. Every line is
//! decided on the GPU (ASCII `-i` is in the masks), so matching lines come
//! back as the result bits with one submission and one wait; nothing is
//! verified on the host. Async all the way (the browser runs it).

use std::sync::Arc;

use web_time::Instant;

use super::corpus::{GpuCorpus, State};
use super::kernels::bitap::{self, BitapDriver, BitapPipes};
use super::readback::RawHits;
use super::run::GpuJob;
use super::search::GpuSearch;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::bitap::Bitap;
use crate::query::Query;
use crate::results::Want;

impl GpuCorpus {
    /// [`GpuCorpus::search_part`] with the `bitap` kernel: `b` is `q`'s
    /// chains (support's, [`crate::support::bitap_support`]).
    pub(crate) async fn search_bitap(
        &self,
        corpus: &Corpus,
        q: &Query,
        b: &Arc<Bitap>,
        want: Want,
    ) -> Result<(RawHits, GpuSearch), Error> {
        let t0 = Instant::now();
        let job = BitapJob {
            pipes: bitap::pipes(&self.ctx, bitap::width_for(b.words), b.k).await?,
            b: b.clone(),
            lines: want == Want::Lines,
        };
        let (readout, (), ()) = self.run(corpus, &job).await?;
        Ok(self.part_answer(corpus, q, readout, t0, None, None))
    }
}

/// A pattern chain on `bitap`: its tables are the driver's.
struct BitapJob {
    pipes: Arc<BitapPipes>,
    b: Arc<Bitap>,
    lines: bool,
}

impl GpuJob for BitapJob {
    type Staged = ();
    type Driver<'a> = BitapDriver<'a>;
    type Out = ();

    fn name(&self) -> &'static str {
        crate::Kernel::Bitap.name()
    }

    fn lines(&self) -> bool {
        self.lines
    }

    fn stage(&self, _g: &GpuCorpus, _st: &mut State) -> Result<(), Error> {
        Ok(())
    }

    fn driver<'a>(
        &'a self,
        g: &'a GpuCorpus,
        _st: &'a State,
        _staged: &'a (),
    ) -> Result<BitapDriver<'a>, Error> {
        Ok(BitapDriver::new(
            &g.ctx.inner,
            &self.pipes,
            &self.b,
            &g.segs,
        ))
    }
}
