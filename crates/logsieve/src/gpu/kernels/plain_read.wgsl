// plain-read: the bandwidth ceiling. The same loads as scan (VPT vec4<u32>
// per thread, issued before any is used, coalesced across the workgroup),
// folded into one word that is compared with a magic value so that the
// loads cannot be optimised away.

const VPT: u32 = 4u;

@compute @workgroup_size(256)
fn plain_read(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let first = group_id(wid, nwg) * (WG * VPT) + lid;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    var acc = vec4<u32>(0u);
    for (var j = 0u; j < VPT; j++) {
        let c = first + j * WG;
        if c < n_vec {
            acc ^= data[c];
        }
    }
    if (acc.x ^ acc.y ^ acc.z ^ acc.w) == params.magic {
        atomicAdd(&counters[3], 1u);
    }
}
