// The columnar pipeline's one kernel: per line, (search bit XOR invert) AND
// time window, then count it: the total, its count-by key, its histogram
// bucket. Counting goes to workgroup memory first (`count_wg`, when all the
// counters fit) and is added to the global counters once per workgroup;
// `count_global` adds straight to global memory for large key spaces.
//
// Browser-portable: no 64-bit integers. A time is two u32 words (hi, lo) of
// its offset in ms from the corpus's oldest entry, compared
// lexicographically; (0xffffffff, 0xffffffff) is "no time".

struct Q {
    // F_* bits below.
    flags: u32,
    // Codes per line in `codes` (the number of fields of the columns).
    nfields: u32,
    // Flat keys of the count-by (0 without count-by).
    nkeys: u32,
    // Histogram buckets (0 without a histogram).
    nbuckets: u32,
    since: vec2<u32>,
    until: vec2<u32>,
    // Count-by fields (up to 4): field index and stride of each.
    nby: u32,
    // Counters used: 1 + nkeys + nbuckets.
    slots: u32,
    _pad0: u32,
    _pad1: u32,
    by: vec4<u32>,
    stride: vec4<u32>,
}

struct S {
    // Lines of this segment.
    n_lines: u32,
    // Threads of the dispatch (the grid-stride step).
    nthreads: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> q: Q;
@group(0) @binding(1) var<uniform> s: S;
// The search kernel's matching-line bits (before -v).
@group(0) @binding(2) var<storage, read> bits: array<u32>;
@group(0) @binding(3) var<storage, read> times: array<vec2<u32>>;
// nfields codes per line.
@group(0) @binding(4) var<storage, read> codes: array<u32>;
// Histogram bucket edges (nbuckets + 1), relative like `times`.
@group(0) @binding(5) var<storage, read> edges: array<vec2<u32>>;
// [0] selected lines, [1 .. 1 + nkeys) count-by keys, then the buckets.
@group(0) @binding(6) var<storage, read_write> counts: array<atomic<u32>>;

const F_BITS: u32 = 1u;
const F_INVERT: u32 = 2u;
const F_SINCE: u32 = 4u;
const F_UNTIL: u32 = 8u;
const F_HIST: u32 = 16u;
const F_KEYS: u32 = 32u;
const NONE: u32 = 0xffffffffu;

const WG: u32 = 256u;
// 8 KiB of counters: within WebGPU's 16 KiB workgroup-storage minimum.
const WG_SLOTS: u32 = 2048u;

var<workgroup> wcount: array<atomic<u32>, 2048>;

fn lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x < b.x || (a.x == b.x && a.y < b.y);
}

fn selected(i: u32) -> bool {
    if (q.flags & F_BITS) != 0u {
        let hit = ((bits[i >> 5u] >> (i & 31u)) & 1u) != 0u;
        if hit == ((q.flags & F_INVERT) != 0u) {
            return false;
        }
    }
    if (q.flags & (F_SINCE | F_UNTIL)) != 0u {
        let t = times[i];
        if t.x == NONE && t.y == NONE {
            return false;
        }
        if (q.flags & F_SINCE) != 0u && lt(t, q.since) {
            return false;
        }
        if (q.flags & F_UNTIL) != 0u && !lt(t, q.until) {
            return false;
        }
    }
    return true;
}

// The counter of line i's count-by key, or NONE.
fn key_slot(i: u32) -> u32 {
    if (q.flags & F_KEYS) == 0u {
        return NONE;
    }
    var k = 0u;
    let base = i * q.nfields;
    for (var f = 0u; f < q.nby; f++) {
        k += codes[base + q.by[f]] * q.stride[f];
    }
    return 1u + k;
}

// The counter of line i's histogram bucket, or NONE: the largest k with
// edges[k] <= t, when edges[0] <= t < edges[nbuckets].
fn bucket_slot(i: u32) -> u32 {
    if (q.flags & F_HIST) == 0u || q.nbuckets == 0u {
        return NONE;
    }
    let t = times[i];
    if (t.x == NONE && t.y == NONE) || lt(t, edges[0]) || !lt(t, edges[q.nbuckets]) {
        return NONE;
    }
    var lo = 0u;
    var hi = q.nbuckets - 1u;
    while lo < hi {
        let mid = (lo + hi + 1u) >> 1u;
        if lt(t, edges[mid]) {
            hi = mid - 1u;
        } else {
            lo = mid;
        }
    }
    return 1u + q.nkeys + lo;
}

@compute @workgroup_size(256)
fn count_wg(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    for (var k = lid; k < q.slots; k += WG) {
        atomicStore(&wcount[k], 0u);
    }
    workgroupBarrier();
    var mine = 0u;
    for (var i = gid.x; i < s.n_lines; i += s.nthreads) {
        if !selected(i) {
            continue;
        }
        mine += 1u;
        let ks = key_slot(i);
        if ks != NONE {
            atomicAdd(&wcount[ks], 1u);
        }
        let bs = bucket_slot(i);
        if bs != NONE {
            atomicAdd(&wcount[bs], 1u);
        }
    }
    if mine != 0u {
        atomicAdd(&wcount[0], mine);
    }
    workgroupBarrier();
    for (var k = lid; k < q.slots; k += WG) {
        let c = atomicLoad(&wcount[k]);
        if c != 0u {
            atomicAdd(&counts[k], c);
        }
    }
}

@compute @workgroup_size(256)
fn count_global(@builtin(global_invocation_id) gid: vec3<u32>) {
    var mine = 0u;
    for (var i = gid.x; i < s.n_lines; i += s.nthreads) {
        if !selected(i) {
            continue;
        }
        mine += 1u;
        let ks = key_slot(i);
        if ks != NONE {
            atomicAdd(&counts[ks], 1u);
        }
        let bs = bucket_slot(i);
        if bs != NONE {
            atomicAdd(&counts[bs], 1u);
        }
    }
    if mine != 0u {
        atomicAdd(&counts[0], mine);
    }
}
