//! Which files a search reads, compared with ripgrep 13 byte for byte where
//! rg behaves the same: symbolic links and loops, FIFOs, ignore files,
//! hidden files, binary files, globs, types, depth, `--files`.
//! Comparisons are skipped, with a note, when rg is absent; the
//! logsieve-only assertions always run.

mod common;

use std::path::Path;

use common::{have, rg, same_as_rg, search, tmp, tool, write};

#[cfg(unix)]
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[cfg(unix)]
fn mkfifo(p: &Path) -> bool {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: mkfifo failed; FIFO cases not run");
    }
    ok
}

/// REGRESSION: `t/loop -> t` made the old walk recurse 40 levels deep
/// (41 lines, exit 2); rg does not follow links unless -L.
#[cfg(unix)]
#[test]
fn symlink_loop_not_followed_then_followed_with_l() {
    let d = tmp();
    write(d.path(), "t/a.log", b"needle\n");
    symlink(d.path().join("t"), d.path().join("t/loop"));
    symlink("a.log", d.path().join("t/link.log"));
    let o = same_as_rg(d.path(), &["-c", "needle", "t"]);
    assert_eq!((o.code, o.out().as_str()), (Some(0), "t/a.log:1\n"));
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    // -L: the link to the file is searched, the loop is reported once, and
    // the exit code says an error happened (as rg: 2).
    let o = same_as_rg(d.path(), &["-L", "-c", "needle", "t"]);
    assert_eq!(o.out(), "t/a.log:1\nt/link.log:1\n");
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("t/loop") && o.stderr.contains("file system loop"),
        "{}",
        o.stderr
    );
}

/// REGRESSION: a FIFO inside a searched directory made the search block
/// forever on open.
#[cfg(unix)]
#[test]
fn fifo_in_a_directory_is_skipped_a_named_one_is_read() {
    let d = tmp();
    write(d.path(), "d/a.log", b"x\n");
    if !mkfifo(&d.path().join("d/p")) {
        return;
    }
    let o = same_as_rg(d.path(), &["x", "d"]);
    assert_eq!((o.code, o.out().as_str()), (Some(0), "d/a.log:x\n"));
    // Named on the command line, a FIFO is read (a writer feeds it).
    let fifo = d.path().join("d/p");
    let writer = std::thread::spawn(move || {
        std::fs::write(&fifo, b"one needle\ntwo\n").unwrap();
    });
    let o = search(d.path(), &["needle", "d/p"]);
    writer.join().unwrap();
    assert_eq!((o.code, o.out().as_str()), (Some(0), "one needle\n"));
}

#[test]
fn gitignore_needs_a_git_repository() {
    let d = tmp();
    write(d.path(), ".gitignore", b"skip.log\nbuild/\n");
    write(d.path(), "keep.log", b"needle keep\n");
    write(d.path(), "skip.log", b"needle skip\n");
    write(d.path(), "build/out.log", b"needle build\n");
    // Not a repository: .gitignore means nothing (rg's rule).
    let o = same_as_rg(d.path(), &["needle", "."]);
    assert_eq!(o.lines().len(), 3, "{}", o.out());
    if !tool(d.path(), "git", &["init", "-q"]) {
        return;
    }
    let o = same_as_rg(d.path(), &["needle", "."]);
    assert_eq!(o.out(), "./keep.log:needle keep\n");
    // A file named on the command line is read even when ignored.
    same_as_rg(d.path(), &["needle", "skip.log", "build"]);
    let o = same_as_rg(d.path(), &["-c", "needle", "--no-ignore-vcs", "."]);
    assert_eq!(o.lines().len(), 3);
    same_as_rg(d.path(), &["-c", "needle", "--no-ignore", "."]);
    // Ignore files of the parent directories count, unless
    // --no-ignore-parent.
    write(d.path(), "sub/x.log", b"needle x\n");
    write(d.path(), "sub/skip.log", b"needle sub skip\n");
    let o = same_as_rg(d.path(), &["needle", "sub"]);
    assert_eq!(o.out(), "sub/x.log:needle x\n");
    let o = same_as_rg(d.path(), &["needle", "--no-ignore-parent", "sub"]);
    assert_eq!(o.lines().len(), 2);
}

#[test]
fn dot_ignore_logsieveignore_and_hidden() {
    let d = tmp();
    write(d.path(), ".ignore", b"*.tmp\n");
    write(d.path(), "a.log", b"needle a\n");
    write(d.path(), "b.tmp", b"needle b\n");
    write(d.path(), ".hidden.log", b"needle hidden\n");
    write(d.path(), ".dir/c.log", b"needle c\n");
    let o = same_as_rg(d.path(), &["needle", "."]);
    assert_eq!(o.out(), "./a.log:needle a\n");
    let o = same_as_rg(d.path(), &["--hidden", "needle", "."]);
    assert_eq!(o.lines().len(), 3, "{}", o.out());
    let o = same_as_rg(d.path(), &["--no-ignore-dot", "needle", "."]);
    assert_eq!(o.lines().len(), 2);
    let o = same_as_rg(d.path(), &["-uu", "-c", "needle", "."]);
    assert_eq!(o.lines().len(), 4);
    // .logsieveignore is our .rgignore (rg does not read it).
    write(d.path(), ".logsieveignore", b"a.log\n");
    let o = search(d.path(), &["needle", "."]);
    assert_eq!((o.code, o.out().as_str()), (Some(1), ""));
    let o = search(d.path(), &["-c", "needle", "--no-ignore", "."]);
    assert_eq!(o.out(), "./a.log:1\n./b.tmp:1\n");
}

#[test]
fn binary_files_skipped_in_a_walk_rotated_logs_searched() {
    let d = tmp();
    write(
        d.path(),
        "logs/bin.log",
        b"needle\x00\x01\x02 junk\nneedle\n",
    );
    write(d.path(), "logs/app.log", b"needle now\n");
    write(d.path(), "logs/app.log.1", b"needle yesterday\n");
    let o = same_as_rg(d.path(), &["needle", "logs"]);
    assert_eq!(
        o.out(),
        "logs/app.log:needle now\nlogs/app.log.1:needle yesterday\n"
    );
    // Named, the binary file is searched and reported as today.
    let o = same_as_rg(d.path(), &["-c", "needle", "logs/bin.log"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["needle", "logs/bin.log"]);
    assert!(o.out().starts_with("binary file matches"), "{}", o.out());
    // A rotated, compressed log: skipped as binary without -z (as rg),
    // searched with -z.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, b"needle last week\n").unwrap();
    write(d.path(), "logs/app.log.2.gz", &gz.finish().unwrap());
    same_as_rg(d.path(), &["-c", "needle", "logs"]);
    let o = search(d.path(), &["-z", "-c", "needle", "logs"]);
    assert_eq!(
        o.out(),
        "logs/app.log:1\nlogs/app.log.1:1\nlogs/app.log.2.gz:1\n"
    );
    if have("gzip") {
        same_as_rg(d.path(), &["-z", "-c", "needle", "logs"]);
    }
}

#[cfg(unix)]
#[test]
fn broken_symlinks_and_missing_paths() {
    let d = tmp();
    write(d.path(), "t/a.log", b"needle\n");
    symlink("nothere", d.path().join("t/broken.log"));
    // In a walk: skipped without a word.
    let o = same_as_rg(d.path(), &["needle", "t"]);
    assert_eq!((o.code, o.stderr.as_str()), (Some(0), ""));
    // Followed (-L) it is an error; named, too; the rest is searched.
    let o = same_as_rg(d.path(), &["-L", "needle", "t"]);
    assert!(o.stderr.contains("t/broken.log"), "{}", o.stderr);
    let o = same_as_rg(d.path(), &["needle", "nope.log", "t/broken.log", "t"]);
    assert_eq!((o.code, o.out().as_str()), (Some(2), "t/a.log:needle\n"));
    assert!(o.stderr.contains("nope.log") && o.stderr.contains("broken.log"));
}

fn tree(d: &Path) {
    for name in [
        "app.log",
        "notes.txt",
        "main.rs",
        "sub/b.log",
        "sub/c.txt",
        "sub/deep/d.log",
    ] {
        write(d, name, format!("needle in {name}\n").as_bytes());
    }
}

#[test]
fn globs_types_and_depth() {
    let d = tmp();
    tree(d.path());
    for args in [
        &["-g", "*.log", "needle"][..],
        &["-g", "!*.txt", "needle"],
        &["-g", "*.log", "-g", "!sub/**", "needle"],
        &["-g", "sub/**", "-c", "needle"],
        &["-g", "*.LOG", "needle"],
        &["-t", "log", "needle"],
        &["-t", "rust", "-t", "txt", "needle"],
        &["-T", "log", "needle"],
        &["--max-depth", "1", "needle"],
        &["--max-depth", "2", "-t", "log", "needle"],
        &["--max-depth", "0", "needle", "sub", "app.log"],
    ] {
        let mut a = args.to_vec();
        a.push(".");
        same_as_rg(d.path(), &a);
    }
    // An unknown type is an error, before any search (as rg).
    let o = same_as_rg(d.path(), &["-t", "nosuchtype", "needle", "."]);
    assert_eq!(o.code, Some(2));
    // Our log type also takes rotated logs, which rg's does not.
    write(d.path(), "old/app.log.1", b"needle\n");
    write(d.path(), "old/app.log-20261124", b"needle\n");
    write(d.path(), "old/syslog.2", b"needle\n");
    let o = search(d.path(), &["-t", "log", "-l", "needle", "old"]);
    assert_eq!(
        o.lines(),
        ["old/app.log-20261124", "old/app.log.1", "old/syslog.2"]
    );
}

#[test]
fn files_and_type_list() {
    let d = tmp();
    tree(d.path());
    write(d.path(), ".hidden.log", b"x\n");
    for args in [
        &["--files"][..],
        &["--files", "."],
        &["--files", "sub", "app.log"],
        &["--files", "-g", "*.log"],
        &["--files", "-t", "txt", "--max-depth", "1"],
        &["--files", "--hidden", "sub", "."],
    ] {
        same_as_rg(d.path(), args);
    }
    // --files lists what would be searched: not the binary check (rg does
    // not open the files either), but the walk's rules.
    let o = search(d.path(), &["--files", "-T", "log"]);
    assert_eq!(o.out(), "main.rs\nnotes.txt\nsub/c.txt\n");
    // An empty directory: nothing listed, exit 1 (rg).
    std::fs::create_dir_all(d.path().join("empty")).unwrap();
    same_as_rg(d.path(), &["--files", "empty"]);
    let o = search(d.path(), &["--type-list"]);
    assert_eq!(o.code, Some(0));
    let log = o.lines().into_iter().find(|l| l.starts_with("log: "));
    let log = log.expect("a log type");
    assert!(
        log.contains("*.log, ") && log.contains("*.log.[0-9]*"),
        "{log}"
    );
    if have("rg") {
        // Types both know are defined alike (rg 13 bundles an older
        // ignore crate, whose list is shorter: compare a few stable ones).
        let theirs = rg(d.path(), &["--type-list"]).out();
        for name in ["rust: ", "txt: "] {
            let line = |s: &str| s.lines().find(|l| l.starts_with(name)).map(str::to_string);
            assert_eq!(line(&o.out()), line(&theirs), "{name}");
        }
    }
    // `stats` takes the same flags.
    let o = common::run_limited(
        common::exe(),
        d.path(),
        &["stats", "--files", "-t", "rust"],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(o.out(), "main.rs\n");
}

#[test]
fn sort_none_finds_the_same_files() {
    let d = tmp();
    tree(d.path());
    let sorted = search(d.path(), &["-c", "needle", "."]);
    let unsorted = search(d.path(), &["--sort", "none", "-c", "needle", "."]);
    let mut a = sorted.lines();
    let mut b = unsorted.lines();
    assert_eq!(a.len(), 6);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(sorted.lines(), a, "the default order is sorted by path");
}
