//! The follower's line assembly (`corpus::follow::Tracker`): files in a
//! directory written in appends cut at random byte points, renamed
//! (rename + create), truncated and deleted, with a poll after each step.
//! Checks, after every poll: each document the tracker made holds exactly
//! the whole lines written to its file (per generation, since the file was
//! adopted) — nothing split, doubled, lost or reordered; and at the end,
//! once every file ends its last line and is large enough to be adopted,
//! the documents hold every line written to every file still there (and
//! to deleted files the tracker had adopted) exactly once.
//!
//! The idle time is an hour, so no partial line is flushed by time and
//! the run never sleeps: a new file is adopted once it holds
//! FINGERPRINT_LEN bytes (the end pads each file to that). Every file
//! starts with a line naming it, so no file is taken for a copy of
//! another (the tracker's copy detection compares content; a file equal to
//! the start of another would rightly be an alias).
//!
//! Input: a sequence of steps, each an op byte and, for writes, a length
//! byte and the bytes (mapped to letters and `\n`).
#![no_main]
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use logsieve::corpus::follow::{Change, FollowOptions, Tracker, FINGERPRINT_LEN};
use logsieve::corpus::Document;
use logsieve::Corpus;

/// One inode as the harness wrote it.
struct FileModel {
    /// The name it has now (None once deleted).
    name: Option<String>,
    /// Its generations' bytes (a truncation starts a new one).
    gens: Vec<Vec<u8>>,
    /// The generation current when the tracker adopted it, and its doc.
    adopted: Option<(usize, usize)>,
}

impl FileModel {
    /// The whole lines of every generation since adoption.
    fn expected(&self) -> Vec<u8> {
        let Some((from, _)) = self.adopted else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for g in &self.gens[from..] {
            let end = memchr_last_nl(g);
            out.extend_from_slice(&g[..end]);
        }
        out
    }
}

fn memchr_last_nl(b: &[u8]) -> usize {
    b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1)
}

struct Harness {
    dir: PathBuf,
    files: Vec<FileModel>,
    /// The file written as `a.log` (None after a rename or delete, until
    /// the next write creates it).
    live: Option<usize>,
    next_id: usize,
}

impl Harness {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn write(&mut self, f: usize, bytes: &[u8]) {
        let name = self.files[f].name.clone().expect("written files exist");
        OpenOptions::new()
            .append(true)
            .open(self.path(&name))
            .unwrap()
            .write_all(bytes)
            .unwrap();
        self.files[f]
            .gens
            .last_mut()
            .unwrap()
            .extend_from_slice(bytes);
    }

    /// A new `a.log`, starting with a line naming it.
    fn create_live(&mut self) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        let header = format!("file {id}\n").into_bytes();
        std::fs::write(self.path("a.log"), &header).unwrap();
        self.files.push(FileModel {
            name: Some("a.log".into()),
            gens: vec![header],
            adopted: None,
        });
        self.live = Some(self.files.len() - 1);
        self.files.len() - 1
    }

    fn by_name(&self, name: &str) -> Option<usize> {
        self.files
            .iter()
            .position(|f| f.name.as_deref() == Some(name))
    }

    fn poll(&mut self, t: &mut Tracker, c: &mut Corpus) {
        let (changes, errors) = t.poll(c, true);
        assert!(errors.is_empty(), "{errors:?}");
        for ch in changes {
            match ch {
                Change::NewDoc { doc, name, bytes } => {
                    assert_eq!(doc, c.docs().len());
                    let base = Path::new(&name)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .to_string();
                    let f = self.by_name(&base).expect("a new doc names a file there");
                    assert!(self.files[f].adopted.is_none(), "{name} adopted twice");
                    self.files[f].adopted = Some((self.files[f].gens.len() - 1, doc));
                    c.push(Document::from_bytes(name, bytes));
                }
                Change::Append { doc, bytes } => {
                    assert!(bytes.ends_with(b"\n"), "an append of whole lines");
                    c.append(doc, &bytes).unwrap();
                }
            }
        }
        self.check(c);
    }

    /// Each document holds exactly its file's whole lines.
    fn check(&self, c: &Corpus) {
        let mut seen = vec![false; c.docs().len()];
        for (i, f) in self.files.iter().enumerate() {
            if let Some((_, doc)) = f.adopted {
                seen[doc] = true;
                let got = c.docs()[doc].data();
                let want = f.expected();
                assert!(
                    got == &want[..],
                    "file {i} (doc {doc}):\n got  {:?}\n want {:?}",
                    String::from_utf8_lossy(got),
                    String::from_utf8_lossy(&want)
                );
            }
        }
        assert!(seen.iter().all(|&s| s), "a document without a file");
    }
}

/// Written bytes: letters, and `\n` for a fifth of the byte values.
fn text(b: &[u8]) -> Vec<u8> {
    b.iter()
        .map(|&x| if x % 5 == 0 { b'\n' } else { b'a' + x % 26 })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("logsieve-fuzz-follow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut h = Harness {
        dir: dir.clone(),
        files: Vec::new(),
        live: None,
        next_id: 0,
    };
    h.create_live();
    let opts = FollowOptions {
        idle_flush: Duration::from_secs(3600),
        load: logsieve::LoadOptions {
            no_mmap: true,
            search_zip: false,
        },
        ..Default::default()
    };
    let (mut t, mut c, errors) = Tracker::start(std::slice::from_ref(&dir), opts);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.docs().len(), 1);
    h.files[0].adopted = Some((0, 0));
    h.check(&c);
    let mut rotated = 0usize;
    let mut i = 0usize;
    while i < data.len() {
        let op = data[i];
        i += 1;
        match op % 8 {
            // Appends to a.log, cut wherever the input says.
            0..=3 => {
                let n = data.get(i).map_or(0, |&n| usize::from(n % 64));
                i += 1;
                let end = (i + n).min(data.len());
                let bytes = text(&data[i.min(end)..end]);
                i = end;
                let f = match h.live {
                    Some(f) => f,
                    None => h.create_live(),
                };
                h.write(f, &bytes);
            }
            // A write to a rotated file through the writer's old handle
            // (as a logger does before it reopens).
            4 => {
                let pick = data.get(i).copied().unwrap_or(0);
                i += 1;
                let old: Vec<usize> = (0..h.files.len())
                    .filter(|&f| Some(f) != h.live && h.files[f].name.is_some())
                    .collect();
                if !old.is_empty() {
                    let f = old[usize::from(pick) % old.len()];
                    h.write(f, &text(&[pick, pick.wrapping_add(3), 0]));
                }
            }
            // rename + create (logrotate's default): a.log -> a.log.N.
            5 => {
                if let Some(f) = h.live.take() {
                    rotated += 1;
                    let name = format!("a.log.{rotated}");
                    std::fs::rename(h.path("a.log"), h.path(&name)).unwrap();
                    h.files[f].name = Some(name);
                }
            }
            // Truncation of a.log: the tracker saw everything before it
            // (a truncation between two unread writes loses them, and a
            // file rewritten to a longer size with the same first bytes
            // cannot be told from an append: both by design).
            6 => {
                if let Some(f) = h.live {
                    h.poll(&mut t, &mut c);
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(h.path("a.log"))
                        .unwrap()
                        .set_len(0)
                        .unwrap();
                    h.files[f].gens.push(Vec::new());
                    h.poll(&mut t, &mut c);
                    let header = format!("file {f} truncated\n").into_bytes();
                    h.write(f, &header);
                }
            }
            // A rotated file deleted.
            _ => {
                let pick = data.get(i).copied().unwrap_or(0);
                i += 1;
                let old: Vec<usize> = (0..h.files.len())
                    .filter(|&f| Some(f) != h.live && h.files[f].name.is_some())
                    .collect();
                if !old.is_empty() {
                    let f = old[usize::from(pick) % old.len()];
                    let name = h.files[f].name.take().unwrap();
                    std::fs::remove_file(h.path(&name)).unwrap();
                }
            }
        }
        h.poll(&mut t, &mut c);
    }
    // The end: every file still there ends its last line and is padded
    // to FINGERPRINT_LEN, so every one is adopted and holds every line.
    let names: Vec<usize> = (0..h.files.len())
        .filter(|&f| h.files[f].name.is_some())
        .collect();
    for f in names {
        let g = h.files[f].gens.last().unwrap();
        if !g.is_empty() && !g.ends_with(b"\n") {
            h.write(f, b"\n");
        }
        let mut k = 0;
        while h.files[f].gens.last().unwrap().len() < FINGERPRINT_LEN {
            h.write(f, format!("pad {f} {k} {}\n", "x".repeat(60)).as_bytes());
            k += 1;
        }
    }
    let mut held: HashMap<usize, usize> = HashMap::new();
    // One new file is adopted per poll (the next is compared with the
    // corpus once the first is in it): as many polls as files, and more.
    // (REGRESSION seed-crash-many-new-files: three polls did not adopt
    // four new files; the target's count, not the tracker.)
    for _ in 0..h.files.len() + 3 {
        h.poll(&mut t, &mut c);
    }
    for (f, m) in h.files.iter().enumerate() {
        if m.name.is_some() {
            assert!(m.adopted.is_some(), "file {f} ({:?}) never adopted", m.name);
        }
        if let Some((_, doc)) = m.adopted {
            held.insert(doc, f);
        }
    }
    assert_eq!(held.len(), c.docs().len());
    let _ = std::fs::remove_dir_all(&dir);
});
