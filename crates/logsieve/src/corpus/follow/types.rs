//! The follower's plain types and file functions (see the parent module).

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::corpus::decode::{self, Detected};
use crate::corpus::{LoadOptions, WalkOptions};

/// How many leading bytes of a file generation fingerprint it (what
/// Vector and Filebeat hash).
pub const FINGERPRINT_LEN: usize = 1024;

/// How a the tracker follows.
#[derive(Clone, Debug)]
pub struct FollowOptions {
    /// How directories are walked (the load's options).
    pub walk: WalkOptions,
    /// `-z`: compressed files are decoded (and compared, never followed).
    pub load: LoadOptions,
    /// A partial last line is made a line after the file has not grown
    /// for this long; a new file shorter than [`FINGERPRINT_LEN`] is
    /// adopted after this long.
    pub idle_flush: Duration,
    /// The most bytes read from one file per poll (the rest next poll),
    /// so one huge burst does not hold a batch for long.
    pub max_read: u64,
}

impl Default for FollowOptions {
    fn default() -> FollowOptions {
        FollowOptions {
            walk: WalkOptions::default(),
            load: LoadOptions::default(),
            idle_flush: Duration::from_secs(5),
            max_read: 64 << 20,
        }
    }
}

/// A file's identity: device and inode (0, 0 where the platform has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
}

impl FileId {
    /// The identity in `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            FileId { dev: 0, ino: 0 }
        }
    }
}

/// What changed, in the order it must be applied to the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A file seen for the first time: a new document at index `doc` (the
    /// corpus's length when it is applied), holding `bytes` (whole lines).
    NewDoc {
        /// Its index in the corpus.
        doc: usize,
        /// Its name (the path as walked).
        name: String,
        /// Whole lines, each ending in `\n` (or empty).
        bytes: Vec<u8>,
    },
    /// Whole lines appended to document `doc`.
    Append {
        /// The document.
        doc: usize,
        /// Whole lines, each ending in `\n`.
        bytes: Vec<u8>,
    },
}

/// What a the tracker has done so far (`/health`, `/metrics`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FollowStats {
    /// Files followed now (open handles).
    pub files: u64,
    /// Bytes appended to the corpus since the load.
    pub bytes_appended: u64,
    /// Lines appended since the load.
    pub lines_appended: u64,
    /// Files found after the load and adopted as new documents.
    pub new_files: u64,
    /// Files recognised as copies of held content (not ingested).
    pub copies: u64,
    /// Renames seen (same inode, new path).
    pub renames: u64,
    /// Truncations seen.
    pub truncations: u64,
    /// Partial lines made lines after the idle time.
    pub idle_flushes: u64,
    /// Bytes of a copy appended because its original was truncated
    /// before they were read.
    pub recovered_bytes: u64,
}

pub(super) fn read_at(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(len.min(64 << 20) as usize);
    let mut f = file;
    #[cfg(unix)]
    {
        // pread: the shared handle's position is not used.
        use std::os::unix::fs::FileExt;
        out.resize(len as usize, 0);
        let mut done = 0usize;
        while done < out.len() {
            match f.read_at(&mut out[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        out.truncate(done);
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(offset))?;
        f.take(len).read_to_end(&mut out)?;
    }
    let _ = &mut f;
    Ok(out)
}

pub(super) fn split_lines(bytes: &mut Vec<u8>) -> Vec<u8> {
    match memchr::memrchr(b'\n', bytes) {
        None => Vec::new(),
        Some(i) => {
            let rest = bytes.split_off(i + 1);
            std::mem::replace(bytes, rest)
        }
    }
}

pub(super) fn is_compressed(head: &[u8], path: &Path) -> bool {
    !matches!(decode::detect(head, path), Detected::Plain)
}

/// Adds a run of a generation's bytes at `off` in its document, merged
/// with the last one when they touch.
pub(super) fn push_run(runs: &mut Vec<(u64, u64)>, off: u64, len: u64) {
    match runs.last_mut() {
        Some((o, l)) if *o + *l == off => *l += len,
        _ => runs.push((off, len)),
    }
}
