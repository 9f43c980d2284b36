// Population counts of the per-line bit sets, so a count query reads back
// 16 bytes instead of the bit set. One thread per word; a workgroup sums in
// workgroup memory and adds once to the global counter.

var<workgroup> wsum: atomic<u32>;

// which: 0 result, 1 candidates, 2 result and zero it (for a count-only
// scan: the next query then needs no clear).
fn count_bits(which: u32, wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {
    if lid == 0u {
        atomicStore(&wsum, 0u);
    }
    workgroupBarrier();
    let i = group_id(wid, nwg) * WG + lid;
    if i < seg.n_words {
        var c = 0u;
        if which == 0u {
            c = countOneBits(atomicLoad(&result[i]));
        } else if which == 2u {
            c = countOneBits(atomicExchange(&result[i], 0u));
        } else {
            c = countOneBits(atomicLoad(&cand[i]));
        }
        if c != 0u {
            atomicAdd(&wsum, c);
        }
    }
    workgroupBarrier();
    if lid == 0u {
        let s = atomicLoad(&wsum);
        if s != 0u {
            atomicAdd(&counters[which & 1u], s);
        }
    }
}

@compute @workgroup_size(256)
fn count_result(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    count_bits(0u, wid, nwg, lid);
}

@compute @workgroup_size(256)
fn count_cand(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    count_bits(1u, wid, nwg, lid);
}

@compute @workgroup_size(256)
fn count_result_zero(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    count_bits(2u, wid, nwg, lid);
}
