// scan_sg: scan with the line of a match counted instead of searched, where
// the adapter has subgroups. The lanes of a subgroup hold consecutive
// 16-byte chunks; a prefix sum of their newline counts over the subgroup,
// added to the block hint of the subgroup's first chunk (a 256-byte
// boundary), gives each chunk the line its first byte is in, and the
// newline bits below a match in its own chunk give the match's line: no
// dependent loads of line starts. Lanes are only summed when one of them
// has a candidate, and a subgroup whose lanes are not consecutive chunks
// starting at a 256-byte boundary (another lane order, or subgroups smaller
// than 16) searches the line starts as `scan` does.

@compute @workgroup_size(SWG)
fn scan_sg(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sid: u32) {
    let c0 = group_id(wid, nwg) * (SWG * VPT) + lid;
    let c1 = c0 + SWG;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    if c0 == 0u {
        atomicStore(&counters[0], 0u);
    }
    // No early return: every lane takes part in the subgroup operations.
    var v0 = vec4<u32>(NL4);
    var v1 = vec4<u32>(NL4);
    if c0 < n_vec {
        v0 = data[c0];
    }
    if c1 < n_vec {
        v1 = data[c1];
    }
    var m0 = vec4<u32>(0u);
    var m1 = vec4<u32>(0u);
    if c0 < n_vec {
        m0 = cand16(v0, c0 * 16u);
    }
    if c1 < n_vec {
        m1 = cand16(v1, c1 * 16u);
    }
    let mine = any((m0 | m1) != vec4<u32>(0u));
    if !subgroupAny(mine) {
        return;
    }
    let nl0 = eq_mask(v0, NL4, 0u);
    let nl1 = eq_mask(v1, NL4, 0u);
    let n0 = countOneBits(nl0.x) + countOneBits(nl0.y) + countOneBits(nl0.z) + countOneBits(nl0.w);
    let n1 = countOneBits(nl1.x) + countOneBits(nl1.y) + countOneBits(nl1.z) + countOneBits(nl1.w);
    // Both halves at once: at most 16 * 32 newlines each below this lane.
    let before = subgroupExclusiveAdd(n0 | (n1 << 16u));
    let first = subgroupBroadcastFirst(c0);
    let ordered = subgroupAll(c0 == first + sid) && (first & 15u) == 0u;
    if !mine {
        return;
    }
    var l0 = NO_LINE;
    var l1 = NO_LINE;
    if ordered {
        // blk[k] is the line holding byte k * 256; first * 16 is one.
        l0 = blk[first >> 4u] + (before & 0xFFFFu);
        l1 = blk[(first + SWG) >> 4u] + (before >> 16u);
    }
    verify16(m0, c0 * 16u, nl0, l0);
    verify16(m1, c1 * 16u, nl1, l1);
}
