//! Opening an input: a file read or memory-mapped (mapped only once it
//! has settled), decompressed with `-z`, or standard input.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::decode::{self, Detected};
use super::fault;
use super::{Bytes, Document, LoadOptions};
use crate::error::Error;

/// How many leading bytes decide that a file found by a walk is binary:
/// ripgrep's buffer size, the bytes it looks at before it skips a file.
pub const BINARY_SNIFF: usize = 64 * 1024;

/// A file modified this recently may still be written to (or truncated by
/// logrotate's `copytruncate`): it is read, not mapped.
const SETTLED: Duration = Duration::from_secs(2);

fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(0, &data[..data.len().min(BINARY_SNIFF)]).is_some()
}

/// True when the file was last modified long enough ago that nobody seems
/// to be writing it (an mtime in the future is not settled).
fn stable(meta: &std::fs::Metadata) -> bool {
    meta.modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= SETTLED)
}

/// Maps `file` if it still has the size and mtime of `before` once mapped.
/// No page is mapped here: the CPU engine maps each range just before it
/// searches it (`Document::populate`, `cpu::POPULATE_FIRST`), so an early
/// exit maps little of a large file (DESIGN.md, *Load*).
fn map_stable(file: &File, before: &std::fs::Metadata, size: u64) -> Option<memmap2::Mmap> {
    // SAFETY: the map is read-only, and only made of a regular file that
    // had not been modified for SETTLED and kept its size and mtime across
    // the map (checked below). What remains: a process that truncates the
    // file after that check, while we search it, makes our reads past the
    // new end fault with SIGBUS — the trade-off ripgrep and GNU grep make
    // for speed. A file that is being written or rotated is read instead,
    // and `--no-mmap` reads every file.
    let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
    let after = file.metadata().ok()?;
    let same = after.len() == size
        && map.len() as u64 == size
        && after.modified().ok() == before.modified().ok();
    same.then_some(map)
}

impl Document {
    /// Loads one file given by name: read whatever it is (a FIFO too),
    /// decompressed when [`LoadOptions::search_zip`] is set and its magic
    /// bytes say so. A file cut short (it shrank while being read, or its
    /// compressed stream ends early) still loads, with what could be read,
    /// and [`Document::warning`] says what is missing.
    pub fn open(path: &Path, opts: LoadOptions) -> Result<Document, Error> {
        Ok(Document::load(path, opts, false)?.expect("only a walk skips binary files"))
    }

    /// Loads one file found by a directory walk: as [`Document::open`], but
    /// `None` when it is binary, i.e. a NUL byte in its first
    /// [`BINARY_SNIFF`] bytes (after decompression) — ripgrep's rule for
    /// files it was not asked for by name.
    pub fn open_found(path: &Path, opts: LoadOptions) -> Result<Option<Document>, Error> {
        Document::load(path, opts, true)
    }

    fn load(path: &Path, opts: LoadOptions, skip_binary: bool) -> Result<Option<Document>, Error> {
        let name = path.display().to_string();
        let io_err = |e: io::Error| Error::io(&name, e);
        let mut file = File::open(path).map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::io(
                &name,
                io::Error::other("is a directory (pass files, or use `search_paths`)"),
            ));
        }
        // The size seen at open: a regular file is read up to it, never
        // past (a log that grows while we read it is searched as it was).
        // A regular file of size 0 may still hold bytes (procfs, sysfs:
        // `/proc/cpuinfo`): it is read to its end, as a FIFO is.
        // (REGRESSION: such files loaded empty, without a word.)
        let size = meta.is_file().then_some(meta.len()).filter(|&s| s > 0);
        let sniff = if skip_binary || opts.search_zip {
            BINARY_SNIFF
        } else {
            decode::MAGIC_LEN
        };
        let head_len = size.map_or(sniff, |s| (s as usize).min(sniff));
        let mut head = Vec::with_capacity(head_len);
        (&mut file)
            .take(head_len as u64)
            .read_to_end(&mut head)
            .map_err(io_err)?;
        // A fault injected by a test: met as the error of reading the rest.
        let injected = fault::after_head(path).err();
        if let Some(e) = injected
            .as_ref()
            .filter(|_| opts.search_zip || head.is_empty())
        {
            return Err(io_err(io::Error::new(e.kind(), e.to_string())));
        }
        if opts.search_zip {
            match decode::detect(&head, path) {
                Detected::Plain => {}
                Detected::Unsupported(why) => {
                    return Err(Error::io(&name, io::Error::other(why)));
                }
                Detected::Compressed(format) => {
                    let mut out = Vec::new();
                    let res =
                        decode::decode_into(format, io::Cursor::new(head).chain(file), &mut out);
                    // A cut stream (the usual case: a log copied while it
                    // was written) and corrupt data read differently; the
                    // decoders report both as errors.
                    let warning = res.err().map(|e| {
                        let what = match e.kind() {
                            io::ErrorKind::UnexpectedEof => "stream cut short",
                            _ => "data corrupt",
                        };
                        let msg = format!("{} {what} ({e})", format.name());
                        (e.kind(), msg)
                    });
                    let warning = match warning {
                        None => None,
                        // Nothing decoded: an error, the file is not searched.
                        Some((kind, msg)) if out.is_empty() => {
                            return Err(Error::io(
                                &name,
                                io::Error::new(kind, format!("{msg}: nothing could be decoded")),
                            ));
                        }
                        Some((kind, msg)) => Some(Error::io(
                            &name,
                            io::Error::new(
                                kind,
                                format!(
                                    "{msg}: searched the {} bytes decoded before it",
                                    out.len()
                                ),
                            ),
                        )),
                    };
                    if skip_binary && is_binary(&out) {
                        return Ok(None);
                    }
                    let mut doc = Document::new(name, Bytes::Owned(out));
                    doc.warning = warning;
                    return Ok(Some(doc));
                }
            }
        }
        if skip_binary && is_binary(&head) {
            return Ok(None);
        }
        if let Some(size) = size.filter(|_| !opts.no_mmap && injected.is_none() && stable(&meta)) {
            if let Some(map) = map_stable(&file, &meta, size) {
                return Ok(Some(Document::new(name, Bytes::Mmap(map))));
            }
        }
        let mut out = head;
        let read = match (injected, size) {
            (Some(e), _) => Err(e),
            (None, Some(size)) => {
                out.reserve_exact((size as usize).saturating_sub(out.len()));
                let rest = size.saturating_sub(out.len() as u64);
                (&mut file).take(rest).read_to_end(&mut out)
            }
            (None, None) => file.read_to_end(&mut out),
        };
        // A read error mid-file keeps the bytes read before it (as a cut
        // compressed stream does), with a warning; nothing read: an error.
        let read_error = match read {
            Ok(_) => None,
            Err(e) if out.is_empty() => return Err(io_err(e)),
            Err(e) => Some(Error::io(
                &name,
                io::Error::new(
                    e.kind(),
                    format!(
                        "read error ({e}): searched the {} bytes read before it",
                        out.len()
                    ),
                ),
            )),
        };
        let mut doc = Document::new(name, Bytes::Owned(out));
        if read_error.is_some() {
            doc.warning = read_error;
        } else if let Some(size) = size.filter(|&s| (doc.data.len() as u64) < s) {
            doc.warning = Some(Error::io(
                &doc.name,
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "file shrank while being read ({} of {size} bytes)",
                        doc.data.len()
                    ),
                ),
            ));
        }
        Ok(Some(doc))
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
}
