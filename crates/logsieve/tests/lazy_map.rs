//! A settled file is memory-mapped without populating it (its pages are
//! mapped as the search reads them, as rg 13 does): searched right on one
//! thread and several, for counts and lines, against the naive oracle; and
//! the planner's probe (`planner::scan_probe`) times the page faults of
//! such a map, which `--explain` names, and none for bytes in memory.

mod common;

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use common::{build, naive, pats, Flags};
use logsieve::corpus::{load_paths, LoadProgress, WalkOptions};
use logsieve::{
    BackendChoice, Corpus, LoadOptions, QueryBuilder, Request, SearchOptions, Session, Syntax, Want,
};

/// A 5 MiB log (over the probe's 4 MiB floor) written and settled (an old
/// mtime, so that it is mapped), loaded; with its bytes.
fn mapped(name: &str) -> (Corpus, Vec<u8>, PathBuf) {
    let d = std::env::temp_dir().join(format!("logsieve-lazy-map-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    let p = d.join("app.log");
    let mut data = common::generated(26_000, 7);
    // An odd length and no final newline: the last page is partial.
    data.extend_from_slice(b"tail ERROR_503 without newline");
    assert!(data.len() > 4 << 20, "{}", data.len());
    fs::write(&p, &data).unwrap();
    let f = fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let (c, errs) = load_paths(
        std::slice::from_ref(&p),
        &WalkOptions::default(),
        LoadOptions::default(),
        &mut |_: LoadProgress| {},
    );
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(c.docs().len(), 1);
    assert_eq!(c.docs()[0].data(), &data[..]);
    (c, data, d)
}

#[test]
fn a_lazily_mapped_file_is_searched_right() {
    let (c, data, d) = mapped("search");
    let s = Session::new(c);
    let cases = [
        ("ERROR_503", Syntax::Fixed, ""),
        (r"latency_ms=19\d\d", Syntax::Regex, ""),
        ("timeout", Syntax::Fixed, "i"),
        ("HTTP", Syntax::Fixed, "v"),
        ("admin", Syntax::Regex, "w"),
    ];
    for (p, syntax, f) in cases {
        let f = Flags::parse(f);
        let want = naive(&data, &pats(&[p]), syntax, f);
        assert!(!want.is_empty(), "{p}");
        let q = build(&pats(&[p]), syntax, f).unwrap();
        for threads in [1, 2] {
            for want_kind in [Want::Lines, Want::Count] {
                let opts = SearchOptions {
                    backend: BackendChoice::Cpu,
                    threads,
                    want: want_kind,
                    ..Default::default()
                };
                let r = s.search(&q, &opts).unwrap();
                assert_eq!(r.docs[0].count, want.len() as u64, "{p} -j{threads}");
                if want_kind == Want::Lines {
                    assert_eq!(r.docs[0].lines, want, "{p} -j{threads}");
                }
            }
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_probe_times_the_page_faults_of_a_map_and_explain_names_them() {
    let (c, data, d) = mapped("probe");
    let (scan, faults) = logsieve::planner::scan_probe(&c);
    assert!(scan > 0.0 && scan.is_finite(), "{scan}");
    // MADV_POPULATE_READ: Linux 5.14 and later.
    if cfg!(target_os = "linux") {
        assert!(faults > 0.0 && faults.is_finite(), "{faults}");
    }
    let s = Session::new(c);
    let q = QueryBuilder::new().build(&["ERROR_503"]).unwrap();
    let opts = SearchOptions {
        backend: BackendChoice::Auto,
        threads: 1,
        explain: true,
        ..Default::default()
    };
    let route = s.route(&Request::Search(&q), &opts).unwrap();
    let explain = route.decision.expect("the planner decided").explain();
    assert!(
        explain.contains("cpu speed: ") && explain.contains("probe"),
        "{explain}"
    );
    if cfg!(target_os = "linux") {
        assert!(explain.contains("page faults of the lazy map"), "{explain}");
    }
    // The same bytes in memory: nothing to map, no fault cost.
    let owned = Corpus::from_bytes("mem", data);
    let (scan, faults) = logsieve::planner::scan_probe(&owned);
    assert!(scan > 0.0);
    assert_eq!(faults, 0.0);
    fs::remove_dir_all(&d).unwrap();
}
