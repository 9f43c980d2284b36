// two-phase: the design we started from, implemented as specified.
//
// Phase 1: one workgroup per line; 256 threads stride the line and build a
// 128-bin histogram of `byte & 127` in workgroup memory; one thread compares
// the bins with the counts the pattern needs and sets the line's candidate
// bit. A prefilter: false positives (bins aliased by `& 127`, bytes in the
// wrong order), never false negatives.
//
// Phase 2: one thread per byte position; the line is found by binary search
// of the offsets; positions of non-candidate lines stop there; the pattern
// is compared from workgroup memory and the line's result bit set.

var<workgroup> hist: array<atomic<u32>, 128>;
var<workgroup> wpat: array<u32, 64>;

fn need_at(b: u32) -> u32 {
    return (params.need[b >> 4u][(b >> 2u) & 3u] >> ((b & 3u) * 8u)) & 0xFFu;
}

@compute @workgroup_size(256)
fn phase1(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    // Every thread reaches every barrier: no early return before the last.
    let line = group_id(wid, nwg);
    var s = 0u;
    var e = 0u;
    if line < seg.n_lines {
        s = starts[line];
        e = starts[line + 1u] - 1u;
    }
    if lid < 128u {
        atomicStore(&hist[lid], 0u);
    }
    workgroupBarrier();
    for (var p = s + lid; p < e; p += WG) {
        atomicAdd(&hist[fold(byte_at(p)) & 127u], 1u);
    }
    workgroupBarrier();
    if lid == 0u && line < seg.n_lines {
        var ok = true;
        for (var b = 0u; b < 128u; b++) {
            if atomicLoad(&hist[b]) < need_at(b) {
                ok = false;
                break;
            }
        }
        if ok {
            set_cand(line);
        }
    }
}

// The line holding byte p, by binary search over all the offsets (the
// design as specified; scan uses a block hint instead).
fn line_of_full(p: u32) -> u32 {
    return search_line(p, 0u, seg.n_lines - 1u);
}

@compute @workgroup_size(256)
fn phase2(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid < 64u {
        wpat[lid] = pat_at(lid);
    }
    workgroupBarrier();
    let p = group_id(wid, nwg) * WG + lid;
    let m = params.pat_len;
    if p >= seg.n_bytes || p + m > seg.n_bytes {
        return;
    }
    let line = line_of_full(p);
    if (atomicLoad(&cand[line >> 5u]) & (1u << (line & 31u))) == 0u {
        return;
    }
    for (var i = 0u; i < m; i++) {
        if fold(byte_at(p + i)) != wpat[i] {
            return;
        }
    }
    set_result(line);
}
