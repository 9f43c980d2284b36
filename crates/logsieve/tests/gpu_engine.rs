//! The session with a GPU attached: `--backend gpu` runs there or says why
//! not; `--backend auto` never picks a software adapter.

use logsieve::gpu::{GpuContext, GpuKernel, UploadOptions};
use logsieve::{BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax, Want};

fn ctx() -> Option<GpuContext> {
    logsieve::gpu::or_skip("GPU session tests", GpuContext::shared())
}

fn session(ctx: &GpuContext) -> Session {
    let mut data = Vec::new();
    for i in 0..500 {
        data.extend_from_slice(
            format!("line {i} {}\n", if i % 7 == 0 { "ERROR_503" } else { "ok" }).as_bytes(),
        );
    }
    let mut e = Session::new(Corpus::from_bytes("t", data));
    e.attach_gpu_with(
        ctx,
        UploadOptions {
            max_segment: Some(1000),
            ..Default::default()
        },
    )
    .unwrap();
    e
}

#[test]
fn forced_gpu_runs_every_kernel_and_names_it() {
    let Some(ctx) = ctx() else { return };
    let e = session(&ctx);
    assert!(e.gpu().unwrap().segment_count() > 1);
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR_503"])
        .unwrap();
    let cpu = e
        .search(
            &q,
            &SearchOptions {
                backend: BackendChoice::Cpu,
                ..Default::default()
            },
        )
        .unwrap();
    for k in [None, Some(GpuKernel::BruteLine), Some(GpuKernel::Signature)] {
        let opts = SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: k,
            ..Default::default()
        };
        let r = e.search(&q, &opts).unwrap();
        assert_eq!(r.docs, cpu.docs);
        let name = k.unwrap_or(GpuKernel::Scan).name();
        assert_eq!(r.backend.name, format!("gpu/{name}"));
    }
    let count = SearchOptions {
        backend: BackendChoice::Gpu,
        want: Want::Count,
        ..Default::default()
    };
    assert_eq!(e.search(&q, &count).unwrap().total(), cpu.total());
}

#[test]
fn forced_gpu_refuses_unsupported_queries_with_the_reason() {
    let Some(ctx) = ctx() else { return };
    let e = session(&ctx);
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    // -w without a required literal (nor a class string: `o\d*\d`) runs
    // tier 2 (the regex automaton); an automaton too large for it is
    // refused with every tier's reason.
    let q = QueryBuilder::new().word(true).build(&[r"o\d*\d"]).unwrap();
    assert_eq!(e.search(&q, &opts).unwrap().backend.name, "gpu/shift-and");
    let big = QueryBuilder::new()
        .word(true)
        .build(&[r"o\d{300}"])
        .unwrap();
    let err = e.search(&big, &opts).unwrap_err().to_string();
    assert!(
        err.contains("regex") && err.contains("positions") && err.contains("GPU prefilter"),
        "{err}"
    );
}

#[test]
fn auto_never_picks_a_software_adapter() {
    let Some(ctx) = ctx() else { return };
    if !ctx.info().is_software {
        eprintln!("hardware adapter: nothing to check here");
        return;
    }
    let e = session(&ctx);
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR_503"])
        .unwrap();
    let r = e.search(&q, &SearchOptions::default()).unwrap();
    assert!(r.backend.name.starts_with("cpu/"), "{}", r.backend);
    assert_eq!(r.total(), 72);
}
