//! Loading many paths at once: the walk, then each file, with errors
//! collected in order and a progress callback. Shared by front ends that
//! load a corpus from paths (the server; the CLI's `input::load` does the
//! same and can switch to this).

use std::path::PathBuf;

use super::{Corpus, Document, LoadOptions, WalkOptions, Walker};
use crate::error::Error;

/// Where a load stands, for a progress bar or a health endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadProgress {
    /// Files found by the walk.
    pub files_total: u64,
    /// Files read so far (loaded, skipped as binary, or failed).
    pub files_done: u64,
    /// Sum of the found files' sizes on disk (compressed size for `-z`).
    pub bytes_total: u64,
    /// Sizes on disk of the files read so far.
    pub bytes_done: u64,
    /// Bytes held in memory so far (decompressed).
    pub bytes_loaded: u64,
}

impl LoadProgress {
    /// The fraction done, 0..=1, by bytes on disk (by files when the sizes
    /// are unknown, e.g. FIFOs).
    pub fn fraction(&self) -> f64 {
        if self.bytes_total > 0 {
            (self.bytes_done as f64 / self.bytes_total as f64).min(1.0)
        } else if self.files_total > 0 {
            self.files_done as f64 / self.files_total as f64
        } else {
            0.0
        }
    }
}

/// Walks `paths` (directories as `search` walks them: `walk`'s ignore
/// rules, globs and types; a file found by the walk and binary is skipped
/// as ripgrep skips it, a file named explicitly is read whatever it is) and
/// loads every file with `opts`. Returns the corpus and every error met,
/// in order — walk errors, unreadable files, and the warnings of files cut
/// short (those still load) — so a caller reports them and goes on.
/// `progress` is called after the walk and after each file.
pub fn load_paths(
    paths: &[PathBuf],
    walk: &WalkOptions,
    opts: LoadOptions,
    progress: &mut dyn FnMut(LoadProgress),
) -> (Corpus, Vec<Error>) {
    let mut corpus = Corpus::new();
    let mut errors = Vec::new();
    let walker = match Walker::new(walk) {
        Ok(w) => w,
        Err(e) => return (corpus, vec![e]),
    };
    let mut found = Vec::new();
    for f in walker.walk(paths) {
        match f {
            Ok(f) => found.push(f),
            Err(e) => errors.push(e),
        }
    }
    let sizes: Vec<u64> = found
        .iter()
        .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
        .collect();
    let mut p = LoadProgress {
        files_total: found.len() as u64,
        bytes_total: sizes.iter().sum(),
        ..Default::default()
    };
    progress(p);
    for (f, size) in found.iter().zip(sizes) {
        let loaded = if f.path.as_os_str() == "-" {
            Document::stdin().map(Some)
        } else if f.explicit {
            Document::open(&f.path, opts).map(Some)
        } else {
            Document::open_found(&f.path, opts)
        };
        match loaded {
            Ok(Some(d)) => {
                if let Some(w) = d.warning() {
                    errors.push(Error::query(w.to_string()));
                }
                p.bytes_loaded += d.data().len() as u64;
                corpus.push(d);
            }
            // Binary, found by the walk: skipped without a word (rg).
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        p.files_done += 1;
        p.bytes_done += size;
        progress(p);
    }
    (corpus, errors)
}
