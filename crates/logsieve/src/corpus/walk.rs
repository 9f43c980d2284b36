//! Which files a search reads: ripgrep's directory walk, with ripgrep's own
//! `ignore` crate, so that `.gitignore`, `.ignore`, hidden files, globs,
//! file types and symbolic links behave as `rg` 13 does.
//!
//! What we do differently from rg, on purpose:
//! * the walk is sorted by path unless [`SortBy::None`] is asked for (rg
//!   walks in parallel, unsorted): the same search prints the same bytes;
//! * `.logsieveignore` plays the part of `.rgignore`;
//! * the `log` file type also covers rotated and compressed logs
//!   ([`LOG_GLOBS`]).
//!
//! Not on wasm32: a browser page has no directories to walk.

use std::io;
use std::path::{Path, PathBuf};

use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use ignore::WalkBuilder;

use crate::error::Error;

/// Globs added to the `log` file type (ignore's default has only `*.log`):
/// rotated logs (logrotate's numbers and dates, compressed or not), syslog
/// and messages files, Apache's `access_log`/`error_log`, and `*.gz`.
pub const LOG_GLOBS: &[&str] = &[
    "*.log.[0-9]*",
    "*.log-[0-9]*",
    "*.log.{gz,bz2,xz,lzma,lz,zst,lz4}",
    "*.gz",
    "*_log",
    "*_log.[0-9]*",
    "*_log-[0-9]*",
    "syslog",
    "syslog.[0-9]*",
    "syslog-[0-9]*",
    "messages",
    "messages.[0-9]*",
    "messages-[0-9]*",
];

/// The name ignore files have besides `.gitignore` and `.ignore` (as
/// `.rgignore` is to rg).
pub const IGNORE_FILE: &str = ".logsieveignore";

/// The order of the files found in a directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By path, depth first (the default: the output is reproducible).
    #[default]
    Path,
    /// In the order the directory lists them.
    None,
}

/// How directories are walked. `Default` is rg's default, except for the
/// sorted order ([`SortBy`]).
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Search hidden files and directories (`--hidden`).
    pub hidden: bool,
    /// Honour no ignore file at all (`--no-ignore`): implies the three
    /// below and turns off `.logsieveignore`.
    pub no_ignore: bool,
    /// Ignore `.ignore` (and `.logsieveignore`) files (`--no-ignore-dot`).
    pub no_ignore_dot: bool,
    /// Ignore `.gitignore`, `.git/info/exclude` and git's global excludes
    /// (`--no-ignore-vcs`).
    pub no_ignore_vcs: bool,
    /// Do not read ignore files of the directories above a searched one
    /// (`--no-ignore-parent`).
    pub no_ignore_parent: bool,
    /// Follow symbolic links, with loop detection (`-L/--follow`).
    pub follow: bool,
    /// Descend at most this many directories (`--max-depth`; 0: only the
    /// paths given).
    pub max_depth: Option<usize>,
    /// rg globs (`-g`): a file is searched only if it matches one; `!glob`
    /// excludes. Relative to the current directory.
    pub globs: Vec<String>,
    /// Only these file types (`-t`).
    pub types: Vec<String>,
    /// Not these file types (`-T`).
    pub type_not: Vec<String>,
    /// The order of the files found.
    pub sort: SortBy,
    /// Skip the file that standard output writes to, so that
    /// `logsieve search x . > out` does not read its own output (rg does
    /// this too, except with `--files`).
    pub skip_stdout: bool,
}

/// One path to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The path, as given or as the walk built it (`dir/sub/file`).
    pub path: PathBuf,
    /// True when the path was given, not found by a walk: rg reads such
    /// a file whatever it is (a FIFO, a binary file, an ignored name).
    pub explicit: bool,
}

/// A walk, its globs and types compiled once.
pub struct Walker {
    opts: WalkOptions,
    overrides: Override,
    types: Types,
}

impl std::fmt::Debug for Walker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walker").field("opts", &self.opts).finish()
    }
}

/// ignore's default file types plus the wider `log` type.
fn types_builder() -> TypesBuilder {
    let mut b = TypesBuilder::new();
    b.add_defaults();
    for g in LOG_GLOBS {
        b.add("log", g).expect("the log globs are valid");
    }
    b
}

/// Every file type `-t` knows, sorted by name: `(name, globs)`.
pub fn type_list() -> Vec<(String, Vec<String>)> {
    let b = types_builder();
    b.definitions()
        .into_iter()
        .map(|d| (d.name().to_string(), d.globs().to_vec()))
        .collect()
}

fn usage(msg: String) -> Error {
    Error::query(msg)
}

impl Walker {
    /// Compiles the globs and types of `opts`; an invalid glob or an
    /// unknown type is an error.
    pub fn new(opts: &WalkOptions) -> Result<Walker, Error> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut ob = OverrideBuilder::new(cwd);
        for g in &opts.globs {
            ob.add(g).map_err(|e| usage(format!("-g {g}: {e}")))?;
        }
        let overrides = ob.build().map_err(|e| usage(format!("--glob: {e}")))?;
        let mut tb = types_builder();
        for t in &opts.types {
            tb.select(t);
        }
        for t in &opts.type_not {
            tb.negate(t);
        }
        let types = tb.build().map_err(|e| usage(e.to_string()))?;
        Ok(Walker {
            opts: opts.clone(),
            overrides,
            types,
        })
    }

    /// The files to read, in order: each path given (`-` is stdin, kept
    /// as is), directories walked. A path that cannot be read, and every
    /// error met on the walk (a directory that cannot be listed, a link
    /// loop or a dangling link with `follow`), comes back in its place,
    /// so that a caller reports it and goes on. A walk yields regular
    /// files only: FIFOs, sockets and devices are skipped, and so are
    /// symbolic links unless `follow` is set (a dangling one silently).
    pub fn walk(&self, paths: &[PathBuf]) -> Vec<Result<Found, Error>> {
        let mut out = Vec::new();
        for p in paths {
            if p.as_os_str() == "-" {
                out.push(Ok(Found {
                    path: p.clone(),
                    explicit: true,
                }));
                continue;
            }
            match std::fs::metadata(p) {
                Err(e) => out.push(Err(Error::io(&p.display().to_string(), e))),
                Ok(m) if !m.is_dir() => out.push(Ok(Found {
                    path: p.clone(),
                    explicit: true,
                })),
                Ok(_) => self.walk_dir(p, &mut out),
            }
        }
        out
    }

    fn walk_dir(&self, dir: &Path, out: &mut Vec<Result<Found, Error>>) {
        let o = &self.opts;
        let mut b = WalkBuilder::new(dir);
        b.hidden(!o.hidden)
            .ignore(!(o.no_ignore || o.no_ignore_dot))
            .git_ignore(!(o.no_ignore || o.no_ignore_vcs))
            .git_global(!(o.no_ignore || o.no_ignore_vcs))
            .git_exclude(!(o.no_ignore || o.no_ignore_vcs))
            .parents(!(o.no_ignore || o.no_ignore_parent))
            .follow_links(o.follow)
            .max_depth(o.max_depth)
            .skip_stdout(o.skip_stdout)
            .overrides(self.overrides.clone())
            .types(self.types.clone());
        if !(o.no_ignore || o.no_ignore_dot) {
            b.add_custom_ignore_filename(IGNORE_FILE);
        }
        if o.sort == SortBy::Path {
            b.sort_by_file_name(|a, b| a.cmp(b));
        }
        for entry in b.build() {
            match entry {
                Ok(e) if e.depth() > 0 && e.file_type().is_some_and(|t| t.is_file()) => {
                    out.push(Ok(Found {
                        path: e.into_path(),
                        explicit: false,
                    }))
                }
                Ok(_) => {}
                Err(e) => out.push(Err(walk_error(e, None))),
            }
        }
    }
}

/// An `ignore` error as ours: the path it is about, and the cause in the
/// words rg prints.
fn walk_error(e: ignore::Error, path: Option<PathBuf>) -> Error {
    let name = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or(String::new(), |p| p.display().to_string())
    };
    match e {
        ignore::Error::WithPath { path, err } => walk_error(*err, Some(path)),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error(*err, path)
        }
        ignore::Error::Partial(mut errs) if !errs.is_empty() => walk_error(errs.remove(0), path),
        ignore::Error::Io(err) => Error::io(&name(&path), err),
        ignore::Error::Loop { ancestor, child } => Error::io(
            &child.display().to_string(),
            io::Error::other(format!(
                "file system loop found: points to an ancestor {}",
                ancestor.display()
            )),
        ),
        other => Error::io(&name(&path), io::Error::other(other.to_string())),
    }
}

/// [`Walker::walk`] with `opts`, paths only; an invalid glob or type is
/// the one error returned.
pub fn expand_paths_with(paths: &[PathBuf], opts: &WalkOptions) -> Vec<Result<PathBuf, Error>> {
    match Walker::new(opts) {
        Ok(w) => w
            .walk(paths)
            .into_iter()
            .map(|r| r.map(|f| f.path))
            .collect(),
        Err(e) => vec![Err(e)],
    }
}

/// Expands `paths` the way ripgrep does by default (sorted): files as
/// given, directories walked honouring ignore files, hidden entries
/// skipped. See [`Walker::walk`].
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, Error>> {
    expand_paths_with(paths, &WalkOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &[u8])]) -> tempfile_lite::Dir {
        let d = tempfile_lite::Dir::new();
        for (name, data) in files {
            let p = d.0.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
        d
    }

    /// A temporary directory removed on drop (the library has no
    /// tempfile dev-dependency; this is all it needs).
    mod tempfile_lite {
        use std::path::PathBuf;
        use std::sync::atomic::{AtomicUsize, Ordering};

        pub struct Dir(pub PathBuf);

        impl Dir {
            pub fn new() -> Dir {
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "logsieve-walk-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                let _ = std::fs::remove_dir_all(&p);
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn names(d: &Path, opts: &WalkOptions) -> Vec<String> {
        expand_paths_with(&[d.to_path_buf()], opts)
            .into_iter()
            .map(|r| {
                let p = r.unwrap();
                p.strip_prefix(d).unwrap().display().to_string()
            })
            .collect()
    }

    #[test]
    fn sorted_hidden_skipped_ignore_files_honoured() {
        let d = tree(&[
            ("b.log", b"x"),
            ("a/z.log", b"x"),
            ("a/y.txt", b"x"),
            (".h/c.log", b"x"),
            (".hidden.log", b"x"),
            (".ignore", b"y.txt\n"),
            ("sub/.logsieveignore", b"*.tmp\n"),
            ("sub/k.tmp", b"x"),
            ("sub/k.log", b"x"),
        ]);
        let o = WalkOptions::default();
        assert_eq!(names(&d.0, &o), ["a/z.log", "b.log", "sub/k.log"]);
        let o = WalkOptions {
            hidden: true,
            ..Default::default()
        };
        assert_eq!(
            names(&d.0, &o),
            [
                ".h/c.log",
                ".hidden.log",
                ".ignore",
                "a/z.log",
                "b.log",
                "sub/.logsieveignore",
                "sub/k.log"
            ]
        );
        let o = WalkOptions {
            no_ignore: true,
            ..Default::default()
        };
        assert_eq!(
            names(&d.0, &o),
            ["a/y.txt", "a/z.log", "b.log", "sub/k.log", "sub/k.tmp"]
        );
        let o = WalkOptions {
            no_ignore_dot: true,
            ..Default::default()
        };
        assert_eq!(
            names(&d.0, &o),
            ["a/y.txt", "a/z.log", "b.log", "sub/k.log", "sub/k.tmp"]
        );
    }

    #[test]
    fn types_globs_and_depth() {
        let d = tree(&[
            ("app.log", b"x"),
            ("app.log.1", b"x"),
            ("app.log.2.gz", b"x"),
            ("app.log-20261124", b"x"),
            ("var/syslog", b"x"),
            ("var/syslog.3", b"x"),
            ("var/access_log", b"x"),
            ("notes.txt", b"x"),
            ("main.rs", b"x"),
        ]);
        let log = WalkOptions {
            types: vec!["log".into()],
            ..Default::default()
        };
        assert_eq!(
            names(&d.0, &log),
            [
                "app.log",
                "app.log-20261124",
                "app.log.1",
                "app.log.2.gz",
                "var/access_log",
                "var/syslog",
                "var/syslog.3"
            ]
        );
        let not_log = WalkOptions {
            type_not: vec!["log".into()],
            ..Default::default()
        };
        assert_eq!(names(&d.0, &not_log), ["main.rs", "notes.txt"]);
        let depth = WalkOptions {
            max_depth: Some(1),
            globs: vec!["!*.rs".into()],
            ..Default::default()
        };
        assert_eq!(
            names(&d.0, &depth),
            [
                "app.log",
                "app.log-20261124",
                "app.log.1",
                "app.log.2.gz",
                "notes.txt"
            ]
        );
        let bad_type = WalkOptions {
            types: vec!["no-such-type".into()],
            ..Default::default()
        };
        assert!(Walker::new(&bad_type).is_err());
        let bad_glob = WalkOptions {
            globs: vec!["a{".into()],
            ..Default::default()
        };
        assert!(Walker::new(&bad_glob).is_err());
        assert!(type_list().iter().any(|(n, g)| n == "log" && g.len() > 1));
    }

    #[cfg(unix)]
    #[test]
    fn links_fifos_and_loops() {
        use std::os::unix::fs::symlink;
        let d = tree(&[("t/a.log", b"needle\n")]);
        let t = d.0.join("t");
        symlink(&t, t.join("loop")).unwrap();
        symlink("nothere", t.join("broken")).unwrap();
        symlink("a.log", t.join("link.log")).unwrap();
        let fifo = t.join("p");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        // Not followed: only the file; the FIFO, the links, the loop are
        // skipped without a word.
        assert_eq!(names(&t, &WalkOptions::default()), ["a.log"]);
        // Followed: the link to the file is read, the loop and the dangling
        // link are errors; the FIFO is still skipped.
        let follow = WalkOptions {
            follow: true,
            ..Default::default()
        };
        let got = expand_paths_with(std::slice::from_ref(&t), &follow);
        let files: Vec<_> = got.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(files, [&t.join("a.log"), &t.join("link.log")]);
        let errs: Vec<String> = got
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("loop")), "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("broken")), "{errs:?}");
        // A FIFO given by name is kept (the caller reads it).
        if ok {
            let got = expand_paths(std::slice::from_ref(&fifo));
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].as_ref().unwrap(), &fifo);
        }
        // A missing path is an error in its place.
        let got = expand_paths(&[d.0.join("nope"), t.join("a.log")]);
        assert!(got[0]
            .as_ref()
            .is_err_and(|e| e.to_string().contains("nope")));
        assert!(got[1].is_ok());
    }
}
