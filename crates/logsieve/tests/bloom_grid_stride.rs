//! The bloom kernel's grid-stride loop: with two workgroups per dispatch
//! (`GpuTuning::bloom_groups`, given when the context is created), every
//! thread walks the segment many times, and matches must not be missed or
//! doubled at the stride edges.

#![cfg(feature = "gpu")]

use logsieve::gpu::{GpuContext, GpuKernel, GpuTuning, MultiKernel, UploadOptions};
use logsieve::{BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax};

#[test]
fn bloom_grid_stride_covers_every_vec4_once() {
    let ctx = match logsieve::gpu::or_skip(
        "bloom_grid_stride tests",
        GpuContext::new_with(&GpuTuning {
            bloom_groups: Some(2),
            ..Default::default()
        }),
    ) {
        Some(c) => c,
        None => return,
    };
    // ~400 KB: 2 x 256 threads x 16 bytes = 8 KiB a stride, ~50 strides.
    let pats: Vec<Vec<u8>> = (0..500u32)
        .map(|i| format!("id-{:06x}", i.wrapping_mul(2_654_435_761) >> 8).into_bytes())
        .collect();
    let mut corpus = Vec::new();
    let mut want_count = 0u64;
    let mut want_lines = Vec::new();
    for line in 0..8000u32 {
        let pad = (line * 7) % 23;
        corpus.extend(std::iter::repeat_n(b'.', pad as usize));
        if line % 13 == 0 {
            let p = &pats[(line as usize * 31) % pats.len()];
            corpus.extend_from_slice(p);
            want_count += 1;
            want_lines.push(u64::from(line));
        } else {
            corpus.extend_from_slice(format!("id-{:06x}", line).as_bytes());
        }
        corpus.extend(std::iter::repeat_n(b' ', (line % 9) as usize));
        corpus.push(b'\n');
    }
    // The decoys ("id-" and six hex digits) may be patterns too: count
    // them with the CPU session instead of by construction.
    let mut session = Session::new(Corpus::from_bytes("t", corpus));
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&pats)
        .unwrap();
    let cpu = session
        .search(
            &q,
            &SearchOptions {
                backend: BackendChoice::Cpu,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(cpu.docs[0].count >= want_count);
    assert!(want_lines.iter().all(|l| cpu.docs[0].lines.contains(l)));
    for seg in [None, Some(100_000)] {
        session
            .attach_gpu_with(
                &ctx,
                UploadOptions {
                    max_segment: seg,
                    ..Default::default()
                },
            )
            .unwrap();
        let o = SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: Some(GpuKernel::from(MultiKernel::Bloom)),
            ..Default::default()
        };
        let r = session.search(&q, &o).unwrap();
        assert_eq!(r.backend.name, "gpu/bloom");
        assert_eq!(r.docs[0].lines, cpu.docs[0].lines, "seg {seg:?}");
        let c = session.count_per_pattern(&q, &o).unwrap();
        let cc = session
            .count_per_pattern(
                &q,
                &SearchOptions {
                    backend: BackendChoice::Cpu,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(c.lines, cc.lines, "seg {seg:?}");
        assert_eq!(c.occurrences, cc.occurrences, "seg {seg:?}");
    }
}
