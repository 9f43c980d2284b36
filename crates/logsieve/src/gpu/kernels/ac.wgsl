// ac: failure-free Aho-Corasick (PFAC): one walk per start byte through a
// dense goto table over byte classes. Bytes map to classes (256 words from
// mp.c, held in workgroup memory; class 0 = a byte in no pattern); the
// table (from mp.a) has mp.b classes per state, state 0 is dead and 1 the
// root; the group + 1 that ends at each state is at mp.d + state.

var<workgroup> wclass: array<u32, 256>;

@compute @workgroup_size(256)
fn ac(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    wclass[lid] = tables[mp.c + lid];
    workgroupBarrier();
    let p = group_id(wid, nwg) * WG + lid;
    if p >= seg.n_bytes {
        return;
    }
    var cls = wclass[mfold(byte_at(p))];
    var s = 1u;
    var q = p;
    loop {
        if cls == 0u {
            return;
        }
        // Prefetch the next byte's class before the table lookup.
        let next = wclass[mfold(byte_at(q + 1u))];
        s = tables[mp.a + s * mp.b + cls];
        if s == 0u {
            return;
        }
        let g = tables[mp.d + s];
        if g != 0u {
            on_match(p, g - 1u);
            if mp.per_pattern == 0u {
                return;
            }
        }
        cls = next;
        q += 1u;
    }
}
