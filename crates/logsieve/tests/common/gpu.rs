//! The GPU test functions the tier tests share (`gpu_prefilter`,
//! `gpu_shift_and`, `gpu_bitap`): one context per test binary or a loud
//! skip, a session over bytes in small segments, and the forced-search
//! check against the oracle.

use std::sync::OnceLock;

use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::{
    BackendChoice, Corpus, Error, Kernel, Query, SearchOptions, SearchResult, Session, Want,
};

/// The GPU context of this test binary, or `None` with a loud message
/// (`what` names the skipped tests); a panic when `LOGSIEVE_REQUIRE_GPU=1`
/// (CI) and there is no adapter.
pub fn ctx(what: &str) -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| logsieve::gpu::or_skip(&format!("{what} tests"), GpuContext::new()))
        .as_ref()
}

/// Another context of this test binary, made once in `cell` with
/// `tuning` (on the adapter of [`ctx`]); `None` where [`ctx`] is.
fn ctx_with(
    what: &str,
    cell: &'static OnceLock<Option<GpuContext>>,
    tuning: logsieve::gpu::GpuTuning,
) -> Option<&'static GpuContext> {
    ctx(what)?;
    cell.get_or_init(|| {
        Some(GpuContext::new_with(&tuning).expect("another context on the adapter of the first"))
    })
    .as_ref()
}

/// A context that never runs a regex as a class string
/// (`GpuTuning::no_class_scan`): tier 1 then scans literals and the
/// automaton verifies, the path the tests of that verifier drive.
pub fn ctx_without_class_scan(what: &str) -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    let tuning = logsieve::gpu::GpuTuning {
        no_class_scan: true,
        ..Default::default()
    };
    ctx_with(what, &CTX, tuning)
}

/// A context that runs every class string as such, whatever the
/// estimates (`GpuTuning::force_class_scan`): the class kernel's tests
/// drive it on any corpus.
pub fn ctx_forcing_class_scan(what: &str) -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    let tuning = logsieve::gpu::GpuTuning {
        force_class_scan: true,
        ..Default::default()
    };
    ctx_with(what, &CTX, tuning)
}

/// A session over `data` on the GPU in segments of at most `seg` bytes.
pub fn session(c: &GpuContext, data: &[u8], seg: u64) -> Session {
    let mut s = Session::new(Corpus::from_bytes("t", data.to_vec()));
    s.attach_gpu_with(
        c,
        UploadOptions {
            max_segment: Some(seg),
            ..Default::default()
        },
    )
    .expect("upload");
    s
}

/// Runs `q` forced on the GPU (`kernel` asked for, or the default) for
/// lines, a count, `-m 1` lines and a `-m 2` count, each checked against
/// `oracle` (the matching line ids). Returns the results, or the first
/// refusal's error (`what` names the case in failures).
pub fn check_forced(
    s: &Session,
    q: &Query,
    kernel: Option<Kernel>,
    oracle: &[u64],
    what: &str,
) -> Result<Vec<SearchResult>, Error> {
    let mut out = Vec::new();
    for (want, max_count) in [
        (Want::Lines, None),
        (Want::Count, None),
        (Want::Lines, Some(1)),
        (Want::Count, Some(2)),
    ] {
        let opts = SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: kernel,
            want,
            max_count,
            ..Default::default()
        };
        let w = format!("{what} {kernel:?} {want:?} -m {max_count:?}");
        let r = s.search(q, &opts)?;
        let expect: Vec<u64> = match max_count {
            Some(m) => oracle.iter().copied().take(m as usize).collect(),
            None => oracle.to_vec(),
        };
        assert_eq!(r.total(), expect.len() as u64, "{w}: count ({})", r.backend);
        if want == Want::Lines {
            assert_eq!(r.docs[0].lines, expect, "{w}: lines ({})", r.backend);
        }
        out.push(r);
    }
    Ok(out)
}
