//! `scan` with its parameters in the uniform buffer, as in a browser (where
//! WebGPU has no immediate data yet) and on adapters without immediates:
//! natively the engine passes them as immediate data, so this test turns
//! that off (`GpuTuning::no_immediates`, given when the context is created)
//! and checks the case table and a boundary sweep against the CPU oracle.
//!
//! Runs on whatever adapter exists (lavapipe in CI); without one it says so
//! and passes, unless `LOGSIEVE_REQUIRE_GPU=1`.

mod common;

use common::{build, Flags, CASES};
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gpu::{unsupported_reason, GpuContext, GpuCorpus, GpuKernel, GpuTuning};
use logsieve::{Corpus, Syntax, Want};

#[test]
fn scan_with_uniform_parameters_matches_the_oracle() {
    let ctx = match GpuContext::new_with(&GpuTuning {
        no_immediates: true,
        ..Default::default()
    }) {
        Ok(c) => c,
        Err(e) => {
            logsieve::gpu::or_skip::<(), _>("uniform-parameter scan tests", Err(e));
            return;
        }
    };
    assert!(!ctx.info().scan_immediates, "the switch was not honoured");
    let mut ran = 0;
    let mut check = |corpus: &Corpus, q: &logsieve::Query, what: &str| {
        let g = GpuCorpus::upload(&ctx, corpus).unwrap();
        for want in [Want::Count, Want::Lines] {
            let r = g.search(corpus, q, GpuKernel::Scan, want).unwrap();
            for (got, d) in r.docs.iter().zip(corpus.docs()) {
                let exp = search_doc(d, q, &CpuOptions::default());
                assert_eq!(got.count, exp.count, "{what} {want:?}");
                if want == Want::Lines {
                    assert_eq!(got.lines, exp.lines, "{what}");
                }
            }
        }
        ran += 1;
    };
    for case in CASES {
        let Ok(q) = build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        if unsupported_reason(&q).is_some() {
            continue;
        }
        check(
            &Corpus::from_bytes(case.name, case.corpus.to_vec()),
            &q,
            case.name,
        );
    }
    // One-, two- and many-byte patterns at every alignment, with near misses.
    for pat in [&b"E"[..], b"ER", b"ERROR_503", b"needle-of-17-byte"] {
        let mut hay = Vec::new();
        for pad in 0..=16 {
            hay.extend(std::iter::repeat_n(b'.', pad));
            let mut miss = pat.to_vec();
            miss[pad % pat.len()] = b'#';
            hay.extend_from_slice(&miss);
            hay.push(b' ');
            hay.extend_from_slice(pat);
            hay.extend_from_slice(if pad % 3 == 0 { b"\r\n" } else { b"\n" });
        }
        for flags in ["", "i", "v"] {
            let p = if flags == "i" {
                pat.to_ascii_lowercase()
            } else {
                pat.to_vec()
            };
            let q = build(&[p], Syntax::Fixed, Flags::parse(flags)).unwrap();
            let what = format!("sweep {} -{flags}", String::from_utf8_lossy(pat));
            check(&Corpus::from_bytes("sweep", hay.clone()), &q, &what);
        }
    }
    assert!(ran >= 20, "only {ran} checks ran");
}
