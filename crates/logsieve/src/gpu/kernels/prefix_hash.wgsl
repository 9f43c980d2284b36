// prefix-hash: at every position, the first k bytes (k = the shortest
// pattern, at most 4; mp.e) are hashed (multiply-shift to mp.d bits) into
// buckets (mp.c: 2^mp.d + 1 prefix sums into the entries at mp.a, two
// words each: the prefix key and the group); an empty bucket ends the
// position, else every entry with the same key is verified byte by byte.

@compute @workgroup_size(256)
fn prefix_hash(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = group_id(wid, nwg) * WG + lid;
    if p >= seg.n_bytes {
        return;
    }
    let k = mp.e;
    var key = 0u;
    for (var i = 0u; i < k; i++) {
        key |= mfold(byte_at(p + i)) << (8u * i);
    }
    let h = (key * 0x9E3779B1u) >> (32u - mp.d);
    let lo = tables[mp.c + h];
    let hi = tables[mp.c + h + 1u];
    for (var e = lo; e < hi; e++) {
        if tables[mp.a + 2u * e] != key {
            continue;
        }
        let g = tables[mp.a + 2u * e + 1u];
        let off = tables[mp.pat_off + 2u * g];
        let m = tables[mp.pat_off + 2u * g + 1u];
        var ok = true;
        for (var i = k; i < m; i++) {
            if mfold(byte_at(p + i)) != pat_byte(off, i) {
                ok = false;
                break;
            }
        }
        if ok {
            on_match(p, g);
            if mp.per_pattern == 0u {
                return;
            }
        }
    }
}
