// brute-line: the naive baseline. One thread per line scans its line with a
// byte-by-byte compare at every position.

@compute @workgroup_size(256)
fn brute_line(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let line = group_id(wid, nwg) * WG + lid;
    if line >= seg.n_lines {
        return;
    }
    let s = starts[line];
    // The line's end (its terminator excluded); a match must fit before it.
    let e = starts[line + 1u] - 1u;
    let m = params.pat_len;
    if e < s + m {
        return;
    }
    for (var p = s; p + m <= e; p++) {
        if matches_at(p) {
            set_result(line);
            return;
        }
    }
}
