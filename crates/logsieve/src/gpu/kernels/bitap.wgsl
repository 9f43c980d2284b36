// bitap: `--fuzzy K` on the GPU, shift-and with K errors (Wu–Manber
// bitap; query/bitap.rs, whose `run_line` is this kernel on the host). One
// thread per line; the patterns are packed into a chain of W 32-bit words,
// S = each pattern's first bit, E its last. W (1, 2, 4 or 8) and K (0..=3)
// are pipeline constants, so the loops over words and levels unroll and
// the K + 1 state chains stay in registers. With shl(X) = ((X << 1) & ~S) | S over the chain, per byte c:
//   R'_0 = shl(R_0) & B[c]
//   R'_d = (shl(R_d) & B[c]) | R_{d-1} | shl(R_{d-1}) | shl(R'_{d-1})
// B (256 x W words) lives in workgroup memory. A line matches when
// R_K & E != 0. ASCII -i is in the masks; no line is undecided.

override W: u32 = 1u;
override K: u32 = 1u;
const MAXW: u32 = 8u;

struct BParams {
    // 1: some pattern is no longer than K, every line matches.
    all: u32,
    // Word offsets in `bt` of S and E (the masks are at 0).
    s_off: u32,
    e_off: u32,
    _pad: u32,
}

@group(0) @binding(10) var<storage, read> bt: array<u32>;
@group(0) @binding(12) var<uniform> bp: BParams;

var<workgroup> bmask: array<u32, 2048>;

@compute @workgroup_size(256)
fn bitap(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    for (var i = lid; i < 256u * W; i += 256u) {
        bmask[i] = bt[i];
    }
    workgroupBarrier();
    let line = group_id(wid, nwg) * WG + lid;
    if line >= seg.n_lines {
        return;
    }
    if bp.all != 0u {
        set_result(line);
        return;
    }
    let s = starts[line];
    let e = starts[line + 1u] - 1u;
    let k = min(K, 3u);
    var sb: array<u32, MAXW>;
    var eb: array<u32, MAXW>;
    for (var w = 0u; w < W; w++) {
        sb[w] = bt[bp.s_off + w];
        eb[w] = bt[bp.e_off + w];
    }
    // r[d * MAXW + w]: R_d; R_0 = 0, R_d = shl(R_{d-1}).
    var r: array<u32, 32>;
    for (var w = 0u; w < W; w++) {
        r[w] = 0u;
    }
    for (var d = 1u; d <= k; d++) {
        var carry = 0u;
        for (var w = 0u; w < W; w++) {
            let x = r[(d - 1u) * MAXW + w];
            r[d * MAXW + w] = (((x << 1u) | carry) & ~sb[w]) | sb[w];
            carry = x >> 31u;
        }
    }
    // Old R_{d-1} and new R'_{d-1}, per word.
    var po: array<u32, MAXW>;
    var pn: array<u32, MAXW>;
    for (var p = s; p < e; p++) {
        let c = byte_at(p);
        var hit = false;
        for (var d = 0u; d <= k; d++) {
            var c1 = 0u;
            var c2 = 0u;
            var c3 = 0u;
            for (var w = 0u; w < W; w++) {
                let old = r[d * MAXW + w];
                var nv = ((((old << 1u) | c1) & ~sb[w]) | sb[w]) & bmask[c * W + w];
                c1 = old >> 31u;
                if d > 0u {
                    let o = po[w];
                    let n = pn[w];
                    nv |= o | (((((o << 1u) | c2) | ((n << 1u) | c3)) & ~sb[w]) | sb[w]);
                    c2 = o >> 31u;
                    c3 = n >> 31u;
                }
                po[w] = old;
                pn[w] = nv;
                r[d * MAXW + w] = nv;
                if d == k && (nv & eb[w]) != 0u {
                    hit = true;
                }
            }
        }
        if hit {
            set_result(line);
            return;
        }
    }
}
