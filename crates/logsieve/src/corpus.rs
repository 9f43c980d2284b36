//! Loading logs: files (memory-mapped or read), stdin, gzip; the line index;
//! segments for backends with a bounded buffer size.
//!
//! A [`Corpus`] is a list of [`Document`]s, one per input. A document's bytes
//! are never copied after loading; its [`LineIndex`] is built once, lazily,
//! by the first consumer that needs line numbers (a CPU count never does).

use std::fs::File;
use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;

/// The bytes of one document: a memory map or an owned buffer.
pub enum Bytes {
    /// A read-only memory map of a file.
    Mmap(memmap2::Mmap),
    /// Bytes read into memory (stdin, `--no-mmap`, decompressed gzip, generated).
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
    /// Decompress files whose name ends in `.gz` (multi-member gzip).
    pub search_zip: bool,
}

/// The start offset of every line of a document.
///
/// `starts` holds one entry per line plus a final entry one past the last
/// line's terminator, so that line `i` is always
/// `data[starts[i] .. starts[i + 1] - 1]` — the `\n` excluded, a `\r` before
/// it kept (as ripgrep does). A last line without a trailing newline gets a
/// virtual terminator at `data.len()`. Offsets are `u64`: documents past
/// 4 GiB work.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<u64>,
}

impl LineIndex {
    /// Builds the index of `data` with one pass of `memchr`.
    pub fn new(data: &[u8]) -> LineIndex {
        let mut starts = Vec::with_capacity(data.len() / 64 + 2);
        starts.push(0u64);
        for nl in memchr::memchr_iter(b'\n', data) {
            starts.push(nl as u64 + 1);
        }
        if data.last().is_some_and(|&b| b != b'\n') {
            // The last line has no terminator: a virtual one at data.len().
            starts.push(data.len() as u64 + 1);
        }
        if data.is_empty() {
            // No lines at all: keep only the sentinel.
            starts.truncate(1);
        }
        LineIndex { starts }
    }

    /// The number of lines.
    pub fn len(&self) -> u64 {
        self.starts.len() as u64 - 1
    }

    /// True when the document has no lines (it is empty).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte range of line `i`, terminator excluded.
    pub fn line_range(&self, i: u64) -> Range<u64> {
        let i = i as usize;
        self.starts[i]..self.starts[i + 1] - 1
    }

    /// The raw start offsets (one per line, plus the end sentinel).
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    /// The line containing byte `offset` (the line whose range or terminator
    /// holds it).
    pub fn line_of(&self, offset: u64) -> u64 {
        (self.starts.partition_point(|&s| s <= offset) - 1) as u64
    }
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

/// One searched input: a file, stdin, or generated data.
pub struct Document {
    name: String,
    data: Bytes,
    lines: OnceLock<LineIndex>,
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
        }
    }

    /// Loads one file. `.gz` files are decompressed when
    /// [`LoadOptions::search_zip`] is set.
    pub fn open(path: &Path, opts: LoadOptions) -> Result<Document, Error> {
        let name = path.display().to_string();
        let io_err = |e: io::Error| Error::io(&name, e);
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::io(
                &name,
                io::Error::other("is a directory (pass files, or use `search_paths`)"),
            ));
        }
        let mut file = File::open(path).map_err(io_err)?;
        let is_gz = path.extension().is_some_and(|e| e == "gz");
        if opts.search_zip && is_gz {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(io::BufReader::new(file))
                .read_to_end(&mut out)
                .map_err(|e| Error::io(&name, io::Error::new(e.kind(), format!("gzip: {e}"))))?;
            return Ok(Document::new(name, Bytes::Owned(out)));
        }
        // Memory maps of empty files fail on some platforms, and special
        // files (pipes, /proc) cannot be mapped: read those. MAP_POPULATE
        // pre-faults the pages in one kernel call: a search reads every
        // page anyway, and 47k single page faults for 195 MB cost more than
        // the search (measured on the build machine, 2026-11-21).
        if !opts.no_mmap && meta.is_file() && meta.len() > 0 {
            // SAFETY: the map is read-only. If another process truncates the
            // file while we search it, reads past the new end fault; this is
            // the same trade-off ripgrep and GNU grep make for speed, and
            // `--no-mmap` avoids it.
            if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
                return Ok(Document::new(name, Bytes::Mmap(map)));
            }
        }
        let mut out = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut out).map_err(io_err)?;
        Ok(Document::new(name, Bytes::Owned(out)))
    }

    /// Reads all of standard input. Named `<stdin>` as ripgrep does.
    pub fn stdin() -> Result<Document, Error> {
        let mut out = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut out)
            .map_err(|e| Error::io("<stdin>", e))?;
        Ok(Document::new("<stdin>".to_string(), Bytes::Owned(out)))
    }

    /// The display name (path as given, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The document's bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The line index, built on first use.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.data))
    }

    /// True once the line index exists (no index work will happen).
    pub fn has_line_index(&self) -> bool {
        self.lines.get().is_some()
    }

    /// The bytes of line `i`, terminator excluded.
    pub fn line(&self, i: u64) -> &[u8] {
        let r = self.lines().line_range(i);
        &self.data[r.start as usize..r.end as usize]
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
#[derive(Debug, Default)]
pub struct Corpus {
    docs: Vec<Document>,
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Corpus {
        Corpus::default()
    }

    /// A corpus of one in-memory document.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Corpus {
        Corpus {
            docs: vec![Document::from_bytes(name, data)],
        }
    }

    /// Adds a document.
    pub fn push(&mut self, doc: Document) {
        self.docs.push(doc);
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

/// Expands `paths` the way ripgrep does: files as given, directories walked
/// recursively (sorted, hidden entries skipped). Each path or the error met
/// while listing it is returned in order, so that a caller reports the error
/// and goes on with the rest.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, Error>> {
    fn walk(dir: &Path, out: &mut Vec<Result<PathBuf, Error>>) {
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                out.push(Err(Error::io(&dir.display().to_string(), e)));
                return;
            }
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            let hidden = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if hidden {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(Ok(p));
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else {
            out.push(Ok(p.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
}
