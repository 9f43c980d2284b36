//! Every GPU kernel against the CPU engine, in a browser: the same WGSL on
//! WebGPU (headless Chromium with `--enable-unsafe-webgpu`: SwiftShader),
//! driven through the async API the page uses. The case table is the
//! native suite's (`crates/logsieve/tests/common`), so both run the same
//! cases. Run by `scripts/test-web.sh` (wasm-bindgen-test-runner +
//! chromedriver; Chrome flags in `webdriver.json`).
//!
//! Without a WebGPU adapter the tests say so loudly and pass, unless the
//! build had `LOGSIEVE_REQUIRE_GPU=1` in its environment (read at compile
//! time: a browser has no environment), when they fail.
#![cfg(target_arch = "wasm32")]

#[path = "../../logsieve/tests/common/mod.rs"]
mod common;

use common::{build, generated, Flags, CASES};
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gpu::{unsupported_reason, GpuContext, GpuCorpus, GpuKernel, UploadOptions};
use logsieve::{Corpus, Document, Query, Syntax, Want};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn ctx() -> Option<GpuContext> {
    match GpuContext::new_async().await {
        Ok(c) => {
            let i = c.info();
            console_log!(
                "WebGPU kernel tests run on: {:?} ({}, {}), max binding {} bytes",
                i.name,
                i.device_type,
                i.backend,
                i.max_storage_buffer_binding_size
            );
            Some(c)
        }
        Err(e) => {
            if option_env!("LOGSIEVE_REQUIRE_GPU") == Some("1") {
                panic!("LOGSIEVE_REQUIRE_GPU=1 but this browser has no WebGPU adapter: {e}");
            }
            console_log!(
                "\n!!!!!!!! NO WEBGPU ADAPTER: browser GPU kernel tests SKIPPED ({e}) !!!!!!!!\n\
                 !!!!!!!! build with LOGSIEVE_REQUIRE_GPU=1 to make this a failure    !!!!!!!!\n"
            );
            None
        }
    }
}

/// Uploads `corpus` (segments of at most `max_segment` bytes) and checks
/// each of `kernels`, for counts and for line ids, against the CPU engine.
/// Returns the number of comparisons.
async fn check(
    ctx: &GpuContext,
    corpus: &Corpus,
    q: &Query,
    kernels: &[GpuKernel],
    max_segment: Option<u64>,
    what: &str,
) -> usize {
    let opts = UploadOptions {
        max_segment,
        ..Default::default()
    };
    let mut calls = 0u32;
    let g = GpuCorpus::upload_async(ctx, corpus, opts, &mut |_, _| calls += 1)
        .await
        .unwrap_or_else(|e| panic!("{what}: upload: {e}"));
    if corpus.total_bytes() > 0 {
        assert!(calls > 0, "{what}: the upload reported no progress");
    }
    let cpu = CpuOptions {
        threads: 1,
        want: Want::Lines,
        max_count: None,
        line_ids: true,
    };
    let want: Vec<_> = corpus
        .docs()
        .iter()
        .map(|d| search_doc(d, q, &cpu))
        .collect();
    let mut n = 0;
    for &k in kernels {
        for w in [Want::Count, Want::Lines] {
            let r = g
                .search_async(corpus, q, k, w, None)
                .await
                .unwrap_or_else(|e| panic!("{what}: {k} {w:?}: {e}"));
            for (di, (got, exp)) in r.docs.iter().zip(&want).enumerate() {
                assert_eq!(got.count, exp.count, "{what}: {k} {w:?} doc {di}: count");
                if w == Want::Lines {
                    assert_eq!(got.lines, exp.lines, "{what}: {k} doc {di}: line ids");
                }
                n += 1;
            }
        }
    }
    n
}

#[wasm_bindgen_test]
async fn case_table_every_kernel() {
    let Some(c) = ctx().await else { return };
    let (mut cases, mut compared) = (0, 0);
    for case in CASES {
        let Ok(q) = build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        // The five single-literal kernels; the multi-pattern kernels
        // (many literals) are exercised through their own entry points.
        if unsupported_reason(&q).is_some() || q.literals().is_none_or(|l| l.len() != 1) {
            continue;
        }
        let corpus = Corpus::from_bytes(case.name, case.corpus.to_vec());
        // The table's hand-written answer, through the CPU engine the GPU
        // is compared with.
        let cpu = search_doc(&corpus.docs()[0], &q, &CpuOptions::default());
        assert_eq!(cpu.lines, case.expected, "{}: CPU vs the table", case.name);
        compared += check(&c, &corpus, &q, &GpuKernel::ALL, None, case.name).await;
        cases += 1;
    }
    console_log!("case table: {cases} GPU-capable cases, {compared} comparisons");
    assert!(cases >= 15, "only {cases} GPU-capable cases ran");
}

#[wasm_bindgen_test]
async fn generated_logs_in_many_segments() {
    let Some(c) = ctx().await else { return };
    let data = generated(1500, 11);
    let mut corpus = Corpus::new();
    corpus.push(Document::from_bytes("a.log", data.clone()));
    // A second document without a final newline, and CRLF lines.
    let mut crlf: Vec<u8> = data[..20_000]
        .iter()
        .flat_map(|&b| {
            if b == b'\n' {
                vec![b'\r', b'\n']
            } else {
                vec![b]
            }
        })
        .collect();
    crlf.extend_from_slice(b"last ERROR_503 line without newline");
    corpus.push(Document::from_bytes("b.log", crlf));
    for (pat, flags) in [
        ("ERROR_503", ""),
        ("error", "i"),
        ("x", ""),
        ("192.168.1", ""),
        ("NullPointerException", "v"),
        (
            "0123456789012345678901234567890123456789012345678901234567890123",
            "",
        ),
    ] {
        let q = build(
            &[pat.as_bytes().to_vec()],
            Syntax::Fixed,
            Flags::parse(flags),
        )
        .unwrap();
        for seg in [None, Some(8192)] {
            check(
                &c,
                &corpus,
                &q,
                &GpuKernel::ALL,
                seg,
                &format!("{pat:?} -{flags} segments {seg:?}"),
            )
            .await;
        }
    }
}

#[wasm_bindgen_test]
async fn a_lost_device_is_an_error_never_a_wrong_answer() {
    let Some(c) = ctx().await else { return };
    let corpus = Corpus::from_bytes("a.log", generated(500, 3));
    let q = build(&[b"ERROR_503".to_vec()], Syntax::Fixed, Flags::default()).unwrap();
    let g = GpuCorpus::upload_async(&c, &corpus, UploadOptions::default(), &mut |_, _| {})
        .await
        .unwrap();
    c.destroy_device();
    let r = g
        .search_async(&corpus, &q, GpuKernel::Scan, Want::Lines, None)
        .await;
    assert!(
        r.is_err(),
        "a search on a destroyed device returned {:?}",
        r.map(|r| r.docs)
    );
}

/// `--fuzzy K` on the `bitap` kernel in the browser (32-bit words, no
/// subgroups, its pipelines built without blocking), against the CPU
/// engine: the table's fuzzy cases on small segments.
#[wasm_bindgen_test]
async fn fuzzy_cases_on_bitap() {
    let Some(c) = ctx().await else { return };
    let mut ran = 0;
    for case in CASES
        .iter()
        .filter(|c| matches!(c.syntax, Syntax::Fuzzy(_)))
    {
        let Ok(q) = build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        if logsieve::support::bitap_support(&q).is_err() {
            continue;
        }
        let corpus = Corpus::from_bytes(case.name, case.corpus.to_vec());
        let opts = UploadOptions {
            max_segment: Some(64),
            ..Default::default()
        };
        let g = GpuCorpus::upload_async(&c, &corpus, opts, &mut |_, _| {})
            .await
            .unwrap_or_else(|e| panic!("{}: upload: {e}", case.name));
        let cpu = search_doc(
            &corpus.docs()[0],
            &q,
            &CpuOptions {
                threads: 1,
                want: Want::Lines,
                max_count: None,
                line_ids: true,
            },
        );
        let r = g
            .search_async(&corpus, &q, GpuKernel::Bitap, Want::Lines, None)
            .await
            .unwrap_or_else(|e| panic!("{}: bitap: {e}", case.name));
        assert_eq!(r.docs[0].count, cpu.count, "{}: count", case.name);
        assert_eq!(r.docs[0].lines, cpu.lines, "{}: line ids", case.name);
        ran += 1;
    }
    console_log!("fuzzy cases on bitap: {ran}");
    assert!(ran >= 10, "only {ran} fuzzy cases ran on bitap");
}

/// Regex on the `shift-and` kernel in the browser (its pipelines built
/// without blocking, 32-bit words): the table's regex cases the automaton
/// takes, on small segments, then regexes of the bench's suite over
/// generated logs with non-ASCII bytes (undecided lines, decided by the
/// CPU) and CRLF — the kernel's linear path with one and two words, the
/// look-around groups, the follow tables, four words — against the CPU
/// engine.
#[wasm_bindgen_test]
async fn regexes_on_shift_and() {
    let Some(c) = ctx().await else { return };
    let mut ran = 0;
    for case in CASES.iter().filter(|c| matches!(c.syntax, Syntax::Regex)) {
        let Ok(q) = build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        if logsieve::support::shift_and_support(&q).is_err() {
            continue;
        }
        let corpus = Corpus::from_bytes(case.name, case.corpus.to_vec());
        check(&c, &corpus, &q, &[GpuKernel::ShiftAnd], Some(64), case.name).await;
        ran += 1;
    }
    console_log!("regex cases on shift-and: {ran}");
    assert!(ran >= 10, "only {ran} regex cases ran on shift-and");
    let mut data = generated(1500, 5);
    data.extend_from_slice("ERROR_5é1 latency_ms=12é34 u12345\r\nERROR_501 é\r\n".as_bytes());
    let corpus = Corpus::from_bytes("gen.log", data);
    for p in [
        r"ERROR_5\d\d",
        r"latency_ms=\d{4,}",
        r"trace=[0-9a-f]{32}",
        r"\bu\d{5}\b",
        r"web-\d\d (ERROR|WARN)",
        r"req=[0-9a-f]{16} trace=[0-9a-f]{32} user=u\d+ client=10\.\d+\.\d+\.\d+",
        r"bytes=\d{6,}$",
    ] {
        let q = build(&[p.as_bytes().to_vec()], Syntax::Regex, Flags::default()).unwrap();
        logsieve::support::shift_and_support(&q).unwrap_or_else(|e| panic!("{p}: {e}"));
        let n = search_doc(&corpus.docs()[0], &q, &CpuOptions::default()).count;
        assert!(n > 0, "{p}: the corpus holds matches");
        for seg in [None, Some(8192)] {
            let what = format!("{p} segments {seg:?}");
            check(&c, &corpus, &q, &[GpuKernel::ShiftAnd], seg, &what).await;
        }
    }
}

/// The probe after an upload times the adapter's `scan` and the CPU
/// engine on the adapter the page has, over the whole corpus when it is
/// under the CPU sample's 8 MiB; the engine routes by them from then on.
#[wasm_bindgen_test]
async fn the_probe_times_the_adapter_and_the_cpu() {
    let Some(c) = ctx().await else { return };
    let corpus = std::rc::Rc::new(Corpus::from_bytes("a.log", generated(3000, 5)));
    let g = GpuCorpus::upload_async(&c, &corpus, UploadOptions::default(), &mut |_, _| {})
        .await
        .unwrap();
    let m = logsieve_web::probe::probe(std::rc::Rc::new(g), corpus.clone())
        .await
        .unwrap();
    assert_eq!(m.len(), 2);
    assert!(matches!(
        m[0].backend,
        logsieve::planner::MeasuredBackend::Cpu { threads: 1 }
    ));
    assert!(matches!(
        m[1].backend,
        logsieve::planner::MeasuredBackend::Gpu {
            kernel: GpuKernel::Scan
        }
    ));
    for x in &m {
        assert_eq!(x.bytes, corpus.total_bytes());
        assert!(x.seconds.is_finite() && x.seconds >= 0.0, "{x:?}");
    }
    console_log!("probe: {m:?}");
}
