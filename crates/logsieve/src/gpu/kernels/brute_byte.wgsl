// brute-byte: one thread per byte. First-byte check, full compare, then the
// line bit and an atomic append of the match position. The append buffer is
// bounded: the counter keeps counting past its end, so the host detects an
// overflow and re-runs with an exact allocation (or a narrower window).

@compute @workgroup_size(256)
fn brute_byte(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = group_id(wid, nwg) * WG + lid;
    if p >= seg.n_bytes || p < params.win_lo || p >= params.win_hi {
        return;
    }
    if fold(byte_at(p)) != pat_at(0u) {
        return;
    }
    if !matches_at(p) {
        return;
    }
    set_result(line_of(p));
    let idx = atomicAdd(&counters[2], 1u);
    if idx < arrayLength(&positions) {
        positions[idx] = p;
    }
}
