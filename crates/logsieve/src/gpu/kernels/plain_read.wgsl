// plain-read: the bandwidth ceiling. Each thread loads one vec4<u32> of the
// resident corpus, exactly as scan does, and folds it into one word that is
// compared with a magic value so the load cannot be optimised away.

@compute @workgroup_size(256)
fn plain_read(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let c = group_id(wid, nwg) * WG + lid;
    if c * 16u >= seg.n_bytes {
        return;
    }
    let v = data[c];
    if (v.x ^ v.y ^ v.z ^ v.w) == params.magic {
        atomicAdd(&counters[3], 1u);
    }
}
