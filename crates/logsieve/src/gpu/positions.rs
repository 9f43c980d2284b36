//! brute-byte's match positions (see `kernels/brute_byte.rs` for the
//! append buffer's contract): after a run, an overflowed append buffer is
//! grown to the exact count (up to one binding) and, with line ids wanted,
//! every position is read back, re-running the kernel on byte windows
//! where even the grown buffer cannot hold them. The oversized segments'
//! positions come from the CPU.

use super::corpus::{GpuCorpus, State};
use super::kernels::params as P;
use super::upload::round_up;
use crate::corpus::{Corpus, Document, Segment};
use crate::error::Error;
use crate::query::{CaseMode, Query};

impl GpuCorpus {
    /// After a brute-byte run whose per-segment counters are `counts`:
    /// grows each overflowed append buffer, and with `lines` returns every
    /// match start per document, ascending (`prm`: the run's uniform;
    /// `folded`: its pattern).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn brute_byte_positions(
        &self,
        corpus: &Corpus,
        q: &Query,
        st: &mut State,
        counts: &[[u32; 4]],
        prm: &[u32; P::WORDS],
        folded: &[u8],
        lines: bool,
    ) -> Result<Option<Vec<Vec<u64>>>, Error> {
        let c = &*self.ctx.inner;
        let bind_max = c.info.max_storage_buffer_binding_size / 4;
        for (i, s) in self.segs.iter().enumerate() {
            let need = u64::from(counts[i][2]);
            let cap = st.positions[i].size() / 4;
            if need > cap {
                let p = Self::positions_buffer(c, need.min(bind_max));
                st.binds[i] = s.bind(
                    &c.device,
                    &c.pipes.layout,
                    &p,
                    &st.signatures[i],
                    &self.params,
                );
                st.positions[i] = p;
            }
        }
        if !lines {
            return Ok(None);
        }
        let mut per_doc = vec![Vec::new(); corpus.docs().len()];
        for (i, s) in self.segs.iter().enumerate() {
            let got = self
                .collect_positions(st, i, u64::from(counts[i][2]), prm, s.n_bytes)
                .await?;
            per_doc[s.doc].extend(got.into_iter().map(|p| s.bytes.start + u64::from(p)));
        }
        for (di, seg) in &self.cpu_segs {
            let doc = &corpus.docs()[*di];
            per_doc[*di].extend(cpu_positions(doc, seg, folded, q.case() == CaseMode::Ascii));
        }
        per_doc.iter_mut().for_each(|v| v.sort_unstable());
        Ok(Some(per_doc))
    }

    /// All match positions of segment `i` (relative to the segment), given
    /// the count from the run that just finished. When the count exceeds
    /// the append buffer (which has already been grown as far as one binding
    /// allows), the kernel is re-run on byte windows no larger than the
    /// buffer: a window of `cap` bytes holds at most `cap` match starts.
    async fn collect_positions(
        &self,
        st: &State,
        i: usize,
        count: u64,
        prm: &[u32; P::WORDS],
        n_bytes: u32,
    ) -> Result<Vec<u32>, Error> {
        let cap = st.positions[i].size() / 4;
        let windows: Vec<Option<(u32, u32)>> = if count <= cap {
            // The run that just finished may have overflowed the old buffer;
            // re-run it once into the grown one when so.
            vec![None]
        } else {
            let step = cap.clamp(1, u64::from(u32::MAX)) as u32;
            (0..n_bytes)
                .step_by(step as usize)
                .map(|lo| Some((lo, lo.saturating_add(step).min(n_bytes))))
                .collect()
        };
        let mut out = Vec::with_capacity(count as usize);
        for w in windows {
            let mut p = *prm;
            if let Some((lo, hi)) = w {
                p[P::WIN_LO] = lo;
                p[P::WIN_HI] = hi;
            }
            out.extend(self.run_positions(st, i, &p).await?);
        }
        if w_total_mismatch(&out, count) {
            return Err(Error::backend(format!(
                "GPU brute-byte found {} positions, then {} on re-reading: not trusting either",
                count,
                out.len()
            )));
        }
        Ok(out)
    }

    /// Runs brute-byte on segment `i` with parameters `p` and reads the
    /// appended positions back (the caller guarantees they fit).
    async fn run_positions(
        &self,
        st: &State,
        i: usize,
        p: &[u32; P::WORDS],
    ) -> Result<Vec<u32>, Error> {
        let c = &*self.ctx.inner;
        let s = &self.segs[i];
        self.write_params(p);
        let mut enc = c.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&s.buffers.counters, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_bind_group(0, &st.binds[i], &[]);
            c.grid().run(
                &mut pass,
                &c.pipes.brute_byte,
                u64::from(s.n_bytes).div_ceil(256),
            );
        }
        enc.copy_buffer_to_buffer(&s.buffers.counters, 0, &self.readback.counts, 0, 16);
        c.queue.submit([enc.finish()]);
        c.map_many_async(&[(&self.readback.counts, 16)]).await?;
        let n = u64::from(self.readback.read_first_appended()?);
        let cap = st.positions[i].size() / 4;
        if n > cap {
            return Err(Error::backend(format!(
                "GPU brute-byte: {n} positions in a window of a buffer of {cap}"
            )));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        let size = n * 4;
        let rb = c.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback positions"),
            size: round_up(size, 4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = c.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&st.positions[i], 0, &rb, 0, size);
        c.queue.submit([enc.finish()]);
        c.map_many_async(&[(&rb, size)]).await?;
        let out = {
            let v = rb
                .get_mapped_range(0..size)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            v.chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect()
        };
        rb.unmap();
        Ok(out)
    }
}

fn w_total_mismatch(out: &[u32], count: u64) -> bool {
    out.len() as u64 != count
}

/// Match starts (overlapping) in an oversized segment, found on the CPU.
fn cpu_positions(doc: &Document, seg: &Segment, folded: &[u8], fold: bool) -> Vec<u64> {
    let data = &doc.data()[seg.bytes.start as usize..seg.bytes.end as usize];
    let m = folded.len();
    let eq = |a: u8, b: u8| {
        if fold {
            a.to_ascii_lowercase() == b
        } else {
            a == b
        }
    };
    let mut out = Vec::new();
    if data.len() < m {
        return out;
    }
    for p in 0..=data.len() - m {
        if data[p..p + m].iter().zip(folded).all(|(&a, &b)| eq(a, b)) {
            out.push(seg.bytes.start + p as u64);
        }
    }
    out
}
