//! Loading logs: which files ([`walk`]: ripgrep's directory walk), how they
//! are read (memory-mapped when stable, read otherwise, decompressed by
//! [`decode`] with `-z`), stdin; the line index; segments for backends with
//! a bounded buffer size.
//!
//! A [`Corpus`] is a list of [`Document`]s, one per input. A document's bytes
//! are never copied after loading; its [`LineIndex`] is built once, lazily,
//! by the first consumer that needs line numbers (a CPU count never does).

use std::ops::{Deref, Range};
use std::sync::OnceLock;

use crate::error::Error;

pub mod decode;
#[doc(hidden)]
pub mod fault;
#[cfg(not(target_arch = "wasm32"))]
pub mod follow;
mod line_index;
#[cfg(not(target_arch = "wasm32"))]
mod load;
mod memo;
mod open;
#[cfg(not(target_arch = "wasm32"))]
pub mod walk;

pub use line_index::LineIndex;
#[cfg(not(target_arch = "wasm32"))]
pub use load::{load_paths, LoadProgress};
pub(crate) use memo::Memo;
pub use open::BINARY_SNIFF;
#[cfg(not(target_arch = "wasm32"))]
pub use walk::{expand_paths, expand_paths_with, Found, SortBy, WalkOptions, Walker};

/// The bytes of one document: a memory map or an owned buffer.
pub enum Bytes {
    /// A read-only memory map of a file.
    Mmap(memmap2::Mmap),
    /// Bytes read into memory (stdin, `--no-mmap`, a file still being
    /// written, decompressed data, generated).
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mmap(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Bytes::Mmap(_) => "mmap",
            Bytes::Owned(_) => "owned",
        };
        write!(f, "Bytes::{kind}({} bytes)", self.len())
    }
}

/// How files are read.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// Read files into memory instead of memory-mapping them.
    pub no_mmap: bool,
    /// Decompress compressed files (`-z`): gzip, bzip2, xz, lzma, lzip,
    /// zstd and lz4, recognised by their magic bytes ([`decode`]).
    pub search_zip: bool,
}

/// A run of whole lines of one document, small enough for one buffer binding.
///
/// A line never spans two segments. A single line longer than the maximum
/// gets a segment of its own that is larger than the maximum
/// ([`Segment::oversized`]); a backend that cannot hold it must hand it to
/// another (the GPU backend hands it to the CPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Lines `lines.start .. lines.end` of the document.
    pub lines: Range<u64>,
    /// Byte range in the document, terminators included (the last line's
    /// terminator may be virtual, so `bytes.end <= data.len()`).
    pub bytes: Range<u64>,
    /// True when this segment is larger than the requested maximum.
    pub oversized: bool,
}

/// Room for a document's appended bytes and lines, made outside a lock
/// ([`Document::make_room`]); after [`Document::take_room`], the buffers
/// it replaced, to drop outside the lock.
#[derive(Debug, Default)]
pub struct Room {
    /// The document's size and line starts when the room was made.
    len: usize,
    lines: Option<usize>,
    data: Option<Vec<u8>>,
    starts: Option<Vec<u64>>,
    /// The bytes it replaced, held only to be dropped by the caller.
    _old: Option<Bytes>,
}

/// A copy of `src` in a buffer of `capacity` bytes, copied on all cores
/// (the follower's batch waits for it: one core copies a few GB/s). The
/// buffer comes zeroed from the allocator (untouched pages cost nothing
/// until written), then is cut to `src`'s length, keeping its capacity.
fn copy_with_room(src: &[u8], capacity: usize) -> Vec<u8> {
    use rayon::prelude::*;
    const PIECE: usize = 8 << 20;
    let mut v = vec![0u8; capacity.max(src.len())];
    v[..src.len()]
        .par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
    v.truncate(src.len());
    v
}

/// One searched input: a file, stdin, or generated data.
pub struct Document {
    name: String,
    data: Bytes,
    lines: OnceLock<LineIndex>,
    /// No byte >= 0x80 ([`Document::is_ascii`]), on first use; kept up to
    /// date by appends.
    ascii: OnceLock<bool>,
    warning: Option<Error>,
    /// Lines evicted before `data` (`serve --follow --retain`): line `i`
    /// of `data` is the document's line `first_line + i`.
    first_line: u64,
    /// Bytes evicted before `data`: byte `o` of `data` is the document's
    /// byte `first_offset + o`.
    first_offset: u64,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("name", &self.name)
            .field("data", &self.data)
            .finish()
    }
}

impl Document {
    /// A document over bytes already in memory.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Document {
        Document::new(name.into(), Bytes::Owned(data))
    }

    fn new(name: String, data: Bytes) -> Document {
        Document {
            name,
            data,
            lines: OnceLock::new(),
            ascii: OnceLock::new(),
            warning: None,
            first_line: 0,
            first_offset: 0,
        }
    }

    /// What is missing from this document, when it could be loaded only in
    /// part (the file shrank while being read; a compressed stream was cut
    /// short). The bytes that could be read are searched; a caller reports
    /// this and exits with an error status, as `zcat` does.
    pub fn warning(&self) -> Option<&Error> {
        self.warning.as_ref()
    }

    /// The display name (path as given, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The document's bytes (those held: after an eviction, from
    /// [`Document::first_offset`] on).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// True when the bytes are a memory map of the file (its pages are
    /// mapped as they are first read, or by [`Document::populate`]).
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.data, Bytes::Mmap(_))
    }

    /// Maps the pages of `range` of a memory-mapped document in one call
    /// (`MADV_POPULATE_READ`, Linux 5.14+): the planner's probe times it,
    /// the page faults a search of the map pays (`planner::scan_probe`).
    /// False for bytes in memory, or when the kernel cannot.
    pub(crate) fn populate(&self, range: Range<usize>) -> bool {
        match &self.data {
            #[cfg(target_os = "linux")]
            Bytes::Mmap(m) => m
                .advise_range(memmap2::Advice::PopulateRead, range.start, range.len())
                .is_ok(),
            _ => {
                let _ = range;
                false
            }
        }
    }

    /// Lines evicted before the held ones (`serve --follow --retain`,
    /// [`Document::without_prefix`]): line ids of searches and of
    /// [`Document::lines`] count from the held bytes; add this for the
    /// line's number in the whole file (0 when nothing was evicted).
    pub fn first_line(&self) -> u64 {
        self.first_line
    }

    /// Bytes evicted before the held ones: offsets into
    /// [`Document::data`] plus this are offsets in the whole file.
    pub fn first_offset(&self) -> u64 {
        self.first_offset
    }

    /// A copy of this document without its first `lines` lines (all of
    /// them when `lines` is larger): the kept suffix in a buffer with
    /// room to grow by as much again, its line index shifted (not
    /// rebuilt), and its first line number and byte offset advanced so
    /// line numbers and offsets stay those of the whole file. The copy is
    /// made beside readers (the server's read lock); the document itself
    /// is unchanged.
    pub fn without_prefix(&self, lines: u64) -> Document {
        let idx = self.lines();
        let lines = lines.min(idx.len());
        let cut = (idx.starts()[lines as usize] as usize).min(self.data.len());
        let kept = &self.data[cut..];
        let data = copy_with_room(kept, kept.len() * 2);
        let mut starts = Vec::with_capacity((idx.starts().len() - lines as usize) * 2);
        if lines == idx.len() {
            // Nothing kept (a last line without `\n`, virtual terminator
            // included, went with the rest).
            starts.push(0);
        } else {
            starts.extend(
                idx.starts()[lines as usize..]
                    .iter()
                    .map(|&s| s - cut as u64),
            );
        }
        Document {
            name: self.name.clone(),
            data: Bytes::Owned(data),
            lines: OnceLock::from(LineIndex { starts }),
            ascii: OnceLock::new(),
            warning: None,
            first_line: self.first_line + lines,
            first_offset: self.first_offset + cut as u64,
        }
    }

    /// True when no byte is >= 0x80: a Unicode class or `\b` then
    /// matches exactly its ASCII members (the GPU's class strings,
    /// `query::classes`). Checked on all cores on first use (the GPU's
    /// upload asks), then kept, and updated by [`Document::append`].
    pub fn is_ascii(&self) -> bool {
        *self.ascii.get_or_init(|| {
            use rayon::prelude::*;
            self.data.par_chunks(1 << 20).all(<[u8]>::is_ascii)
        })
    }

    /// The line index, built on first use.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.data))
    }

    /// True once the line index exists (no index work will happen).
    pub fn has_line_index(&self) -> bool {
        self.lines.get().is_some()
    }

    /// Appends `bytes` as a file grows: when the document's last line
    /// has no terminator, they continue it (a fresh read of the file sees
    /// one line), and when they do not end with `\n` the document ends in
    /// such a line again. The bytes are copied in (a memory map is copied
    /// into memory first), and the line index, when built, is extended,
    /// not rebuilt. Returns the number of the first line whose bytes
    /// changed: the continued line, else the first new one.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64, Error> {
        if bytes.is_empty() {
            return Ok(self.lines().len());
        }
        let continued = u64::from(!self.appendable());
        let first = self.lines().len() - continued;
        let base = self.data.len() as u64;
        if let Bytes::Mmap(m) = &self.data {
            self.data = Bytes::Owned(m.to_vec());
        }
        if let Bytes::Owned(v) = &mut self.data {
            v.extend_from_slice(bytes);
        }
        if let Some(idx) = self.lines.get_mut() {
            idx.extend(base, bytes);
        }
        if let Some(a) = self.ascii.get_mut() {
            *a = *a && bytes.is_ascii();
        }
        Ok(first)
    }

    /// Buffers with room for `bytes` more bytes and `lines` more lines,
    /// copies of this document's bytes and line index, when it lacks that
    /// room (`None` when it has it). A caller that shares the document
    /// makes them while readers still search it (the server under its
    /// read lock), then hands them to [`Document::take_room`] under its
    /// write lock: the copy of the whole document that growing a buffer
    /// costs happens outside the write lock. Rooms are at least twice the
    /// size held, so copies stay O(1) per appended byte over time.
    pub fn make_room(&self, bytes: usize, lines: usize) -> Option<Room> {
        let len = self.data.len();
        let data = match &self.data {
            Bytes::Owned(v) if v.capacity() - v.len() >= bytes => None,
            _ => Some(copy_with_room(&self.data, len + bytes.max(len).max(4096))),
        };
        let starts = self.lines.get().and_then(|idx| {
            let s = &idx.starts;
            (s.capacity() - s.len() < lines).then(|| {
                let mut v = Vec::with_capacity(s.len() + lines.max(s.len()).max(1024));
                v.extend_from_slice(s);
                v
            })
        });
        (data.is_some() || starts.is_some()).then_some(Room {
            len,
            lines: self.lines.get().map(|i| i.starts.len()),
            data,
            starts,
            _old: None,
        })
    }

    /// Takes the buffers of `room` (made by [`Document::make_room`] from
    /// this document as it is now) in place of its own, and returns the
    /// old ones in it, for the caller to drop after its lock. A room made
    /// before the document changed is not taken (returned as it came):
    /// the next append then grows the buffers itself.
    pub fn take_room(&mut self, mut room: Room) -> Room {
        if room.len != self.data.len() || room.lines != self.lines.get().map(|i| i.starts.len()) {
            return room;
        }
        if let Some(v) = room.data.take() {
            let old = std::mem::replace(&mut self.data, Bytes::Owned(v));
            room._old = Some(old);
        }
        if let (Some(v), Some(idx)) = (room.starts.take(), self.lines.get_mut()) {
            room.starts = Some(std::mem::replace(&mut idx.starts, v));
        }
        room
    }

    /// True when the document is empty or ends with `\n`: appended bytes
    /// start a new line (otherwise they continue the last one).
    pub fn appendable(&self) -> bool {
        self.data.is_empty() || self.data.ends_with(b"\n")
    }

    /// The bytes of line `i`, terminator excluded.
    pub fn line(&self, i: u64) -> &[u8] {
        let r = self.lines().line_range(i);
        &self.data[r.start as usize..r.end as usize]
    }

    /// The bytes of the line starting at byte `start`, terminator
    /// excluded (no line index needed: one `memchr` to its end).
    pub fn line_at(&self, start: u64) -> &[u8] {
        let s = (start as usize).min(self.data.len());
        let rest = &self.data[s..];
        &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())]
    }

    /// The offset of the first NUL byte, if any: such a document is binary
    /// (ripgrep's rule); it is searched, but lines are not printed.
    pub fn binary_offset(&self) -> Option<u64> {
        memchr::memchr(0, &self.data).map(|o| o as u64)
    }

    /// Splits the document into segments of at most `max_bytes` bytes at line
    /// boundaries.
    pub fn segments(&self, max_bytes: u64) -> Vec<Segment> {
        let max_bytes = max_bytes.max(1);
        let idx = self.lines();
        let starts = idx.starts();
        let n = idx.len();
        let len = self.data.len() as u64;
        let mut out = Vec::new();
        let mut first = 0u64;
        while first < n {
            let base = starts[first as usize];
            // The furthest line end (exclusive, terminator included) within
            // base + max_bytes.
            let limit = base.saturating_add(max_bytes);
            // Number of lines whose end (starts[i+1]) is <= limit; a virtual
            // terminator counts as one byte past the data, which is harmless.
            let ends = &starts[first as usize + 1..];
            let fit = ends.partition_point(|&e| e.min(len) <= limit) as u64;
            let (last, oversized) = if fit == 0 {
                (first + 1, true)
            } else {
                (first + fit, false)
            };
            out.push(Segment {
                lines: first..last,
                bytes: base..starts[last as usize].min(len),
                oversized,
            });
            first = last;
        }
        out
    }
}

/// All the documents of one search.
#[derive(Debug)]
pub struct Corpus {
    docs: Vec<Document>,
    /// The planner's samples of recent queries over this corpus
    /// (`planner::sample`): a repeated query is routed without sampling
    /// again. Emptied when a document is added.
    pub(crate) samples: std::sync::Mutex<Memo>,
    /// This corpus as it is now ([`Corpus::epoch`]).
    epoch: u64,
    /// [`Corpus::fix_measured_speeds`].
    pub(crate) fixed_speed: Option<f64>,
}

impl Default for Corpus {
    fn default() -> Corpus {
        Corpus::from_docs(Vec::new())
    }
}

/// A value no corpus has had in this process ([`Corpus::epoch`]).
fn next_epoch() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Corpus {
        Corpus::default()
    }

    /// A corpus of one in-memory document.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Corpus {
        Corpus::from_docs(vec![Document::from_bytes(name, data)])
    }

    /// Names this corpus as it is now, unique in the process: a new corpus
    /// gets a new one, and so does every change to its documents (a
    /// document added, lines appended, buffers replaced). What is derived
    /// from the corpus and kept outside it (the routing point's memo,
    /// `session::route::Memo`) is keyed by it.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Adds a document.
    pub fn push(&mut self, doc: Document) {
        self.grew();
        self.docs.push(doc);
    }

    /// Forgets what was derived from the corpus before it grew: the
    /// planner's samples, and the epoch.
    fn grew(&mut self) {
        if let Ok(m) = self.samples.get_mut() {
            m.clear();
        }
        self.epoch = next_epoch();
    }

    /// Appends whole lines to document `doc` ([`Document::append`]);
    /// returns the number of its first appended line.
    pub fn append(&mut self, doc: usize, bytes: &[u8]) -> Result<u64, Error> {
        self.grew();
        match self.docs.get_mut(doc) {
            Some(d) => d.append(bytes),
            None => Err(Error::query(format!("no document {doc} to append to"))),
        }
    }

    /// Gives document `doc` the buffers of `room` ([`Document::take_room`]);
    /// returns what it replaced (drop it after the lock).
    pub fn take_room(&mut self, doc: usize, room: Room) -> Room {
        self.epoch = next_epoch();
        match self.docs.get_mut(doc) {
            Some(d) => d.take_room(room),
            None => room,
        }
    }

    /// Makes the planner's measurements of this machine over this corpus
    /// a fixed number (GB/s; `0` measures again): its memory scan probe
    /// reads `gbps`, a sampled matcher runs at it, and the runs of a
    /// session over it are not folded into its calibration. Routes are
    /// then decided by the corpus, the query, the options and the
    /// calibration alone, never by how loaded the machine is: what tests
    /// of routing need. `LOGSIEVE_FIXED_SPEED=GBPS` does it for every
    /// corpus of a process.
    pub fn fix_measured_speeds(&mut self, gbps: f64) {
        self.fixed_speed = (gbps > 0.0 && gbps.is_finite()).then_some(gbps);
        self.grew();
    }

    /// A corpus of `docs` (e.g. [`Document::without_prefix`] copies).
    pub fn from_docs(docs: Vec<Document>) -> Corpus {
        Corpus {
            docs,
            samples: Default::default(),
            fixed_speed: None,
            epoch: next_epoch(),
        }
    }

    /// The documents, in the order they were added.
    pub fn docs(&self) -> &[Document] {
        &self.docs
    }

    /// Total bytes over all documents.
    pub fn total_bytes(&self) -> u64 {
        self.docs.iter().map(|d| d.data().len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::time::{Duration, SystemTime};

    use super::*;

    fn lines_of(data: &[u8]) -> Vec<Vec<u8>> {
        let d = Document::from_bytes("t", data.to_vec());
        (0..d.lines().len()).map(|i| d.line(i).to_vec()).collect()
    }

    #[test]
    fn line_index_conventions() {
        assert!(lines_of(b"").is_empty());
        assert_eq!(lines_of(b"\n"), vec![b"".to_vec()]);
        assert_eq!(lines_of(b"a"), vec![b"a".to_vec()]);
        assert_eq!(lines_of(b"a\n"), vec![b"a".to_vec()]);
        assert_eq!(lines_of(b"a\nb"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(
            lines_of(b"a\r\n\nb\r"),
            vec![b"a\r".to_vec(), b"".to_vec(), b"b\r".to_vec()]
        );
    }

    #[test]
    fn line_of_maps_every_byte() {
        let data = b"ab\n\ncd\r\nef";
        let d = Document::from_bytes("t", data.to_vec());
        let idx = d.lines();
        let want = [0, 0, 0, 1, 2, 2, 2, 2, 3, 3];
        for (off, w) in want.iter().enumerate() {
            assert_eq!(idx.line_of(off as u64), *w, "offset {off}");
        }
    }

    #[test]
    fn segments_cover_all_lines_and_respect_max() {
        let mut data = Vec::new();
        for i in 0..200 {
            data.extend(std::iter::repeat_n(b'a', i % 17));
            data.push(b'\n');
        }
        data.extend_from_slice(b"tail");
        let d = Document::from_bytes("t", data.clone());
        for max in [1u64, 5, 16, 17, 18, 64, 1000, 1 << 20] {
            let segs = d.segments(max);
            let mut next_line = 0;
            let mut next_byte = 0;
            for s in &segs {
                assert_eq!(s.lines.start, next_line);
                assert_eq!(s.bytes.start, next_byte);
                assert!(s.lines.end > s.lines.start);
                let size = s.bytes.end - s.bytes.start;
                assert_eq!(s.oversized, size > max, "max {max} seg {s:?}");
                if s.oversized {
                    assert_eq!(s.lines.end - s.lines.start, 1);
                }
                next_line = s.lines.end;
                next_byte = s.bytes.end;
            }
            assert_eq!(next_line, d.lines().len());
            assert_eq!(next_byte, data.len() as u64);
        }
    }

    /// A file in a fresh temporary directory, removed on drop.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn new(name: &str, data: &[u8]) -> TempFile {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "logsieve-corpus-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let p = dir.join(name);
            std::fs::write(&p, data).unwrap();
            TempFile(p)
        }

        /// Makes the file look untouched for a minute.
        fn settle(&self) {
            let f = File::options().write(true).open(&self.0).unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(60))
                .unwrap();
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
        }
    }

    #[test]
    fn only_settled_files_are_mapped() {
        let f = TempFile::new("a.log", b"one\ntwo\n");
        let kind = |opts| format!("{:?}", Document::open(&f.0, opts).unwrap());
        assert!(
            kind(LoadOptions::default()).contains("owned"),
            "fresh file mapped"
        );
        f.settle();
        assert!(kind(LoadOptions::default()).contains("mmap"));
        let no_mmap = LoadOptions {
            no_mmap: true,
            ..Default::default()
        };
        assert!(kind(no_mmap).contains("owned"));
        let d = Document::open(&f.0, LoadOptions::default()).unwrap();
        assert_eq!(d.data(), b"one\ntwo\n");
        assert!(d.warning().is_none());
    }

    #[test]
    fn a_walk_skips_files_binary_in_their_first_bytes() {
        let early = TempFile::new("early.log", b"x\0y\nneedle\n");
        let mut late_data = vec![b'a'; BINARY_SNIFF];
        late_data.extend_from_slice(b"\n\0needle\n");
        let late = TempFile::new("app.log.1", &late_data);
        let opts = LoadOptions::default();
        assert!(Document::open_found(&early.0, opts).unwrap().is_none());
        // Named on the command line, the same file is read.
        assert!(Document::open(&early.0, opts).unwrap().binary_offset() == Some(1));
        // A NUL past the first bytes does not skip the file (it is binary
        // for the printer, as any file).
        let d = Document::open_found(&late.0, opts).unwrap().unwrap();
        assert_eq!(d.binary_offset(), Some(BINARY_SNIFF as u64 + 1));
    }

    #[test]
    fn compressed_files_with_z_and_cut_streams() {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("line {i} {}\n", i * 7919 % 10007).into_bytes())
            .collect();
        e.write_all(&text).unwrap();
        let gz = e.finish().unwrap();
        let z = LoadOptions {
            search_zip: true,
            ..Default::default()
        };
        let whole = TempFile::new("a.log.gz", &gz);
        let d = Document::open(&whole.0, z).unwrap();
        assert!(d.data() == &text[..] && d.warning().is_none());
        // Without -z, the compressed bytes; a walk skips them as binary.
        let d = Document::open(&whole.0, LoadOptions::default()).unwrap();
        assert_eq!(d.data(), &gz[..]);
        assert!(Document::open_found(&whole.0, LoadOptions::default())
            .unwrap()
            .is_none());
        // Cut: the prefix zcat would print, and a warning naming the file.
        let cut = TempFile::new("cut.log.gz", &gz[..gz.len() / 2]);
        let d = Document::open(&cut.0, z).unwrap();
        assert!(!d.data().is_empty() && text.starts_with(d.data()));
        let w = d.warning().expect("a warning").to_string();
        assert!(
            w.contains("cut.log.gz") && w.contains("gzip stream cut short"),
            "{w}"
        );
        // Nothing decodable: an error, as before.
        let bad = TempFile::new("bad.log.gz", b"\x1f\x8b\x08\x00garbage");
        assert!(Document::open(&bad.0, z).is_err());
        // A compression we do not decode: an error, not binary noise.
        let unix_z = TempFile::new("old.log.Z", b"\x1f\x9d\x90abcdef");
        let e = Document::open(&unix_z.0, z).unwrap_err().to_string();
        assert!(e.contains("old.log.Z") && e.contains("compress"), "{e}");
    }
}
