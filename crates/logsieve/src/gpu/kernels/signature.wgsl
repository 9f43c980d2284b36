// signature: a per-line 128-bit presence mask of `byte & 127`, built once at
// upload, so the query's phase 1 reads 16 bytes per line instead of the
// line. Phase 2 is the two-phase kernel's.

var<workgroup> wsig: array<atomic<u32>, 4>;

// Built at upload: one workgroup of 64 threads per line.
@compute @workgroup_size(64)
fn build(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let line = group_id(wid, nwg);
    var s = 0u;
    var e = 0u;
    if line < seg.n_lines {
        s = starts[line];
        e = starts[line + 1u] - 1u;
    }
    if lid < 4u {
        atomicStore(&wsig[lid], 0u);
    }
    workgroupBarrier();
    for (var p = s + lid; p < e; p += 64u) {
        let b = byte_at(p) & 127u;
        atomicOr(&wsig[b >> 5u], 1u << (b & 31u));
    }
    workgroupBarrier();
    if lid == 0u && line < seg.n_lines {
        sigs[line] = vec4<u32>(atomicLoad(&wsig[0]), atomicLoad(&wsig[1]), atomicLoad(&wsig[2]), atomicLoad(&wsig[3]));
    }
}

// Query phase 1: one thread per line. The mask keeps raw bytes; under -i an
// upper-case letter's bit (word 2, bits 1..26) also counts for its
// lower-case one (word 3, same bits), and the query asks for lower case.
@compute @workgroup_size(256)
fn phase1(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let line = group_id(wid, nwg) * WG + lid;
    if line >= seg.n_lines {
        return;
    }
    if starts[line + 1u] - 1u - starts[line] < params.pat_len {
        return;
    }
    var s = sigs[line];
    if params.fold != 0u {
        s.w |= s.z & 0x07FFFFFEu;
    }
    if all((s & params.sig) == params.sig) {
        set_cand(line);
    }
}
