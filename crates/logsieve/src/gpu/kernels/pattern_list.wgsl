// The per-pattern counters, listed: one thread per group (distinct
// pattern) appends `(group, lines, occurrences)` of every group that hit
// to `plist`, so that the host reads back what hit rather than every
// counter (100k patterns: 500,000 counter words, 2 MB, of which a tenth
// hit in the watchlist bench). Run after the many-literal kernel, in its
// compute pass; the list has room for every group, and the host reads
// back its count and as many entries as it expects (the full counters
// when more were listed). Appended to common.wgsl + bytes_u32.wgsl for
// `WG` and `group_id` only; none of their bindings is used.

struct LParams {
    // Distinct patterns (groups).
    n_groups: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// The many-literal kernels' counters (multi_common.wgsl's `pcounts`): per
// group lines (lo, hi), occurrences (lo, hi); then one overlap flag per
// group at 4 * n_groups + g.
@group(0) @binding(11) var<storage, read> pcounts_in: array<u32>;
@group(0) @binding(13) var<storage, read_write> plist: array<atomic<u32>>;
@group(0) @binding(14) var<uniform> lp: LParams;

// Words before the first entry ([0]: entries listed), and per entry: the
// group (bit 31: its overlap flag), lines lo, hi, occurrences lo, hi.
const LIST_HEAD: u32 = 4u;
const LIST_ENTRY: u32 = 5u;

var<workgroup> wlisted: atomic<u32>;
var<workgroup> wbase: u32;

// One global atomic per workgroup, as `compact` in shift_and.wgsl.
@compute @workgroup_size(256)
fn list_patterns(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&wlisted, 0u);
    }
    workgroupBarrier();
    let g = group_id(wid, nwg) * WG + lid;
    var c = vec4<u32>(0u);
    var flag = 0u;
    if g < lp.n_groups {
        c = vec4<u32>(pcounts_in[4u * g], pcounts_in[4u * g + 1u], pcounts_in[4u * g + 2u], pcounts_in[4u * g + 3u]);
        flag = pcounts_in[4u * lp.n_groups + g];
    }
    let hit = (c.x | c.y | c.z | c.w | flag) != 0u;
    var at = 0u;
    if hit {
        at = atomicAdd(&wlisted, 1u);
    }
    workgroupBarrier();
    if lid == 0u {
        let total = atomicLoad(&wlisted);
        var base = 0u;
        if total != 0u {
            base = atomicAdd(&plist[0], total);
        }
        wbase = base;
    }
    let base = workgroupUniformLoad(&wbase);
    if hit {
        let o = LIST_HEAD + LIST_ENTRY * (base + at);
        atomicStore(&plist[o], g | select(0u, 0x80000000u, flag != 0u));
        atomicStore(&plist[o + 1u], c.x);
        atomicStore(&plist[o + 2u], c.y);
        atomicStore(&plist[o + 3u], c.z);
        atomicStore(&plist[o + 4u], c.w);
    }
}
