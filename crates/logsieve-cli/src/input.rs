//! What the CLI reads: patterns from flags and `-f FILE`, the paths to
//! search (stdin when piped), and the corpus `load`.

use std::ffi::OsString;
use std::io::{self, IsTerminal};
use std::path::PathBuf;

use logsieve::corpus::Walker;
use logsieve::{Corpus, Document};

use crate::flags::shared::InputArgs;
use crate::flags::walk::WalkArgs;

use crate::exit::err;

/// A flag's bytes as given (no UTF-8 required on Unix).
pub fn os_to_bytes(s: &OsString) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

/// Reads `-f FILE` patterns: one per line, a trailing `\r` kept as grep does.
pub fn read_pattern_file(path: &PathBuf) -> io::Result<Vec<Vec<u8>>> {
    let data = if path.as_os_str() == "-" {
        let mut v = Vec::new();
        io::Read::read_to_end(&mut io::stdin().lock(), &mut v)?;
        v
    } else {
        std::fs::read(path)?
    };
    let mut out: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(|l| l.to_vec()).collect();
    if data.ends_with(b"\n") || data.is_empty() {
        out.pop();
    }
    Ok(out)
}

/// The `-e` patterns, then every `-f FILE`'s; the error names the file.
pub fn patterns(regexp: &[OsString], files: &[PathBuf]) -> Result<Vec<Vec<u8>>, String> {
    let mut patterns: Vec<Vec<u8>> = regexp.iter().map(os_to_bytes).collect();
    for f in files {
        let ps = read_pattern_file(f).map_err(|e| format!("{}: {e}", f.display()))?;
        patterns.extend(ps);
    }
    Ok(patterns)
}

/// `--token-file FILE`'s token (its first line), or none.
pub fn token(file: &Option<PathBuf>) -> Result<Option<String>, String> {
    file.as_deref()
        .map(logsieve::auth::read_token_file)
        .transpose()
}

/// The paths `search` reads: as given, or `./` when none are given and
/// stdin is a terminal.
pub fn search_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let read_stdin = paths.is_empty() && !io::stdin().is_terminal()
        || paths.iter().any(|p| p.as_os_str() == "-");
    if paths.is_empty() && !read_stdin {
        vec![PathBuf::from("./")]
    } else {
        paths
    }
}

/// Loads the paths (stdin when none and piped, `-` for stdin, directories
/// walked as `walk` says, files a walk finds binary skipped as rg does
/// unless `-a`);
/// errors and incomplete files (cut streams, files that shrank) are
/// reported and flagged, the rest is loaded. Shared by `search` and `stats`.
pub(crate) fn load(paths: &[PathBuf], input: InputArgs, walk: &WalkArgs) -> (Corpus, bool) {
    load_share(paths, input, walk, None)
}

/// [`load`] of the walked files `keep` selects by their index in sorted
/// path order (a cluster worker's share); `None`: all, in walk order.
pub(crate) fn load_share(
    paths: &[PathBuf],
    input: InputArgs,
    walk: &WalkArgs,
    share: Option<&dyn Fn(usize) -> bool>,
) -> (Corpus, bool) {
    let opts = input.load_options();
    let mut corpus = Corpus::new();
    let mut had_error = false;
    let read_stdin = paths.is_empty() && !io::stdin().is_terminal();
    if read_stdin {
        match Document::stdin() {
            Ok(d) => corpus.push(d),
            Err(e) => {
                err(e);
                had_error = true;
            }
        }
        return (corpus, had_error);
    }
    let walker = match Walker::new(&walk.options()) {
        Ok(w) => w,
        Err(e) => {
            err(e);
            return (corpus, true);
        }
    };
    let paths = if paths.is_empty() {
        vec![PathBuf::from("./")]
    } else {
        paths.to_vec()
    };
    match share {
        None => {
            for found in walker.walk(&paths) {
                had_error |= open_into(&mut corpus, found, input, opts);
            }
        }
        Some(keep) => {
            // Sorted first: every worker given the same paths numbers the
            // files the same.
            let mut found = Vec::new();
            for f in walker.walk(&paths) {
                match f {
                    Ok(f) => found.push(f),
                    Err(e) => {
                        err(e);
                        had_error = true;
                    }
                }
            }
            found.sort_by(|a, b| a.path.cmp(&b.path));
            for (k, f) in found.into_iter().enumerate() {
                if keep(k) {
                    had_error |= open_into(&mut corpus, Ok(f), input, opts);
                }
            }
        }
    }
    (corpus, had_error)
}

/// Opens one walked file into `corpus` (binary files a walk found are
/// skipped, as rg skips them); true when it could not be read whole
/// (reported).
fn open_into(
    corpus: &mut Corpus,
    found: Result<logsieve::corpus::Found, logsieve::Error>,
    input: InputArgs,
    opts: logsieve::LoadOptions,
) -> bool {
    let loaded = found.and_then(|f| {
        if f.path.as_os_str() == "-" {
            Document::stdin().map(Some)
        } else if f.explicit || input.text {
            Document::open(&f.path, opts).map(Some)
        } else {
            Document::open_found(&f.path, opts)
        }
    });
    match loaded {
        Ok(Some(d)) => {
            let warned = d.warning().inspect(|w| err(w)).is_some();
            corpus.push(d);
            warned
        }
        // Binary, found by the walk: skipped without a word (rg).
        Ok(None) => false,
        Err(e) => {
            err(e);
            true
        }
    }
}
