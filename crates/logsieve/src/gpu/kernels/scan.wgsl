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
// binary search bounded by the 128-byte block hint) and the atomicOr of its
// line bit.
//
// A thread owns the candidate starts p whose rare byte p + r1 lies in its
// 16 bytes, so every start is tested by exactly one thread.
//
// Measured on the H100 (194 MB, kernel ms; plain-read 0.067): see
// docs/bench/h100-2026-11-21.md, h100-2026-11-22.md and
// h100-2026-11-22-session2.md for the variants tried and dropped. What
// they teach: code costs registers even where it rarely runs, and fewer
// resident threads carry fewer loads; keep this kernel small, and give
// other cases pipelines of their own (SPEC below).

const NL4: u32 = 0x0A0A0A0Au;

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

// Each thread tests 2 vec4s, both loaded before either is tested, so that
// two loads per thread are in flight (written out, not as an array: a
// function-local array indexed in a loop can land in local memory).
const VPT: u32 = 2u;

// The 16 bytes at byte u (= base + d2 >= 0), from two aligned vec4 loads
// (neighbours' data, so cache hits) instead of five scalar ones. base is a
// multiple of 16, so the word and bit shifts depend on d2 alone: uniform
// branches.
fn window(u: u32) -> vec4<u32> {
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

// The pipeline's kind of pattern, fixed when it is built, so that each
// pipeline holds only the code its patterns need: 1 one byte (no second
// test, no verification), 2 two bytes (both tested, no verification),
// 3 longer; 0 any (decided from the uniform at run time).
override SPEC: u32 = 0u;

fn has_r2() -> bool {
    if SPEC == 0u {
        return params.has_r2 != 0u;
    }
    return SPEC != 1u;
}

// The SWAR tests alone are exact when they covered every pattern byte.
fn exact() -> bool {
    if SPEC == 0u {
        return params.pat_len == 1u || (params.pat_len == 2u && params.has_r2 != 0u);
    }
    return SPEC != 3u;
}

fn test16(v: vec4<u32>, base: u32) {
    var mask = eq_mask(v, params.b1, params.or1);
    // In the first 64 bytes of a segment the second byte's window may
    // start before the buffer: there the candidates skip the second test
    // and are verified in full (a code path of its own here would cost
    // every thread registers).
    var verify = !exact();
    if has_r2() && any(mask != vec4<u32>(0u)) {
        let off = i32(base) + params.d2;
        if off >= 0 {
            mask &= eq_mask(window(u32(off)), params.b2, params.or2);
        } else {
            verify = true;
        }
    }
    if all(mask == vec4<u32>(0u)) {
        return;
    }
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
            if !verify || matches_at(p) {
                let line = line_of(p);
                if line != last_line {
                    set_result(line);
                    last_line = line;
                }
            }
        }
    }
}

@compute @workgroup_size(256)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let c0 = group_id(wid, nwg) * (WG * VPT) + lid;
    let c1 = c0 + WG;
    let n_vec = (seg.n_bytes + 15u) / 16u;
    // The host does not clear the counters for scan: the pop-count (a
    // later dispatch) adds to counters[0].
    if c0 == 0u {
        atomicStore(&counters[0], 0u);
    }
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
