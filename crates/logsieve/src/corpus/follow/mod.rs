//! Following files as they grow (`logsieve serve --follow`): which bytes
//! of the served files are new, as whole lines, across rotation and
//! truncation.
//!
//! A [`Tracker`] loads the served paths once ([`Tracker::start`], walked
//! as `search` walks them) and then, on each [`Tracker::poll`], says what
//! changed as [`Change`]s for the caller to apply to its corpus in order
//! (`Session::append_lines`, `Session::push_document`). It touches no
//! corpus itself: it only reads one to compare a new file with what is
//! held.
//!
//! **Identity**, as log shippers do it (Filebeat, Vector): a followed file
//! is its device and inode ([`FileId`]), read through a handle kept open,
//! so a renamed file is still read to its end; its *generation* (the
//! content since it was created or last truncated) is fingerprinted by its
//! first [`FINGERPRINT_LEN`] bytes.
//!
//! * **rename + create** (logrotate's default): the old inode keeps its
//!   document and handle (lines the writer adds before it reopens are
//!   read); when a walk finds it under its new name, only its path
//!   changes. The new file at the old path is a new file.
//! * **copytruncate**: the copy is a new inode whose bytes equal the start
//!   of a generation already held: it is an *alias*, never ingested; if
//!   the original was truncated before all of its bytes were read, the
//!   copy's bytes past what was held are appended ("recovered"). The
//!   original is seen as truncated when it is shorter than what was read,
//!   or when its first bytes no longer equal the fingerprint (it was
//!   truncated and written again between two polls). Its old content
//!   **stays searchable** as held content; the new generation is appended
//!   to the same document after it.
//! * **A rotated compressed file** (`app.log.2.gz`, with `-z`): decoded
//!   and compared like a copy; the same content is not loaded twice.
//!   Without `-z` compressed files are skipped, as a walk skips binaries.
//! * **Partial lines**: bytes after the last `\n` are held back until the
//!   line completes, or until the file has not grown for
//!   [`FollowOptions::idle_flush`] (a settled file's at the start): then
//!   they are served as the file has them, a last line without a
//!   terminator, and bytes written later continue that line — the
//!   document agrees with a fresh read of the file after every poll.
//! * **New files** in a served directory are found by a walk (same ignore
//!   rules, globs and types as the load) and adopted once they hold
//!   [`FINGERPRINT_LEN`] bytes or have been idle for `idle_flush`, so a
//!   copy still being written is recognised as a copy rather than taken
//!   for a new file.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

mod types;

use self::types::{is_compressed, push_run, read_at, split_lines};
pub use self::types::{Change, FileId, FollowOptions, FollowStats, FINGERPRINT_LEN};
use super::{Corpus, Document, Walker};
use crate::error::Error;

/// One generation of a file: its content from offset 0 up to `len`,
/// held in document `doc` in `runs` (a recovered copy or a flushed line
/// of another generation may come between two of them).
#[derive(Debug)]
struct Generation {
    doc: usize,
    /// (offset in the document, length) of each run of its bytes there,
    /// in file order.
    runs: Vec<(u64, u64)>,
    /// File bytes of this generation held (lines appended), pending bytes
    /// excluded.
    len: u64,
    /// Its first bytes (up to FINGERPRINT_LEN).
    head: Vec<u8>,
    /// No `\n` was added inside it: the document holds its bytes as they
    /// are in the file (a copy can be compared byte for byte).
    exact: bool,
    /// Truncated, deleted or static: it will not grow any more.
    closed: bool,
    /// A partial last line read before the file was truncated: the rest
    /// of it may come back from a copy (copytruncate); if none shows up
    /// within three idle times it becomes a line of its own.
    tail: Vec<u8>,
    tail_at: Option<Instant>,
}

#[derive(Debug)]
struct Followed {
    path: PathBuf,
    id: FileId,
    file: File,
    gen: usize,
    /// File bytes consumed (held + pending).
    offset: u64,
    pending: Vec<u8>,
    /// When the file last grew.
    grew_at: Instant,
    /// Its modification time at the last poll: a file of the size read
    /// whose time changed was rewritten (its fingerprint is compared).
    mtime: Option<SystemTime>,
    /// The path no longer names this inode (renamed away or deleted).
    detached: bool,
}

/// A file recognised as a copy of generation `gen`.
#[derive(Debug)]
struct Alias {
    id: FileId,
    size: u64,
    mtime: Option<SystemTime>,
    gen: usize,
    /// Bytes of the copy already held (equal to the generation, or
    /// recovered).
    held: u64,
    /// The copy ends in a partial line past `held` (waiting).
    compressed: bool,
}

/// A file seen by the walk but not adopted yet (too small, not idle).
#[derive(Debug)]
struct Waiting {
    size: u64,
    since: Instant,
}

/// Follows the files of a corpus; see the module docs.
pub struct Tracker {
    paths: Vec<PathBuf>,
    opts: FollowOptions,
    walker: Option<Walker>,
    followed: Vec<Followed>,
    gens: Vec<Generation>,
    aliases: HashMap<PathBuf, Alias>,
    /// Paths to leave alone (binary, compressed without `-z`, errors),
    /// with the size they had.
    skipped: HashMap<PathBuf, u64>,
    waiting: HashMap<PathBuf, Waiting>,
    /// Each document's length once every change returned is applied.
    doc_len: Vec<u64>,
    /// Per document, the generation whose last line ends it without a
    /// terminator: that generation's next bytes continue the line (as in
    /// the file); another's start a new one.
    open: Vec<Option<usize>>,
    stats: FollowStats,
    notes: Vec<String>,
    /// The walk's errors at the last walk (a dangling link, a loop, an
    /// unreadable directory): reported when they appear, not at every
    /// rescan.
    walk_errors: HashSet<String>,
}

impl Tracker {
    /// Loads `paths` for following: walks them, reads every file (never
    /// memory-mapped: a followed document grows), holds back a partial
    /// last line of a file written in the last `idle_flush`, and returns
    /// the tracker, the corpus to serve and the errors met (reported, the
    /// rest served).
    pub fn start(paths: &[PathBuf], opts: FollowOptions) -> (Tracker, Corpus, Vec<Error>) {
        let mut errors = Vec::new();
        let walker = match Walker::new(&opts.walk) {
            Ok(w) => Some(w),
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let mut t = Tracker {
            paths: paths.to_vec(),
            opts,
            walker,
            followed: Vec::new(),
            gens: Vec::new(),
            aliases: HashMap::new(),
            skipped: HashMap::new(),
            waiting: HashMap::new(),
            doc_len: Vec::new(),
            open: Vec::new(),
            stats: FollowStats::default(),
            notes: Vec::new(),
            walk_errors: HashSet::new(),
        };
        let mut corpus = Corpus::new();
        let found = t.walk(&mut errors);
        // Reported here: not again at the first rescan.
        t.walk_errors = errors.iter().map(ToString::to_string).collect();
        for (path, explicit) in found {
            if path.as_os_str() == "-" {
                match Document::stdin() {
                    Ok(d) => {
                        t.doc_len.push(d.data().len() as u64);
                        t.open.push(None);
                        corpus.push(d);
                    }
                    Err(e) => errors.push(e),
                }
                continue;
            }
            match t.adopt(&path, explicit, None, true) {
                Ok(changes) => {
                    for c in changes {
                        if let Change::NewDoc { name, bytes, .. } = c {
                            corpus.push(Document::from_bytes(name, bytes));
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        t.stats = FollowStats {
            files: t.followed.len() as u64,
            ..FollowStats::default()
        };
        (t, corpus, errors)
    }

    /// What the tracker has done so far.
    pub fn stats(&self) -> FollowStats {
        FollowStats {
            files: self.followed.len() as u64,
            ..self.stats
        }
    }

    /// Notes on what happened (renames, truncations, copies), taken.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The paths followed now, with their documents.
    pub fn followed(&self) -> Vec<(PathBuf, usize)> {
        self.followed
            .iter()
            .map(|f| (f.path.clone(), self.gens[f.gen].doc))
            .collect()
    }

    fn walk(&self, errors: &mut Vec<Error>) -> Vec<(PathBuf, bool)> {
        let Some(w) = &self.walker else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in w.walk(&self.paths) {
            match f {
                Ok(f) => out.push((f.path, f.explicit)),
                Err(e) => errors.push(e),
            }
        }
        out
    }

    /// Looks at every followed file (and, when `rescan`, walks the paths
    /// for new files), and returns what changed since the last poll.
    /// `corpus` is the corpus with every earlier change applied: new files
    /// are compared with what it holds and with the files adopted earlier
    /// in the same poll (every new file is adopted in the poll that finds
    /// it). Errors are returned with the
    /// changes (a file that cannot be read is left for the next poll).
    pub fn poll(&mut self, corpus: &Corpus, rescan: bool) -> (Vec<Change>, Vec<Error>) {
        let mut changes = Vec::new();
        let mut errors = Vec::new();
        let now = Instant::now();
        for i in 0..self.followed.len() {
            if let Err(e) = self.poll_one(i, now, &mut changes) {
                errors.push(e);
            }
        }
        // A detached file that stopped growing is done with: its content
        // stays held, its handle is closed.
        let idle = self.opts.idle_flush;
        let gens = &mut self.gens;
        self.followed.retain(|f| {
            let done = f.detached && f.pending.is_empty() && now.duration_since(f.grew_at) >= idle;
            if done {
                gens[f.gen].closed = true;
            }
            !done
        });
        if rescan {
            self.rescan(corpus, &mut changes, &mut errors);
        }
        // A line cut by a truncation whose copy never showed up (a copy
        // under 1 KiB is adopted once idle, after the walk finds it:
        // three idle times leave it room).
        for gi in 0..self.gens.len() {
            let g = &mut self.gens[gi];
            if g.tail_at.is_some_and(|t| now.duration_since(t) >= 3 * idle) {
                let mut b = std::mem::take(&mut g.tail);
                g.tail_at = None;
                if !b.is_empty() {
                    // The end of a generation cut by a truncation: a line
                    // of its own (the file no longer holds it).
                    b.push(b'\n');
                    let doc = g.doc;
                    self.stats.idle_flushes += 1;
                    changes.push(self.append(doc, gi, b, false));
                }
            }
        }
        for c in &changes {
            let bytes = match c {
                Change::NewDoc { bytes, .. } | Change::Append { bytes, .. } => bytes,
            };
            self.stats.bytes_appended += bytes.len() as u64;
            self.stats.lines_appended += memchr::memchr_iter(b'\n', bytes).count() as u64;
        }
        (changes, errors)
    }

    fn poll_one(&mut self, i: usize, now: Instant, changes: &mut Vec<Change>) -> Result<(), Error> {
        let idle = self.opts.idle_flush;
        let max_read = self.opts.max_read;
        let f = &mut self.followed[i];
        let name = f.path.display().to_string();
        let meta = f.file.metadata().map_err(|e| Error::io(&name, e))?;
        if !f.detached {
            match std::fs::metadata(&f.path) {
                Ok(m) if FileId::of(&m) == f.id => {}
                _ => f.detached = true,
            }
        }
        let size = meta.len();
        let gen = &self.gens[f.gen];
        // Truncated: shorter than what was read, or its first bytes are
        // not the fingerprint any more (truncated and written again: to a
        // larger size, or to the same size with a new modification time).
        // REGRESSION (hardening,
        // `follow.rs::regression_truncated_and_rewritten_to_the_same_size_between_polls`):
        // a copytruncate whose writer wrote as many bytes as the file held
        // before the next poll was not seen: the lines of the copy past
        // what was read and the new ones were lost.
        let mtime = meta.modified().ok();
        let same_size_rewritten = size == f.offset && mtime != f.mtime;
        f.mtime = mtime;
        let mut truncated = size < f.offset;
        if !truncated
            && f.offset > 0
            && (size > f.offset || same_size_rewritten)
            && !gen.head.is_empty()
        {
            let n = gen.head.len().min(size as usize) as u64;
            let now_head = read_at(&f.file, 0, n).map_err(|e| Error::io(&name, e))?;
            truncated = now_head[..] != gen.head[..now_head.len()];
        }
        if truncated {
            let doc = gen.doc;
            let g = &mut self.gens[f.gen];
            g.tail = std::mem::take(&mut f.pending);
            g.tail_at = Some(now);
            g.closed = true;
            self.stats.truncations += 1;
            self.notes.push(format!(
                "{name}: truncated (its earlier content stays searchable)"
            ));
            self.gens.push(Generation {
                doc,
                runs: Vec::new(),
                len: 0,
                head: Vec::new(),
                exact: true,
                closed: false,
                tail: Vec::new(),
                tail_at: None,
            });
            f.gen = self.gens.len() - 1;
            f.offset = 0;
            f.grew_at = now;
        }
        let gen_i = f.gen;
        if size > f.offset {
            let want = (size - f.offset).min(max_read);
            let got = read_at(&f.file, f.offset, want).map_err(|e| Error::io(&name, e))?;
            let g = &mut self.gens[gen_i];
            if g.head.len() < FINGERPRINT_LEN && g.head.len() as u64 == f.offset {
                let take = (FINGERPRINT_LEN - g.head.len()).min(got.len());
                g.head.extend_from_slice(&got[..take]);
            }
            f.offset += got.len() as u64;
            f.grew_at = now;
            f.pending.extend_from_slice(&got);
            let lines = split_lines(&mut f.pending);
            if !lines.is_empty() {
                g.len += lines.len() as u64;
                let doc = g.doc;
                changes.push(self.append(doc, gen_i, lines, true));
            }
        } else if !f.pending.is_empty() && now.duration_since(f.grew_at) >= idle {
            // Idle: the partial line is served as the file has it, without
            // a terminator; bytes written later continue it.
            let g = &mut self.gens[gen_i];
            g.len += f.pending.len() as u64;
            let doc = g.doc;
            let b = std::mem::take(&mut f.pending);
            changes.push(self.append(doc, gen_i, b, true));
            self.stats.idle_flushes += 1;
        }
        Ok(())
    }

    fn rescan(&mut self, corpus: &Corpus, changes: &mut Vec<Change>, errors: &mut Vec<Error>) {
        // A copy whose original was truncated before all of it was read:
        // its bytes past what the original gave are appended.
        let mut recover = Vec::new();
        for (path, a) in &mut self.aliases {
            let g = &self.gens[a.gen];
            if a.compressed || !g.closed {
                continue;
            }
            let Ok(file) = File::open(path) else { continue };
            let Ok(meta) = file.metadata() else { continue };
            let from = a.held.max(g.len);
            if FileId::of(&meta) != a.id || meta.len() <= from {
                continue;
            }
            if let Ok(extra) = read_at(&file, from, meta.len() - from) {
                a.held = from + extra.len() as u64;
                a.size = meta.len();
                a.mtime = meta.modified().ok();
                recover.push((a.gen, extra));
            }
        }
        for (gi, extra) in recover {
            let c = self.recover(gi, extra);
            changes.push(c);
        }
        // REGRESSION (hardening, `follow.rs::an_unreadable_entry_in_a_followed_directory_is_reported_once_and_the_rest_followed`):
        // a dangling link in a followed directory was reported at every
        // rescan (a warning every 200 ms, for ever).
        let mut walk_errors = Vec::new();
        let found = self.walk(&mut walk_errors);
        let now: HashSet<String> = walk_errors.iter().map(ToString::to_string).collect();
        errors.extend(
            walk_errors
                .into_iter()
                .filter(|e| !self.walk_errors.contains(&e.to_string())),
        );
        self.walk_errors = now;
        for (path, explicit) in found {
            if path.as_os_str() == "-"
                || self.followed.iter().any(|f| f.path == path && !f.detached)
            {
                continue;
            }
            match self.adopt_later(corpus, &path, explicit, changes) {
                Ok(()) => {}
                Err(e) => {
                    // Once per file and size: not every poll.
                    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                    if self.skipped.insert(path.clone(), size) != Some(size) {
                        errors.push(e);
                    }
                }
            }
        }
    }

    /// A path the walk found that no followed file has: a renamed followed
    /// file, a copy of held content, or a new file.
    fn adopt_later(
        &mut self,
        corpus: &Corpus,
        path: &Path,
        explicit: bool,
        changes: &mut Vec<Change>,
    ) -> Result<(), Error> {
        let name = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| Error::io(&name, e))?;
        let id = FileId::of(&meta);
        if let Some(f) = self.followed.iter_mut().find(|f| f.id == id) {
            self.notes.push(format!(
                "{}: renamed to {name} (followed as the same file)",
                f.path.display()
            ));
            f.path = path.to_path_buf();
            f.detached = false;
            self.stats.renames += 1;
            return Ok(());
        }
        let mtime = meta.modified().ok();
        if let Some(a) = self.aliases.get(path) {
            if a.id == id && a.size == meta.len() && a.mtime == mtime {
                return Ok(());
            }
        }
        if self.skipped.get(path) == Some(&meta.len()) {
            return Ok(());
        }
        let size = meta.len();
        // Too small to fingerprint and still changing: wait.
        if (size as usize) < FINGERPRINT_LEN {
            let now = Instant::now();
            let w = self
                .waiting
                .entry(path.to_path_buf())
                .or_insert(Waiting { size, since: now });
            if w.size != size {
                *w = Waiting { size, since: now };
            }
            if now.duration_since(w.since) < self.opts.idle_flush {
                return Ok(());
            }
        }
        self.waiting.remove(path);
        // Files adopted earlier in this poll are not in `corpus` yet: a
        // copy is compared with their bytes in `changes` too (REGRESSION:
        // a copy seen in the same poll as its original was ingested as a
        // new file; then every file after the first new one waited for the
        // next poll).
        let adopted = self.adopt(path, explicit, Some((corpus, changes)), false)?;
        changes.extend(adopted);
        Ok(())
    }

    /// Reads `path` and decides what it is. At the start (`corpus` None)
    /// every file is new; else it is compared with the documents held:
    /// the corpus's and those of the changes not yet applied. Returns the
    /// changes (a `NewDoc` or the bytes of a copy recovered) and
    /// registers the file.
    fn adopt(
        &mut self,
        path: &Path,
        explicit: bool,
        corpus: Option<(&Corpus, &[Change])>,
        at_start: bool,
    ) -> Result<Vec<Change>, Error> {
        let name = path.display().to_string();
        let io_err = |e: io::Error| Error::io(&name, e);
        let file = File::open(path).map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::io(&name, io::Error::other("is a directory")));
        }
        let id = FileId::of(&meta);
        let size = meta.len();
        let head = read_at(&file, 0, size.min(super::BINARY_SNIFF as u64)).map_err(io_err)?;
        if is_compressed(&head, path) {
            if !self.opts.load.search_zip {
                self.skipped.insert(path.to_path_buf(), size);
                return Ok(Vec::new());
            }
            // Decoded once, compared as a copy, never followed.
            let doc = Document::open(path, self.opts.load)?;
            let data = doc.data().to_vec();
            if let Some((c, pending)) = corpus {
                if let Some(gi) = self.copy_of(c, pending, &data) {
                    self.aliases.insert(
                        path.to_path_buf(),
                        Alias {
                            id,
                            size,
                            mtime: meta.modified().ok(),
                            gen: gi,
                            held: data.len() as u64,
                            compressed: true,
                        },
                    );
                    self.stats.copies += 1;
                    self.notes.push(format!(
                        "{name}: compressed copy of content held, not loaded again"
                    ));
                    return Ok(Vec::new());
                }
            }
            let mut bytes = data;
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            return Ok(vec![self.new_doc(name, bytes, None, true)]);
        }
        if !explicit && memchr::memchr(0, &head).is_some() {
            self.skipped.insert(path.to_path_buf(), size);
            return Ok(Vec::new());
        }
        let mut data = read_at(&file, 0, size).map_err(io_err)?;
        if let Some((c, pending)) = corpus {
            if let Some(gi) = self.copy_of(c, pending, &data) {
                let g = &self.gens[gi];
                let mut out = Vec::new();
                let mut held = data.len() as u64;
                if g.closed && held > g.len {
                    out.push(self.recover(gi, data[g.len as usize..].to_vec()));
                } else {
                    held = held.min(g.len);
                }
                self.aliases.insert(
                    path.to_path_buf(),
                    Alias {
                        id,
                        size,
                        mtime: meta.modified().ok(),
                        gen: gi,
                        held,
                        compressed: false,
                    },
                );
                self.stats.copies += 1;
                self.notes.push(format!(
                    "{name}: a copy of content held, not ingested again"
                ));
                return Ok(out);
            }
        }
        // A partial last line: held back while the file may still be
        // written (at the start, only if it was written recently).
        let recent = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_none_or(|age| age < self.opts.idle_flush);
        let read = data.len() as u64;
        let mut pending = Vec::new();
        // A settled file's last line is served as it is, without a
        // terminator (bytes written later continue it).
        if !data.is_empty() && !data.ends_with(b"\n") && (recent || !at_start) {
            let i = memchr::memrchr(b'\n', &data).map_or(0, |i| i + 1);
            pending = data.split_off(i);
        }
        let follow = Followed {
            path: path.to_path_buf(),
            id,
            file,
            gen: 0,
            offset: read,
            pending,
            grew_at: Instant::now(),
            mtime: meta.modified().ok(),
            detached: false,
        };
        if !at_start {
            self.stats.new_files += 1;
            self.notes.push(format!("{name}: new file, followed"));
        }
        Ok(vec![self.new_doc(name, data, Some(follow), false)])
    }

    /// Bytes of a copy past what its generation held (the original was
    /// truncated before they were read): appended to its document.
    fn recover(&mut self, gi: usize, mut extra: Vec<u8>) -> Change {
        if !extra.ends_with(b"\n") {
            extra.push(b'\n');
        }
        let doc = self.gens[gi].doc;
        // The copy holds the whole of a partial line cut by the truncation.
        self.gens[gi].tail.clear();
        self.gens[gi].tail_at = None;
        self.stats.recovered_bytes += extra.len() as u64;
        self.notes.push(format!(
            "recovered {} bytes from a copy: its original was truncated before they were read",
            extra.len()
        ));
        self.append(doc, gi, extra, false)
    }

    /// Bytes of generation `gen` appended to document `doc`: a `\n` goes
    /// first when the document ends in another generation's line without
    /// a terminator (the bytes are not its continuation). With `run`, the
    /// bytes are recorded as the generation's (read from its file).
    fn append(&mut self, doc: usize, gen: usize, mut bytes: Vec<u8>, run: bool) -> Change {
        let sep = self.open[doc].is_some_and(|g| g != gen);
        self.doc_len[doc] += u64::from(sep);
        if run {
            push_run(
                &mut self.gens[gen].runs,
                self.doc_len[doc],
                bytes.len() as u64,
            );
        }
        self.doc_len[doc] += bytes.len() as u64;
        self.open[doc] = (!bytes.ends_with(b"\n")).then_some(gen);
        if sep {
            bytes.insert(0, b'\n');
        }
        Change::Append { doc, bytes }
    }

    /// Registers a new document (and its generation, and the file that
    /// feeds it).
    fn new_doc(
        &mut self,
        name: String,
        bytes: Vec<u8>,
        follow: Option<Followed>,
        closed: bool,
    ) -> Change {
        let doc = self.doc_len.len();
        self.doc_len.push(bytes.len() as u64);
        let len = bytes.len() as u64;
        let open = !bytes.is_empty() && !bytes.ends_with(b"\n");
        self.open.push(open.then_some(self.gens.len()));
        let mut head = bytes[..(len as usize).min(FINGERPRINT_LEN)].to_vec();
        if let Some(f) = &follow {
            // The fingerprint is of the file, pending bytes included.
            let more = (FINGERPRINT_LEN - head.len()).min(f.pending.len());
            head.extend_from_slice(&f.pending[..more]);
        }
        self.gens.push(Generation {
            doc,
            runs: vec![(0, len)],
            len,
            head,
            exact: true,
            closed,
            tail: Vec::new(),
            tail_at: None,
        });
        if let Some(mut f) = follow {
            f.gen = self.gens.len() - 1;
            self.followed.push(f);
        }
        Change::NewDoc { doc, name, bytes }
    }

    /// The generation whose held bytes `data` starts with (or that starts
    /// with `data`): a copy. Empty data is a copy of nothing. A document
    /// past the corpus's is one of `pending` (changes not yet applied: a
    /// file adopted earlier in the same poll).
    fn copy_of(&self, corpus: &Corpus, pending: &[Change], data: &[u8]) -> Option<usize> {
        if data.is_empty() {
            return None;
        }
        self.gens.iter().enumerate().find_map(|(i, g)| {
            let n = data.len().min(g.head.len());
            if n == 0 || g.head[..n] != data[..n] {
                return None;
            }
            // Runs are offsets in the whole document; bytes evicted
            // since (`--retain`) are not compared (the fingerprint was).
            let (doc, base) = match corpus.docs().get(g.doc) {
                Some(d) => (d.data(), d.first_offset() as usize),
                None => (new_doc_bytes(pending, g.doc)?, 0),
            };
            if g.exact {
                // Compare run by run, as far as both go.
                let mut at = 0usize;
                for &(off, len) in &g.runs {
                    let (off, len) = (off as usize, len as usize);
                    let gone = base.saturating_sub(off).min(len);
                    let skip = gone.min(data.len() - at);
                    at += skip;
                    if at == data.len() {
                        break;
                    }
                    if gone == len {
                        continue;
                    }
                    let off = off + gone - base;
                    let left = len - gone;
                    let end = (off + left).min(doc.len());
                    let held = &doc[off.min(end)..end];
                    let m = held.len().min(data.len() - at);
                    if held[..m] != data[at..at + m] {
                        return None;
                    }
                    at += m;
                    if at == data.len() || m < left {
                        break;
                    }
                }
                (at > 0).then_some(i)
            } else {
                // A `\n` was added inside: the fingerprint and the size.
                (data.len() as u64 <= g.len + 1).then_some(i)
            }
        })
    }
}

/// The bytes of document `doc` as its `NewDoc` in `pending` holds them.
fn new_doc_bytes(pending: &[Change], doc: usize) -> Option<&[u8]> {
    pending.iter().find_map(|c| match c {
        Change::NewDoc { doc: d, bytes, .. } if *d == doc => Some(&bytes[..]),
        _ => None,
    })
}
