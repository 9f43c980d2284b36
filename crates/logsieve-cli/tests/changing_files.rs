//! Files that change while they are searched, and compressed files that are
//! cut short: logsieve never dies of a signal, searches what it could read,
//! says what is missing and exits 2.

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{have, rg, search, tmp, tool, write};

fn log(lines: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(lines * 48);
    for i in 0..lines {
        writeln!(
            v,
            "2026-11-24T10:00:{:02}Z host{} {} request {i}",
            i % 60,
            i % 7,
            if i % 97 == 0 { "needle" } else { "ok" }
        )
        .unwrap();
    }
    v
}

/// REGRESSION: a file truncated while it was searched (logrotate's
/// copytruncate) killed logsieve with SIGBUS (exit 135): it was mapped.
/// Here a writer truncates and refills the file in a loop while logsieve
/// searches it again and again; every run must exit 0, 1 or 2.
#[test]
fn truncated_while_searched_never_kills() {
    let d = tmp();
    let data = log(300_000); // ~14 MB
    let path = write(d.path(), "app.log", &data);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut cycles = 0u32;
            while !stop.load(Ordering::Relaxed) {
                // Shrink in steps, as a truncation racing a reader would.
                for len in [data.len() / 2, data.len() / 8, 0] {
                    f.set_len(len as u64).unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
                std::fs::write(&path, &data).unwrap();
                cycles += 1;
            }
            cycles
        })
    };
    let start = Instant::now();
    let (mut runs, mut shrank) = (0, 0);
    while start.elapsed() < Duration::from_secs(3) {
        for args in [
            &["-c", "needle", "app.log"][..],
            &["--no-mmap", "-c", "needle", "app.log"],
        ] {
            let o = search(d.path(), args);
            assert!(
                matches!(o.code, Some(0..=2)),
                "run {runs} {args:?}: {:?}, stderr {}",
                o.code,
                o.stderr
            );
            if o.code == Some(2) {
                assert!(o.stderr.contains("app.log"), "{}", o.stderr);
            }
            shrank += o.stderr.contains("shrank while being read") as u32;
            runs += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let cycles = writer.join().unwrap();
    eprintln!("{runs} searches, {cycles} truncation cycles, {shrank} shrink warnings");
    assert!(runs >= 4 && cycles >= 1);
}

/// A settled file is mapped and searched as before; `--no-mmap` agrees.
#[test]
fn settled_and_fresh_files_agree() {
    let d = tmp();
    let path = write(d.path(), "app.log", &log(20_000));
    let fresh = search(d.path(), &["-c", "needle", "app.log"]);
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let settled = search(d.path(), &["-c", "needle", "app.log"]);
    let read = search(d.path(), &["--no-mmap", "-c", "needle", "app.log"]);
    assert_eq!(fresh.out(), "207\n");
    assert_eq!(settled.out(), fresh.out());
    assert_eq!(read.out(), fresh.out());
}

/// Every `-z` format: the `bzip2`, `xz`, `zstd`, `lz4` and `gzip` commands
/// make the files (each skipped, with a note, when absent); logsieve reads
/// them whole, and rg (which runs those same commands) agrees. Cut in
/// half, each still gives the lines before the cut, a warning, exit 2.
#[test]
fn every_compression_whole_and_cut() {
    let d = tmp();
    // ~7 MB: more than a block of every decoder (below), so that half of
    // each compressed file decodes to something.
    let data = log(150_000);
    let plain = write(d.path(), "app.log", &data);
    let want = search(d.path(), &["-c", "needle", "app.log"]).out();
    assert_eq!(want, "1547\n");
    let formats: [(&str, &[&str], &str); 6] = [
        ("gzip", &["-k", "-f"], "gz"),
        ("bzip2", &["-k", "-f"], "bz2"),
        ("xz", &["-k", "-f"], "xz"),
        ("zstd", &["-q", "-k", "-f"], "zst"),
        ("lz4", &["-q", "-f", "app.log", "app.log.lz4"], "lz4"),
        ("xz", &["-k", "-f", "--format=lzma"], "lzma"),
    ];
    for (cmd, args, ext) in formats {
        let mut a = args.to_vec();
        if cmd != "lz4" {
            a.push("app.log");
        }
        if !tool(d.path(), cmd, &a) {
            continue;
        }
        let name = format!("app.log.{ext}");
        let o = search(d.path(), &["-z", "-c", "needle", &name]);
        assert_eq!(
            (o.code, o.out()),
            (Some(0), want.clone()),
            "{name}: {}",
            o.stderr
        );
        // The magic decides, not the name.
        let renamed = format!("renamed-{ext}.log");
        std::fs::copy(d.path().join(&name), d.path().join(&renamed)).unwrap();
        if ext != "lzma" {
            let o = search(d.path(), &["-z", "-c", "needle", &renamed]);
            assert_eq!(o.out(), want, "{renamed}: {}", o.stderr);
        }
        if have("rg") {
            let ours = search(d.path(), &["-z", "-n", "needle", &name]);
            let theirs = rg(d.path(), &["-z", "-n", "needle", &name]);
            assert!(ours.stdout == theirs.stdout, "{name}: differs from rg -z");
        }
        // Cut in half: a prefix of the lines, a warning naming the file.
        let whole = std::fs::read(d.path().join(&name)).unwrap();
        let cut = format!("cut.log.{ext}");
        write(d.path(), &cut, &whole[..whole.len() / 2]);
        let o = search(d.path(), &["-z", "needle", &cut, "app.log"]);
        assert_eq!(o.code, Some(2), "{cut}");
        assert!(
            o.stderr.contains(&cut) && o.stderr.contains("stream cut short"),
            "{cut}: {}",
            o.stderr
        );
        let ours: Vec<String> = o
            .lines()
            .into_iter()
            .filter_map(|l| l.strip_prefix(&format!("{cut}:")).map(str::to_string))
            .collect();
        let all = search(d.path(), &["needle", "app.log"]).lines();
        // Decoders give their output a block at a time (bzip2: 900 kB of
        // input; xz: LZMA2 chunks of 2 MiB of output; ruzstd holds back a
        // window of 2 MiB at zstd's default level): half of 7 MB is more.
        // Not lz4's 4 MiB blocks: `lz4 -dc` decodes nothing from this cut
        // either (and the cut is then an error, with the same words).
        assert!(
            !ours.is_empty() || ext == "lz4",
            "{cut}: nothing before the cut"
        );
        assert!(ours.len() < all.len(), "{cut}: the whole file after a cut?");
        assert_eq!(ours[..], all[..ours.len()], "{cut}: not a prefix");
        // The other file is still searched in full.
        let others = o
            .lines()
            .iter()
            .filter(|l| l.starts_with("app.log:"))
            .count();
        assert_eq!(others, all.len());
    }
    let _ = plain;
}

/// A truncated .gz gives what `zcat` gives: the complete lines before the
/// cut (zcat may print part of one more line).
#[test]
fn truncated_gzip_matches_zcat_prefix() {
    let d = tmp();
    let data = log(40_000);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&data).unwrap();
    let gz = e.finish().unwrap();
    write(d.path(), "cut.log.gz", &gz[..gz.len() * 2 / 3]);
    let o = search(d.path(), &["-z", "-c", "", "cut.log.gz"]);
    assert_eq!(o.code, Some(2));
    let n: usize = o.out().trim().parse().unwrap();
    assert!(n > 0 && n < 40_000, "{n}");
    if !have("zcat") {
        return;
    }
    let z = std::process::Command::new("zcat")
        .arg(d.path().join("cut.log.gz"))
        .output()
        .unwrap();
    assert!(!z.status.success());
    let full_lines = z.stdout.iter().filter(|&&b| b == b'\n').count();
    // Ours counts a last unterminated line too; zcat and flate2 may stop a
    // few bytes apart inside the last block.
    assert!(
        n.abs_diff(full_lines) <= 1 || n.abs_diff(full_lines) * 100 < full_lines,
        "ours {n} lines, zcat {full_lines}"
    );
    assert!(
        Path::new(&d.path().join("cut.log.gz")).exists(),
        "the input is left alone"
    );
}

/// `-z` on a file compressed in a format we do not decode is an error
/// naming the format, and the other files are still searched.
#[test]
fn undecodable_compression_is_an_error() {
    let d = tmp();
    write(d.path(), "old.log.Z", b"\x1f\x9d\x90needle");
    write(d.path(), "a.log", b"needle\n");
    let o = search(d.path(), &["-z", "needle", "old.log.Z", "a.log"]);
    assert_eq!((o.code, o.out().as_str()), (Some(2), "a.log:needle\n"));
    assert!(
        o.stderr.contains("old.log.Z") && o.stderr.contains("compress"),
        "{}",
        o.stderr
    );
}
