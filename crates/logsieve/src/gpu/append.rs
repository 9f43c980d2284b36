//! Lines appended to a resident corpus (`logsieve serve --follow`): only
//! the new bytes, line offsets and block hints go to the device. The
//! lines fill the room of the document's last segment opened for appends;
//! past it a new segment is opened with room (the same limits as the
//! upload: segment size, binding size, lines per binding; a line never
//! split; a line larger than a segment is searched on the CPU, as at
//! upload). Segments of the upload have no room: the first append to a
//! document opens one.

use super::corpus::GpuCorpus;
use super::kernels::brute_byte;
use super::upload::{self, Room};
use crate::corpus::{Corpus, Segment};
use crate::error::Error;

/// The least room a segment opened for appends gets (bytes): smaller
/// batches share it. Each next one of the same document doubles the
/// last, up to the segment limit, so a document growing to S bytes
/// needs about log2(S / 1 MiB) segments more than its upload, and its
/// room wastes less than what it holds.
const MIN_ROOM: u64 = 1 << 20;

/// Bytes of room per line of room: lines shorter than this on average
/// fill a segment's lines before its bytes (then another opens).
const BYTES_PER_LINE_ROOM: u64 = 32;

impl GpuCorpus {
    /// Brings the resident corpus up to `corpus` after lines were
    /// appended to its documents, or documents added
    /// (`Session::append_lines`, `push_document`): what the device holds
    /// is never written again. Errors on a shard, on a corpus that is not
    /// a grown copy of the one held, and on any device error; the caller
    /// then stops using this corpus (it may hold part of the new lines).
    /// Returns the bytes written to the device. Blocks.
    pub fn append(&mut self, corpus: &Corpus) -> Result<u64, Error> {
        if self.holds.is_some() {
            return Err(Error::backend(
                "a shard cannot take appended lines in place",
            ));
        }
        let ctx = self.ctx.clone();
        let c = &*ctx.inner;
        c.check_faults()?;
        pollster::block_on(c.scoped_as("appending lines", "append", async {
            let n = self.append_inner(corpus)?;
            c.queue.submit([]);
            c.wait_async().await?;
            Ok(n)
        }))
    }

    /// A shard ([`GpuCorpus::upload_lines`]) after lines were appended
    /// to document `doc`, the only change to `corpus`: with `take`, this
    /// shard holds the document's last lines and takes the new ones in
    /// place, as [`GpuCorpus::append`] does (the lines are the corpus's
    /// newest: they continue its last part); without, it only notes the
    /// document's new size (the lines are another part's, or the host's).
    /// Errors when another document changed, or when `take` is asked of
    /// a shard whose lines do not end where the document ended; the
    /// caller then uploads again. Returns the bytes written. Blocks.
    pub fn append_shard(&mut self, corpus: &Corpus, doc: usize, take: bool) -> Result<u64, Error> {
        let Some(holds) = &self.holds else {
            return Err(Error::backend("not a shard: use GpuCorpus::append"));
        };
        let docs = corpus.docs();
        if docs.len() != self.shape.len() || doc >= docs.len() {
            return Err(Error::backend("a shard's corpus gained or lost documents"));
        }
        let changed = docs
            .iter()
            .zip(&self.shape)
            .enumerate()
            .any(|(i, (d, &(b, l)))| {
                i != doc && (d.data().len() as u64, d.lines().len()) != (b, l)
            });
        if changed {
            return Err(Error::backend("a shard's other documents changed"));
        }
        let (_, old_lines) = self.shape[doc];
        if !take {
            self.shape[doc] = (docs[doc].data().len() as u64, docs[doc].lines().len());
            return Ok(0);
        }
        if !matches!(holds.last(), Some((d, r)) if *d == doc && r.end == old_lines) {
            return Err(Error::backend(
                "this shard does not hold the document's last lines",
            ));
        }
        let ctx = self.ctx.clone();
        let c = &*ctx.inner;
        c.check_faults()?;
        let n = pollster::block_on(c.scoped_as("appending lines", "append", async {
            let n = self.append_inner(corpus)?;
            c.queue.submit([]);
            c.wait_async().await?;
            Ok(n)
        }))?;
        if let Some((_, r)) = self.holds.as_mut().and_then(|h| h.last_mut()) {
            r.end = docs[doc].lines().len();
        }
        Ok(n)
    }

    fn append_inner(&mut self, corpus: &Corpus) -> Result<u64, Error> {
        let ctx = self.ctx.clone();
        let c = &*ctx.inner;
        let max_seg = self.limits.max_seg;
        let max_lines = self.limits.max_lines;
        let shift = self.limits.blk_shift;
        let n_segs = self.segs.len();
        let mut grown = false;
        let mut written = 0u64;
        let mut new_bytes = 0u64;
        if corpus.docs().len() < self.shape.len() {
            return Err(Error::backend("appended corpus lost documents"));
        }
        self.rooms.resize(corpus.docs().len(), 0);
        self.shape.resize(corpus.docs().len(), (0, 0));
        for (di, doc) in corpus.docs().iter().enumerate() {
            let (old_bytes, old_lines) = self.shape[di];
            let data = doc.data();
            let len = data.len() as u64;
            let idx = doc.lines();
            let n = idx.len();
            if (len, n) == (old_bytes, old_lines) {
                continue;
            }
            let starts = idx.starts();
            if len < old_bytes || n < old_lines || starts[old_lines as usize] != old_bytes {
                return Err(Error::backend(format!(
                    "{}: not the held document with lines appended",
                    doc.name()
                )));
            }
            new_bytes += len - old_bytes;
            let end_of = |l: u64| starts[l as usize].min(len);
            let mut line = old_lines;
            while line < n {
                // The document's segment that ends at this line, if it
                // has room for the next line.
                let tail = self
                    .segs
                    .iter()
                    .rposition(|s| s.doc == di && s.lines.end == line);
                if let Some(ti) = tail {
                    let s = &self.segs[ti];
                    let last = fit(
                        starts,
                        len,
                        line,
                        n,
                        s.bytes.start + u64::from(s.cap_bytes),
                        s.lines.start + u64::from(s.cap_lines),
                    );
                    if last > line {
                        let s = &mut self.segs[ti];
                        written += upload::grow_segment(c, s, data, starts, last, shift);
                        grown = true;
                        line = last;
                        continue;
                    }
                }
                let first_len = end_of(line + 1) - end_of(line);
                if first_len > max_seg {
                    // As at upload: a line larger than a segment is the
                    // CPU's (not resident).
                    new_bytes -= first_len;
                    self.cpu_segs.push((
                        di,
                        Segment {
                            lines: line..line + 1,
                            bytes: end_of(line)..end_of(line + 1),
                            oversized: true,
                        },
                    ));
                    line += 1;
                    continue;
                }
                // A new segment with room: at least the rest of this
                // batch, twice the document's last room, 1 MiB.
                let rest = end_of(n) - end_of(line);
                let bytes = rest
                    .max(self.rooms[di].saturating_mul(2))
                    .max(MIN_ROOM)
                    .min(max_seg);
                let lines = (bytes / BYTES_PER_LINE_ROOM)
                    .max(n - line)
                    .min(max_lines)
                    .max(1);
                self.rooms[di] = bytes;
                let last = fit(starts, len, line, n, end_of(line) + bytes, line + lines);
                let seg = Segment {
                    lines: line..last,
                    bytes: end_of(line)..end_of(last),
                    oversized: false,
                };
                let s = upload::new_segment(
                    c,
                    di,
                    &seg,
                    starts,
                    shift,
                    Some(Room { bytes, lines }),
                    self.bits_total,
                );
                self.bits_total += u64::from(s.cap_words) * 4;
                written += upload::fill_segment(c, &s, data, 0);
                written += (last - line + 1) * 4
                    + (u64::from(s.n_bytes).div_ceil(1 << shift) + 1) * 4
                    + 16;
                self.segs.push(s);
                line = last;
            }
            self.shape[di] = (len, n);
        }
        self.upload_bytes += new_bytes;
        self.appended_written += written;
        if grown || self.segs.len() > n_segs {
            self.rebind(n_segs);
        }
        Ok(written)
    }

    /// After segments grew or were added (from `first_new` on): the new
    /// ones get their scratch buffers and bind groups, the readback grows,
    /// the automata (a bind group per segment) are built again, the
    /// signatures (sized per line) again on their next use, and the result
    /// bits are no longer known clean.
    fn rebind(&mut self, first_new: usize) {
        let c = &*self.ctx.inner;
        let dev = &c.device;
        let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let placeholder = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sigs placeholder"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let rebuild_all = st.signatures_built;
        if rebuild_all {
            // A grown segment's signatures would miss its new lines: drop
            // them all; the `signature` kernel builds them again on the
            // device from the resident bytes (nothing is uploaded).
            st.signatures_built = false;
            for g in &mut st.signatures {
                *g = placeholder.clone();
            }
        }
        for _ in first_new..self.segs.len() {
            st.positions
                .push(Self::positions_buffer(c, brute_byte::INITIAL_CAPACITY));
            st.signatures.push(placeholder.clone());
        }
        let from = if rebuild_all { 0 } else { first_new };
        st.binds.truncate(from);
        for i in from..self.segs.len() {
            let b = self.segs[i].bind(
                dev,
                &c.pipes.layout,
                &st.positions[i],
                &st.signatures[i],
                &self.params,
            );
            st.binds.push(b);
        }
        // A grown segment holds more lines than its candidate list.
        st.automata.clear();
        // The class sets' slots bind the segments as they were.
        st.class_slots.clear();
        if self.segs.len() > first_new {
            self.readback = super::readback::Readback::new(
                dev,
                self.segs.len(),
                self.bits_total,
                c.info.timestamps,
            );
        }
        st.clean = false;
        st.was_clean = false;
    }

    /// Bytes written to the device by appends so far: the appended bytes
    /// with their padding, line offsets, block hints and segment uniforms.
    pub fn appended_bytes_written(&self) -> u64 {
        self.appended_written
    }
}

/// The end (exclusive) of the lines from `line` (below `n`) whose bytes
/// end at or before `byte_limit` and whose number stays below
/// `line_limit`: `line` when not even it fits.
fn fit(starts: &[u64], len: u64, line: u64, n: u64, byte_limit: u64, line_limit: u64) -> u64 {
    let ends = &starts[line as usize + 1..=n as usize];
    let by_bytes = line + ends.partition_point(|&e| e.min(len) <= byte_limit) as u64;
    by_bytes.min(line_limit).max(line)
}
