//! Faults during load: a file deleted, truncated or replaced
//! while it is being loaded (through `corpus::fault`'s hook, which runs
//! after a file is opened and its head read, and through `load_paths`'s
//! progress callback, which runs between files); a read error mid-file; an
//! unreadable file. The load never panics, says what happened, and keeps
//! every other file; what it loaded is searched right (the naive oracle).

mod common;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{naive, pats, Flags};
use logsieve::corpus::fault::set_after_head;
use logsieve::corpus::{load_paths, LoadProgress, WalkOptions};
use logsieve::{Corpus, Document, LoadOptions, QueryBuilder, SearchOptions, Session, Syntax, Want};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "logsieve-load-faults-{}-{name}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Five files of generated logs, `f0.log` .. `f4.log`, with their bytes.
fn files(d: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    (0..5)
        .map(|i| {
            let p = d.join(format!("f{i}.log"));
            let data = common::generated(300, i);
            fs::write(&p, &data).unwrap();
            (p, data)
        })
        .collect()
}

fn load(paths: &[PathBuf], opts: LoadOptions) -> (Corpus, Vec<logsieve::Error>) {
    load_paths(
        paths,
        &WalkOptions::default(),
        opts,
        &mut |_: LoadProgress| {},
    )
}

fn doc<'a>(c: &'a Corpus, p: &Path) -> Option<&'a Document> {
    let name = p.display().to_string();
    c.docs().iter().find(|d| d.name() == name)
}

/// Every document's count of `ERROR` equals the naive oracle's over the
/// bytes it holds (what was loaded is searched right).
fn check_search(c: Corpus) {
    let expected: Vec<u64> = c
        .docs()
        .iter()
        .map(|d| naive(d.data(), &pats(&["ERROR"]), Syntax::Fixed, Flags::default()).len() as u64)
        .collect();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let s = Session::new(c);
    let opts = SearchOptions {
        want: Want::Count,
        ..Default::default()
    };
    let got: Vec<u64> = s
        .search(&q, &opts)
        .unwrap()
        .docs
        .iter()
        .map(|h| h.count)
        .collect();
    assert_eq!(got, expected);
}

/// Runs `hook` when `target` is loaded (after its head is read); clears it after.
fn with_hook<T>(
    target: &Path,
    mut hook: impl FnMut(&Path) -> io::Result<()> + 'static,
    f: impl FnOnce() -> T,
) -> T {
    let target = target.to_path_buf();
    set_after_head(Some(Box::new(
        move |p: &Path| {
            if p == target {
                hook(p)
            } else {
                Ok(())
            }
        },
    )));
    let r = f();
    set_after_head(None);
    r
}

#[test]
fn a_file_deleted_while_loading_keeps_its_bytes_and_the_rest() {
    let d = dir("deleted");
    let fs_ = files(&d);
    let paths: Vec<PathBuf> = fs_.iter().map(|f| f.0.clone()).collect();
    let (c, errs) = with_hook(
        &fs_[2].0,
        |p| fs::remove_file(p),
        || load(&paths, LoadOptions::default()),
    );
    // Open on Linux: the open descriptor still reads the unlinked file.
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(c.docs().len(), 5);
    for (p, data) in &fs_ {
        assert_eq!(doc(&c, p).unwrap().data(), &data[..]);
    }
    check_search(c);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_file_deleted_between_walk_and_load_is_an_error_naming_it_and_the_rest_loads() {
    let d = dir("gone");
    let fs_ = files(&d);
    let victim = fs_[3].0.clone();
    let (c, errs) = load_paths(
        std::slice::from_ref(&d),
        &WalkOptions::default(),
        LoadOptions::default(),
        &mut |p: LoadProgress| {
            // After the walk, before any file is read.
            if p.files_done == 0 && p.files_total == 5 {
                let _ = fs::remove_file(&victim);
            }
        },
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].to_string().contains("f3.log"), "{}", errs[0]);
    assert_eq!(c.docs().len(), 4);
    check_search(c);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_file_truncated_while_loading_keeps_the_prefix_warns_and_the_rest_loads() {
    for no_mmap in [false, true] {
        let d = dir(&format!("trunc-{no_mmap}"));
        let fs_ = files(&d);
        // Settled (old mtime): the mmap path is tried first, and must see
        // the size change.
        for (p, _) in &fs_ {
            let f = fs::File::options().write(true).open(p).unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(3600))
                .unwrap();
        }
        let paths: Vec<PathBuf> = fs_.iter().map(|f| f.0.clone()).collect();
        let cut = fs_[1].1.len() as u64 / 3;
        let (c, errs) = with_hook(
            &fs_[1].0,
            move |p| fs::File::options().write(true).open(p)?.set_len(cut),
            || {
                load(
                    &paths,
                    LoadOptions {
                        no_mmap,
                        search_zip: false,
                    },
                )
            },
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        let msg = errs[0].to_string();
        assert!(msg.contains("f1.log") && msg.contains("shrank"), "{msg}");
        assert_eq!(c.docs().len(), 5);
        let got = doc(&c, &fs_[1].0).unwrap();
        assert!(got.warning().is_some());
        // What was read is the file's bytes up to the cut.
        assert_eq!(got.data(), &fs_[1].1[..cut as usize]);
        for (p, data) in fs_.iter().filter(|f| f.0 != fs_[1].0) {
            assert_eq!(doc(&c, p).unwrap().data(), &data[..]);
        }
        check_search(c);
        fs::remove_dir_all(&d).unwrap();
    }
}

#[test]
fn a_file_replaced_while_loading_loads_one_whole_version_and_the_rest() {
    let d = dir("replaced");
    let fs_ = files(&d);
    let paths: Vec<PathBuf> = fs_.iter().map(|f| f.0.clone()).collect();
    let fresh = common::generated(50, 99);
    let fresh2 = fresh.clone();
    let (c, errs) = with_hook(
        &fs_[0].0,
        move |p| {
            // logrotate's create mode: a new file renamed over the old name.
            let tmp = p.with_extension("new");
            fs::write(&tmp, &fresh2)?;
            fs::rename(&tmp, p)
        },
        || load(&paths, LoadOptions::default()),
    );
    assert!(errs.is_empty(), "{errs:?}");
    let got = doc(&c, &fs_[0].0).unwrap().data().to_vec();
    assert!(got == fs_[0].1 || got == fresh, "a mix of two versions");
    assert_eq!(c.docs().len(), 5);
    check_search(c);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_read_error_mid_file_keeps_what_was_read_with_a_warning_and_the_rest_loads() {
    let d = dir("eio");
    let fs_ = files(&d);
    let paths: Vec<PathBuf> = fs_.iter().map(|f| f.0.clone()).collect();
    // The head is read; reading the rest fails (a bad sector, an NFS
    // hiccup), injected through the hook. Not mapped (fresh mtime).
    let (c, errs) = with_hook(
        &fs_[4].0,
        |_| Err(io::Error::other("injected I/O error")),
        || load(&paths, LoadOptions::default()),
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    let msg = errs[0].to_string();
    assert!(
        msg.contains("f4.log") && msg.contains("injected I/O error"),
        "{msg}"
    );
    assert_eq!(c.docs().len(), 5);
    let got = doc(&c, &fs_[4].0).unwrap();
    assert!(!got.data().is_empty() && fs_[4].1.starts_with(got.data()));
    check_search(c);

    // With -z the compressed stream cannot be cut cleanly: an error, the
    // rest still loads.
    let paths: Vec<PathBuf> = fs_.iter().map(|f| f.0.clone()).collect();
    let (c, errs) = with_hook(
        &fs_[4].0,
        |_| Err(io::Error::other("injected I/O error")),
        || {
            load(
                &paths,
                LoadOptions {
                    no_mmap: false,
                    search_zip: true,
                },
            )
        },
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(c.docs().len(), 4);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_unreadable_file_is_a_clear_error_and_the_rest_loads() {
    let d = dir("unreadable");
    let fs_ = files(&d);
    // /proc/self/mem fails to read at offset 0 (EIO) even for root; a
    // directory given as a file fails to load.
    let mut paths = vec![PathBuf::from("/proc/self/mem")];
    paths.extend(fs_.iter().map(|f| f.0.clone()));
    let (c, errs) = load(&paths, LoadOptions::default());
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].to_string().contains("/proc/self/mem"),
        "{}",
        errs[0]
    );
    assert_eq!(c.docs().len(), 5);
    check_search(c);
    let e = Document::open(&d, LoadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
    fs::remove_dir_all(&d).unwrap();
}

/// REGRESSION: a regular file reporting size 0 (procfs, sysfs) loaded
/// empty without a word: `logsieve processor /proc/cpuinfo` found nothing.
#[test]
fn regression_a_file_of_reported_size_zero_is_read_to_its_end() {
    let want = fs::read("/proc/self/status").unwrap();
    assert_eq!(fs::metadata("/proc/self/status").unwrap().len(), 0);
    let got = Document::open(Path::new("/proc/self/status"), LoadOptions::default()).unwrap();
    // The file describes the process as it reads it: compare its shape.
    assert!(!got.data().is_empty());
    assert_eq!(got.lines().len(), naive_line_count(&want));
    assert!(got.data().starts_with(b"Name:"));
    // A real empty file is still empty, without a warning.
    let d = dir("empty");
    fs::write(d.join("e.log"), b"").unwrap();
    let e = Document::open(&d.join("e.log"), LoadOptions::default()).unwrap();
    assert!(e.data().is_empty() && e.warning().is_none());
    fs::remove_dir_all(&d).unwrap();
}

fn naive_line_count(b: &[u8]) -> u64 {
    common::naive_lines(b).len() as u64
}
