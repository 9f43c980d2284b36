// scan: the fast exact kernel. Each thread owns two 16-byte vec4<u32>
// loads, a workgroup-width apart (coalesced), both issued before either is
// tested: the traffic of plain-read. A SWAR test finds the bytes equal to
// the pattern's rarest byte (chosen on the host from the corpus's byte
// frequencies); a second SWAR test on the window at the distance of the
// second rarest byte removes most of the rest. That window comes from two
// aligned vec4 loads of neighbours' data (cache hits), shifted by amounts
// that depend on the pattern alone. Only the surviving candidates are
// compared in full (not even that when the two tests covered the whole
// pattern), and only a confirmed match pays for the line lookup (a short
// binary search bounded by the 256-byte block hint) and the atomicOr of its
// line bit.
//
// A chunk owns the candidate starts p whose rare byte p + r1 lies in its
// 16 bytes, so every start is tested in exactly one chunk. The work is split
// in two dispatches (below): a streaming pass that only flags chunks, and a
// verify pass over the flagged ones.
//
// Measured on the H100 (194 MB, kernel ms; plain-read 0.067): see
// docs/bench/h100-2026-11-21.md for the variants tried and dropped.

const NL4: u32 = 0x0A0A0A0Au;

// A word at word index `wi` (may be negative or past the end): '\n' bytes
// outside the buffer, which no pattern byte equals.
fn word_signed(wi: i32) -> u32 {
    if wi < 0 {
        return NL4;
    }
    let u = u32(wi);
    if u >= arrayLength(&data) * 4u {
        return NL4;
    }
    return word_at(u);
}

// The high bit of each byte lane where `(w | orm)` equals the broadcast
// byte `b`. Exact per lane (no borrow between lanes): for x = lane ^ b,
// (x & 0x7f) + 0x7f sets the high bit iff the low 7 bits are non-zero, and
// `| x` adds the lane's own high bit. OR-ing 0x20 into a lane folds exactly
// the two cases of a letter onto its lower case.
fn eq_mask(w: vec4<u32>, b: u32, orm: u32) -> vec4<u32> {
    let x = (w | vec4<u32>(orm)) ^ vec4<u32>(b);
    let lo = vec4<u32>(0x7F7F7F7Fu);
    return ~(((x & lo) + lo) | x | lo);
}

// The 16 bytes at base + d2, from two aligned vec4 loads (neighbours'
// data, so cache hits) instead of five scalar ones. base is a multiple of
// 16, so the word and bit shifts depend on d2 alone: uniform branches.
fn window(base: u32) -> vec4<u32> {
    let off = i32(base) + params.d2;
    if off < 0 {
        // Only in the first 64 bytes of a segment.
        let wi = off >> 2u;
        let sh = u32(off & 3) * 8u;
        let w0 = word_signed(wi);
        let w1 = word_signed(wi + 1);
        let w2 = word_signed(wi + 2);
        let w3 = word_signed(wi + 3);
        let w4 = word_signed(wi + 4);
        let lo = vec4<u32>(w0, w1, w2, w3);
        if sh == 0u {
            return lo;
        }
        let hi = vec4<u32>(w1, w2, w3, w4);
        return (lo >> vec4<u32>(sh)) | (hi << vec4<u32>(32u - sh));
    }
    let u = u32(off);
    // In bounds: off < n_bytes + 80, and the buffer is padded by >= 128.
    let a = data[u >> 4u];
    let b = data[(u >> 4u) + 1u];
    let ws = (u >> 2u) & 3u;
    var lo = a;
    var hi = vec4<u32>(a.y, a.z, a.w, b.x);
    if ws == 1u {
        lo = vec4<u32>(a.y, a.z, a.w, b.x);
        hi = vec4<u32>(a.z, a.w, b.x, b.y);
    } else if ws == 2u {
        lo = vec4<u32>(a.z, a.w, b.x, b.y);
        hi = vec4<u32>(a.w, b.x, b.y, b.z);
    } else if ws == 3u {
        lo = vec4<u32>(a.w, b.x, b.y, b.z);
        hi = b;
    }
    let sh = (u & 3u) * 8u;
    if sh == 0u {
        return lo;
    }
    return (lo >> vec4<u32>(sh)) | (hi << vec4<u32>(32u - sh));
}

// Phase 1 (`scan_flag`): the streaming pass. Each thread tests its two
// vec4s and sets the bit of each chunk (16 bytes) holding a lane that passed
// the SWAR tests, in a workgroup-memory word; after one barrier the
// workgroup stores its 16 words (512 chunks) with plain stores, so the flag
// words need no clearing. It does nothing else per candidate: no verify, no
// line lookup, no global atomics, so its warps live as long as plain-read's.
// It also zeroes the result bits and the counters for phase 2 (a later
// dispatch), which saves the host two buffer clears per query.
//
// Phase 2 (`scan_verify`): one thread per flag word (32 chunks) re-tests
// only the flagged chunks, verifies the survivors, finds each match's line
// and sets its bit; a bit it set first is counted, so no pop-count pass is
// needed either.

// Variant bits (params.variant).
// SCAN_BLK32 (scan_reg): a match's line is the line of its 32-byte block
// (an index entry per block) plus the newlines before it in the block,
// which the thread holds in registers: one load, no search.
const SCAN_BLK32: u32 = 16u;
// Diagnostics (wrong results; to price the parts): no result atomics, and
// a constant-time wrong line.
const SCAN_DIAG_NO_ATOMIC: u32 = 4u;
const SCAN_DIAG_NO_LOOKUP: u32 = 8u;

fn pass_mask(v: vec4<u32>, base: u32) -> vec4<u32> {
    var mask = eq_mask(v, params.b1, params.or1);
    if params.has_r2 != 0u && any(mask != vec4<u32>(0u)) {
        mask &= eq_mask(window(base), params.b2, params.or2);
    }
    return mask;
}

// The SWAR tests alone are exact when they covered every pattern byte.
fn swar_exact() -> bool {
    return params.pat_len == 1u || (params.pat_len == 2u && params.has_r2 != 0u);
}

// The line holding byte q (diagnostics aside).
fn line_at(q: u32) -> u32 {
    if (params.variant & SCAN_DIAG_NO_LOOKUP) != 0u {
        return q >> 8u;
    }
    return line_of(q);
}

// One-pass scan (`scan_one`): each thread tests its two vec4s and verifies
// and records its matches inline (the kernel measured in
// docs/bench/h100-2026-11-21.md), with the variant bits above.
fn test16(v: vec4<u32>, base: u32) {
    let mask = pass_mask(v, base);
    if all(mask == vec4<u32>(0u)) {
        return;
    }
    let exact = swar_exact();
    var last_line = 0xFFFFFFFFu;
    for (var k = 0u; k < 4u; k++) {
        var m = mask[k];
        while m != 0u {
            let bit = countTrailingZeros(m);
            m &= m - 1u;
            let q = base + k * 4u + (bit >> 3u);
            if q < params.r1 {
                continue;
            }
            let p = q - params.r1;
            if exact || matches_at(p) {
                let line = line_at(q);
                if line != last_line {
                    if (params.variant & SCAN_DIAG_NO_ATOMIC) == 0u {
                        set_result(line);
                    }
                    last_line = line;
                }
            }
        }
    }
}

@compute @workgroup_size(256)
fn scan_one(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let c0 = group_id(wid, nwg) * (WG * 2u) + lid;
    let c1 = c0 + WG;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    if c0 >= n_vec {
        return;
    }
    let v0 = data[c0];
    var v1 = vec4<u32>(NL4);
    if c1 < n_vec {
        v1 = data[c1];
    }
    test16(v0, c0 * 16u);
    if c1 < n_vec {
        test16(v1, c1 * 16u);
    }
}

// Chunks per workgroup of phase 1, and their flag words.
const CHUNKS_PER_WG: u32 = 512u;
const FLAG_WORDS_PER_WG: u32 = 16u;

var<workgroup> wflags: array<atomic<u32>, 16>;
var<workgroup> wcount: atomic<u32>;

// Flag words of the segment (one bit per 16-byte chunk), kept in `cand`.
fn n_flag_words() -> u32 {
    return ((seg.n_bytes + 15u) / 16u + 31u) / 32u;
}

@compute @workgroup_size(256)
fn scan_flag(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_id(wid, nwg);
    if lid < FLAG_WORDS_PER_WG {
        atomicStore(&wflags[lid], 0u);
    }
    // Zero phase 2's outputs: every result word, whatever the grid.
    let threads = nwg.x * nwg.y * WG;
    for (var w = g * WG + lid; w < seg.n_words; w += threads) {
        atomicStore(&result[w], 0u);
    }
    if g == 0u && lid < 4u {
        atomicStore(&counters[lid], 0u);
    }
    workgroupBarrier();
    let c0 = g * CHUNKS_PER_WG + lid;
    let c1 = c0 + WG;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    // Both loads issued before either is tested.
    var v0 = vec4<u32>(NL4);
    var v1 = vec4<u32>(NL4);
    if c0 < n_vec {
        v0 = data[c0];
    }
    if c1 < n_vec {
        v1 = data[c1];
    }
    if c0 < n_vec && any(pass_mask(v0, c0 * 16u) != vec4<u32>(0u)) {
        atomicOr(&wflags[lid >> 5u], 1u << (lid & 31u));
    }
    if c1 < n_vec && any(pass_mask(v1, c1 * 16u) != vec4<u32>(0u)) {
        atomicOr(&wflags[8u + (lid >> 5u)], 1u << (lid & 31u));
    }
    workgroupBarrier();
    let fw = g * FLAG_WORDS_PER_WG + lid;
    if lid < FLAG_WORDS_PER_WG && fw < n_flag_words() {
        atomicStore(&cand[fw], atomicLoad(&wflags[lid]));
    }
}

// The matches in the flagged chunk c: each new line's bit, counted once.
fn verify_chunk(c: u32) -> u32 {
    let base = c * 16u;
    let mask = pass_mask(data[c], base);
    let exact = swar_exact();
    var last_line = 0xFFFFFFFFu;
    var found = 0u;
    for (var k = 0u; k < 4u; k++) {
        var m = mask[k];
        while m != 0u {
            let bit = countTrailingZeros(m);
            m &= m - 1u;
            let q = base + k * 4u + (bit >> 3u);
            if q < params.r1 {
                continue;
            }
            let p = q - params.r1;
            if exact || matches_at(p) {
                let line = line_at(q);
                if line != last_line {
                    last_line = line;
                    let b = 1u << (line & 31u);
                    if (atomicOr(&result[line >> 5u], b) & b) == 0u {
                        found += 1u;
                    }
                }
            }
        }
    }
    return found;
}

@compute @workgroup_size(256)
fn scan_verify(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&wcount, 0u);
    }
    workgroupBarrier();
    let w = group_id(wid, nwg) * WG + lid;
    var found = 0u;
    if w < n_flag_words() {
        var f = atomicLoad(&cand[w]);
        while f != 0u {
            let bit = countTrailingZeros(f);
            f &= f - 1u;
            found += verify_chunk(w * 32u + bit);
        }
    }
    if found != 0u {
        atomicAdd(&wcount, found);
    }
    workgroupBarrier();
    if lid == 0u {
        let n = atomicLoad(&wcount);
        if n != 0u {
            atomicAdd(&counters[0], n);
        }
    }
}

// scan_reg: each thread owns the 32 start positions of two adjacent chunks
// and loads the chunk after them too (the next thread's first: a cache
// hit), so 48 bytes sit in registers: both SWAR tests (rare bytes within
// the first 17 of the pattern, at any distance) and the verification of
// up to 17 bytes read no memory beyond the three loads, and a match's line
// needs one load (SCAN_BLK32).

// The 16 bytes at offset r (0..=16) of the 32 bytes a, b.
fn shift16(a: vec4<u32>, b: vec4<u32>, r: u32) -> vec4<u32> {
    if r >= 16u {
        return b;
    }
    let ws = r >> 2u;
    var lo = a;
    var hi = vec4<u32>(a.y, a.z, a.w, b.x);
    if ws == 1u {
        lo = vec4<u32>(a.y, a.z, a.w, b.x);
        hi = vec4<u32>(a.z, a.w, b.x, b.y);
    } else if ws == 2u {
        lo = vec4<u32>(a.z, a.w, b.x, b.y);
        hi = vec4<u32>(a.w, b.x, b.y, b.z);
    } else if ws == 3u {
        lo = vec4<u32>(a.w, b.x, b.y, b.z);
        hi = b;
    }
    let sh = (r & 3u) * 8u;
    if sh == 0u {
        return lo;
    }
    return (lo >> vec4<u32>(sh)) | (hi << vec4<u32>(32u - sh));
}

// Byte i (< 48) of the registers a, b, c.
fn reg_byte(a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, i: u32) -> u32 {
    var v = a;
    if i >= 32u {
        v = c;
    } else if i >= 16u {
        v = b;
    }
    return (v[(i >> 2u) & 3u] >> ((i & 3u) * 8u)) & 0xFFu;
}

// '\n' bytes among bytes [0, o) of a, b (o < 32), from their '\n' masks.
fn newlines_below(na: vec4<u32>, nb: vec4<u32>, o: u32) -> u32 {
    var n = 0u;
    for (var k = 0u; k < 8u; k++) {
        var w = na[k & 3u];
        if k >= 4u {
            w = nb[k & 3u];
        }
        let lo = k * 4u;
        if lo + 4u <= o {
            n += countOneBits(w);
        } else if lo < o {
            n += countOneBits(w & ((1u << ((o - lo) * 8u)) - 1u));
        }
    }
    return n;
}

fn reg_mask(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    var m = eq_mask(shift16(a, b, params.r1), params.b1, params.or1);
    if params.has_r2 != 0u && any(m != vec4<u32>(0u)) {
        m &= eq_mask(shift16(a, b, u32(i32(params.r1) + params.d2)), params.b2, params.or2);
    }
    return m;
}

@compute @workgroup_size(256)
fn scan_reg(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = group_id(wid, nwg) * WG + lid;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    if 2u * t >= n_vec {
        return;
    }
    // In bounds: the buffer holds >= 8 vec4s of '\n' past n_vec.
    let a = data[2u * t];
    let b = data[2u * t + 1u];
    let c = data[2u * t + 2u];
    let m0 = reg_mask(a, b);
    let m1 = reg_mask(b, c);
    if all((m0 | m1) == vec4<u32>(0u)) {
        return;
    }
    let base = t * 32u;
    let m = params.pat_len;
    let exact = swar_exact();
    var last_line = 0xFFFFFFFFu;
    var line0 = 0xFFFFFFFFu;
    for (var k = 0u; k < 8u; k++) {
        var bits = m0[k & 3u];
        if k >= 4u {
            bits = m1[k & 3u];
        }
        while bits != 0u {
            let bit = countTrailingZeros(bits);
            bits &= bits - 1u;
            let o = k * 4u + (bit >> 3u);
            var ok = exact;
            if !ok && base + o + m <= seg.n_bytes {
                ok = true;
                for (var j = 0u; j < m; j++) {
                    var x = 0u;
                    if o + j < 48u {
                        x = reg_byte(a, b, c, o + j);
                    } else {
                        x = byte_at(base + o + j);
                    }
                    if fold(x) != pat_at(j) {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                continue;
            }
            var line = 0u;
            if (params.variant & SCAN_DIAG_NO_LOOKUP) != 0u {
                line = base >> 8u;
            } else if (params.variant & SCAN_BLK32) != 0u {
                if line0 == 0xFFFFFFFFu {
                    line0 = blk[seg.delta_at + t];
                }
                line = line0 + newlines_below(eq_mask(a, NL4, 0u), eq_mask(b, NL4, 0u), o);
            } else {
                line = line_of(base + o);
            }
            if line != last_line {
                if (params.variant & SCAN_DIAG_NO_ATOMIC) == 0u {
                    set_result(line);
                }
                last_line = line;
            }
        }
    }
}
