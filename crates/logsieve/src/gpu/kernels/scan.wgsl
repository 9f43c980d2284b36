// scan: the fast exact kernel. Each thread owns two 16-byte vec4<u32>
// loads, a workgroup-width apart (coalesced), both issued before either is
// tested: the traffic of plain-read. A SWAR test finds the bytes equal to
// the pattern's rarest byte (chosen on the host from the corpus's byte
// frequencies); a second SWAR test on the window at the distance of the
// second rarest byte removes most of the rest. That window comes from two
// aligned vec4 loads of neighbours' data (cache hits), shifted by amounts
// that depend on the distance alone, a constant of the pipeline. Only the
// surviving candidates are compared in full, four bytes at a time (not
// even that when the two tests covered the whole pattern), and only a
// confirmed match pays for the line lookup (a short binary search bounded
// by the block hint) and the atomicOr of its line bit.
//
// A thread owns the candidate starts p whose rare byte p + r1 lies in one
// of its two chunks, so every start is tested by exactly one thread.
//
// What the H100 taught (docs/bench/h100-2026-11-21-gpu-engine.md, h100-2026-11-22-gpu-engine.md,
// h100-2026-11-22-scan-immediates.md, h100-2026-11-22-scan-diagnostics.md): this kernel
// is short of instruction issue, not of bandwidth. One more 22-operation
// test per 16 bytes costs 0.007-0.018 ms; so every operation on the
// streaming path counts:
// - a test costs three operations a word for an ASCII byte (`eq_ascii`);
// - the window's shifts are constants of the pipeline (`D2R`), not
//   run-time selects: 0.093 -> 0.082 ms for `192.168.1`;
// - the second test runs on every chunk, without a branch, where the rare
//   byte is in a quarter of the chunks (every warp takes the branch
//   anyway), and behind one where it is rare (`DENSE`);
// - the two tests' lane masks are ANDed before they become bits, and the
//   hits of both chunks are one word and one loop (`hits`): a loop per
//   vec4 lane cost `x` 0.014 ms.

const NL4: u32 = 0x0A0A0A0Au;

// Chunks (vec4 loads) per thread: two, whose hits share one word (`VPT`
// in scan.rs sizes the dispatch).
const VPT: u32 = 2u;

// The pipeline's kind of pattern: 1 one byte (no second test, no
// verification), 2 two bytes (both tested, no verification), 3 longer.
override SPEC: u32 = 3u;
// The distance from the rarest byte to the second, modulo 16: the byte
// shift of the second test's window. The host builds a pipeline per value.
override D2R: u32 = 0u;
// The second test on every chunk, without a branch: for a rarest byte so
// common that nearly every warp would take the branch (`DENSE_SHARE` in
// gpu/rare.rs). Otherwise only chunks where the first test hit take it.
override DENSE: bool = true;
// A class string (`query/classes.rs`: a regex whose matches are a
// fixed-length run of byte classes): the survivors are tested position by
// position against the classes (`class_at`) instead of the pattern's
// words. Such pipelines read the uniform, never immediate data.
override CLS: bool = false;
// Two class strings in one pass (`CLS` too): the second's rare bytes are
// tested on the same loads, its window shifted by the constant `D2R2`.
// Each string then has 32 of the 64 positions; the second's scalars are
// in `patw` (`scan.rs`, `class_pair_params`).
override CLS2: bool = false;
// The pair's second string's distance from its rarest byte to its second,
// modulo 16 (`D2R` of the first string's): a run-time shift there cost
// `\[svc-(payments|billing)\]`'s pass 150 us against 137 on the H200.
override D2R2: u32 = 0u;
// Whether a string of the pass has steps (`class_at`'s walk): without,
// the walk is left out of the pipeline (its code alone cost
// `\b(GET|POST) /api/v\d/`'s pass 110.8 -> 113.7 us on the H200).
override WALK: bool = true;
// Whether a fixed position of the pass is looked up in its class's bits
// (`\w`, bytes >= 0x80: `class_at`'s `slow` lanes), and whether a string
// of it has `\b`, `^` or `$`: without, that code is left out too (on the
// H200 they cost the passes without them up to 28 and 10 us, 2026-11-28
// at `aac681c`).
override LOOK: bool = true;
override EDGE: bool = true;

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

// The same for an ASCII byte b, in three operations a word instead of
// four: with each lane's high bit forced on, `- 1` borrows from no lane,
// and leaves that bit clear only where the low seven bits equal b's; a
// lane whose own high bit is set cannot equal an ASCII byte.
fn eq_ascii(w: vec4<u32>, b: u32, orm: u32) -> vec4<u32> {
    let t = ((w | vec4<u32>(orm | 0x80808080u)) ^ vec4<u32>(b)) - vec4<u32>(0x01010101u);
    return ~(t | w) & vec4<u32>(0x80808080u);
}

// The lane mask of the bytes of w equal to b (under orm).
fn eq(w: vec4<u32>, b: u32, orm: u32) -> vec4<u32> {
    if (b & 0x80u) == 0u {
        return eq_ascii(w, b, orm);
    }
    return eq_mask(w, b, orm);
}

// The lane mask as a bit set: byte i of word k at bit 8 * i + k (four
// shifts and three ORs).
fn hits(m: vec4<u32>) -> u32 {
    return (m.x >> 7u) | (m.y >> 6u) | (m.z >> 5u) | (m.w >> 4u);
}

// The 16 bytes at byte u, from two aligned vec4 loads (neighbours' data,
// so cache hits). u = base + d with base a multiple of 16, and d2r = d
// mod 16 a constant of the pipeline (`D2R`, or the pair's `D2R2`), so the
// word and byte shifts are constants and the branches below fold away
// when the pipeline is built.
fn window(u: u32, d2r: u32) -> vec4<u32> {
    // In bounds: u < n_bytes + 80, and the buffer is padded by >= 128.
    let a = data[u >> 4u];
    let b = data[(u >> 4u) + 1u];
    let ws = d2r >> 2u;
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
    let sh = (d2r & 3u) * 8u;
    if sh == 0u {
        return lo;
    }
    // `& 31u`: a shift by 32 is an error where a compiler evaluates the
    // branch not taken with the constants.
    return (lo >> vec4<u32>(sh)) | (hi << vec4<u32>((32u - sh) & 31u));
}

// The second test's lane mask for the 16 starts of the rare byte at base.
fn second(base: u32) -> vec4<u32> {
    return eq(window(u32(i32(base) + params.d2), D2R), params.b2, params.or2);
}

// The pattern's bytes i..i+4 as one word (i a multiple of 4).
fn pat_word(i: u32) -> u32 {
    return params.patw[i >> 4u][(i >> 2u) & 3u];
}

// The 4 bytes at p (any alignment).
fn word4(p: u32) -> u32 {
    let w = p >> 2u;
    let s = (p & 3u) * 8u;
    let lo = word_at(w);
    if s == 0u {
        return lo;
    }
    return (lo >> s) | (word_at(w + 1u) << (32u - s));
}

// ASCII upper case to lower, four bytes at once: a lane below 0x80 whose
// low seven bits are in 'A'..='Z' gains 0x20 (no carry between lanes).
fn lower4(w: u32) -> u32 {
    let l = w & 0x7F7F7F7Fu;
    let up = (l + 0x3F3F3F3Fu) & ~(l + 0x25252525u) & ~w & 0x80808080u;
    return w | (up >> 2u);
}

// CLASS-BEGIN (cut from the immediate-data variant: `scan.rs`)
// A step's word in `pat` has this bit when its lane test decides its
// class (`scan.rs`, `STEP_RANGED`).
const STEP_RANGED: u32 = 0x10000000u;

// The high bit of each lane of w that a lane test takes (`class_at`): a
// fold OR-ed in (`a.x`), then ranges `a.y..a.z` and `a.w..hi2`, exclusive
// above, of ASCII bytes. With each lane's high bit forced on, `x - lo`
// borrows from no lane and keeps that bit exactly where the lane is >= lo.
// (Bits below the high ones are left as they fall: callers mask.)
fn lanes_ok(w: u32, a: vec4<u32>, hi2: u32) -> u32 {
    let x = ((w | a.x) & 0x7F7F7F7Fu) | 0x80808080u;
    return (((x - a.y) & ~(x - a.z)) | ((x - a.w) & ~(x - hi2))) & ~w;
}

// True when the class string occurs at byte p. Four positions a word
// (`lanes`, two vec4s a word): most classes are a letter folded by OR-ing
// 0x20, or one or two ranges of ASCII bytes (a byte, `\d`, `[0-9a-f]`,
// `[A-Za-z]`), and two SWAR range tests (`lanes_ok`) decide all four
// lanes at once without a lookup. The other lanes (`\w`, bytes >= 0x80) are looked up one by one: their test
// is in `pat[i]` (bits 0-7 a byte, bits 8-10 its kind: 0 the byte, 5 the
// byte with 0x20 OR-ed in, 1-4 the 256-bit set of class k - 1 in `need`,
// eight words a class). Then the steps (`query::classes::Step`), each a
// run of one class taken greedily from a cursor: `pat[m + s]` holds step
// s's test in bits 0-10, its fewest bytes in bits 12-19, its most in bits
// 20-27 (255: no bound), and in `STEP_RANGED` whether the lane test in the
// lanes of position m + s decides its class: then the walk takes four
// bytes a step (`bytes=\d{6,}$` 198 -> 149 us on the H200). `win_lo`:
// bit 0 `\b` before the first position, bit 1 after the last step (ASCII word bytes; a segment starts and ends
// at a line's edge, and '\n' is no word byte), bit 2 `^`, bit 3 `$`, bit 4
// a head before the match after `^` (its test in `sig.x`), bits 8-15 the
// steps. No class takes '\n', so every walk stops at its line's end; the
// host keeps a fixed position apart from every walked byte, so two starts'
// walks never share bytes (but for starts one fixed part apart): linear.
// Only survivors of the two byte tests get here, but where the literal is
// on most lines (`trace=[0-9a-f]{32}`: 69%) they are many.
// Class string `k` of the pass (0, or 1 in a pair): its positions from
// 32 k, its scalars (length, flags, head) where the host put them.
fn class_at(p: u32, k: u32) -> bool {
    var m = params.pat_len;
    var fl = params.win_lo;
    var head = params.sig.x;
    if k == 1u {
        m = params.patw[1].z;
        fl = params.patw[1].w;
        head = params.patw[2].x;
    }
    if p + m > seg.n_bytes {
        return false;
    }
    let base = 32u * k;
    for (var i = 0u; i < m; i += 4u) {
        let w = word4(p + i);
        let a = params.lanes[(base + i) >> 1u];
        let c = params.lanes[((base + i) >> 1u) + 1u];
        if (lanes_ok(w, a, c.x) & c.y) != c.y {
            return false;
        }
        var slow = select(0u, c.z, LOOK);
        while slow != 0u {
            let j = countTrailingZeros(slow) >> 3u;
            slow &= slow - 1u;
            if !class_ok(params.pat[(base + i) >> 2u][j], (w >> (j * 8u)) & 0xFFu) {
                return false;
            }
        }
    }
    var q = p + m;
    let ns = select(0u, (fl >> 8u) & 0xFFu, WALK);
    for (var s = 0u; s < ns; s++) {
        let e = params.pat[(base + m + s) >> 2u][(base + m + s) & 3u];
        let lo = (e >> 12u) & 0xFFu;
        var hi = (e >> 20u) & 0xFFu;
        if hi == 0xFFu {
            hi = 0xFFFFFFFFu;
        }
        var k = 0u;
        if (e & STEP_RANGED) != 0u {
            // Position m + s's lane test, in all four lanes.
            let j = base + m + s;
            let a = params.lanes[(j >> 2u) * 2u];
            let c = params.lanes[(j >> 2u) * 2u + 1u];
            let sh = (j & 3u) * 8u;
            loop {
                if k >= hi || q >= seg.n_bytes {
                    break;
                }
                let t = ((a >> vec4<u32>(sh)) & vec4<u32>(0xFFu)) * 0x01010101u;
                let ok = lanes_ok(word4(q), t, ((c.x >> sh) & 0xFFu) * 0x01010101u);
                // The bytes the class takes, from the first.
                let run = countTrailingZeros(~ok & 0x80808080u) >> 3u;
                let take = min(run, min(hi - k, seg.n_bytes - q));
                q += take;
                k += take;
                if run < 4u {
                    break;
                }
            }
        } else {
            while k < hi && q < seg.n_bytes && class_ok(e & 0x7FFu, byte_at(q)) {
                q += 1u;
                k += 1u;
            }
        }
        if k < lo {
            return false;
        }
    }
    if !EDGE {
        return true;
    }
    if (fl & 1u) != 0u {
        var prev = 10u;
        if p > 0u {
            prev = byte_at(p - 1u);
        }
        if is_word(prev) == is_word(byte_at(p)) {
            return false;
        }
    }
    var next = 10u;
    if q < seg.n_bytes {
        next = byte_at(q);
    }
    if (fl & 2u) != 0u && is_word(byte_at(q - 1u)) == is_word(next) {
        return false;
    }
    if (fl & 8u) != 0u && next != 10u {
        return false;
    }
    if (fl & 4u) != 0u {
        var s = p;
        if (fl & 16u) != 0u {
            while s > 0u && class_ok(head, byte_at(s - 1u)) {
                s -= 1u;
            }
        }
        if s > 0u && byte_at(s - 1u) != 10u {
            return false;
        }
    }
    return true;
}

// The pair's second class string on the thread's two chunks: its two
// byte tests (`patw[0]`: rare byte index, byte, fold, distance;
// `patw[1]`: second byte, fold), then `class_at` on the survivors.
fn second_string(v0: vec4<u32>, v1: vec4<u32>, base0: u32, base1: u32) {
    let s0 = params.patw[0];
    let s1 = params.patw[1];
    let d2 = i32(s0.w);
    let zero = vec4<u32>(0u);
    var m0 = eq(v0, s0.y, s0.z);
    var m1 = eq(v1, s0.y, s0.z);
    // Near a segment's start the window may start before the buffer:
    // there every candidate goes to `class_at` untested.
    if any(m0 != zero) && i32(base0) + d2 >= 0 {
        m0 &= eq(window(u32(i32(base0) + d2), D2R2), s1.x, s1.y);
    }
    if any(m1 != zero) {
        m1 &= eq(window(u32(i32(base1) + d2), D2R2), s1.x, s1.y);
    }
    var h = hits(m0) | (hits(m1) << 4u);
    var last_line = 0xFFFFFFFFu;
    while h != 0u {
        let j = countTrailingZeros(h);
        h &= h - 1u;
        let q = select(base0, base1, (j & 4u) != 0u) + (j & 3u) * 4u + (j >> 3u);
        if q < s0.x {
            continue;
        }
        let p = q - s0.x;
        if class_at(p, 1u) {
            let line = line_of(p);
            if line != last_line {
                set_result(line);
                last_line = line;
            }
        }
    }
}

// Position test `e` (as in `class_at`) on byte `b`.
fn class_ok(e: u32, b: u32) -> bool {
    let k = e >> 8u;
    if k == 0u {
        return b == (e & 0xFFu);
    }
    if k == 5u {
        return (b | 0x20u) == (e & 0xFFu);
    }
    let w = (k - 1u) * 8u + (b >> 5u);
    return ((params.need[w >> 2u][w & 3u] >> (b & 31u)) & 1u) != 0u;
}
// CLASS-END

// An ASCII word byte (`\b`'s classes on ASCII text).
fn is_word(b: u32) -> bool {
    let l = b | 0x20u;
    return (b >= 0x30u && b <= 0x39u) || (l >= 0x61u && l <= 0x7Au) || b == 0x5Fu;
}

// True when the pattern occurs at byte p, compared four bytes at a time.
fn verify_at(p: u32) -> bool {
    if CLS {
        return class_at(p, 0u);
    }
    let m = params.pat_len;
    if p + m > seg.n_bytes {
        return false;
    }
    for (var i = 0u; i < m; i += 4u) {
        var w = word4(p + i);
        if params.fold != 0u {
            w = lower4(w);
        }
        var x = w ^ pat_word(i);
        if m - i < 4u {
            x &= (1u << ((m - i) * 8u)) - 1u;
        }
        if x != 0u {
            return false;
        }
    }
    return true;
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
    let base0 = c0 * 16u;
    let base1 = c1 * 16u;
    var m0 = eq(v0, params.b1, params.or1);
    // The padding ('\n') never holds a pattern byte, so a v1 past the end
    // has no hits.
    var m1 = eq(v1, params.b1, params.or1);
    var verify = SPEC == 3u;
    if SPEC != 1u {
        let zero = vec4<u32>(0u);
        if DENSE || any(m0 != zero) {
            // In the first 64 bytes of a segment the window may start
            // before the buffer: there the candidates skip the second test
            // and are verified in full.
            if i32(base0) + params.d2 >= 0 {
                m0 &= second(base0);
            } else {
                verify = true;
            }
        }
        if DENSE || any(m1 != zero) {
            m1 &= second(base1);
        }
    }
    // Chunk 1's bits sit above chunk 0's: bit j is byte j >> 3 of word
    // j & 3 of chunk (j >> 2) & 1.
    var h = hits(m0) | (hits(m1) << 4u);
    var last_line = 0xFFFFFFFFu;
    while h != 0u {
        let j = countTrailingZeros(h);
        h &= h - 1u;
        let q = select(base0, base1, (j & 4u) != 0u) + (j & 3u) * 4u + (j >> 3u);
        if q < params.r1 {
            continue;
        }
        let p = q - params.r1;
        if !verify || verify_at(p) {
            let line = line_of(p);
            if line != last_line {
                set_result(line);
                last_line = line;
            }
        }
    }
    if CLS2 {
        second_string(v0, v1, base0, base1);
    }
}
