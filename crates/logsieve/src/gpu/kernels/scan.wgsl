// scan: the fast exact kernel. Each thread owns 16 bytes: one coalesced
// vec4<u32> load, exactly the traffic of plain-read. A SWAR test finds the
// bytes equal to the pattern's rarest byte (chosen on the host from the
// corpus's byte frequencies); a second SWAR test on the window at the
// distance of the second rarest byte removes most of the rest. That window
// is 5 unaligned words that neighbouring threads have just loaded, so it
// comes from cache, not from memory. Only the surviving candidates are
// compared in full, and only a confirmed match pays for the line lookup
// (a short binary search bounded by the 256-byte block hint) and the
// atomicOr of its line bit.
//
// A thread owns the candidate starts p whose rare byte p + r1 lies in its
// 16 bytes, so every start is tested by exactly one thread.

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

// Candidates of the whole workgroup, verified after a barrier by all its
// threads evenly: a thread that met several candidates would otherwise hold
// its warp through several dependent verify + line-lookup chains while the
// others idle (measured on the H100: 'x' and 'error' ran at ~55% of
// plain-read before this queue).
const QCAP: u32 = 2048u;
var<workgroup> queue: array<u32, QCAP>;
var<workgroup> qlen: atomic<u32>;

fn verify_and_set(p: u32) {
    if matches_at(p) {
        let line = line_of(p);
        let w = line >> 5u;
        let bit = 1u << (line & 31u);
        // A read is cheaper than a read-modify-write, and frequent lines
        // hold many matches.
        if (atomicLoad(&result[w]) & bit) == 0u {
            atomicOr(&result[w], bit);
        }
    }
}

@compute @workgroup_size(256)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&qlen, 0u);
    }
    workgroupBarrier();
    // No early return before the last barrier: every thread must reach it.
    let c = group_id(wid, nwg) * WG + lid;
    let base = c * 16u;
    var mask = vec4<u32>(0u);
    if base < seg.n_bytes {
        mask = eq_mask(data[c], params.b1, params.or1);
        if params.has_r2 != 0u && any(mask != vec4<u32>(0u)) {
            // The 16 bytes at base + d2: five words, funnel-shifted.
            let off = i32(base) + params.d2;
            let wi = off >> 2u;
            let sh = u32(off & 3) * 8u;
            let w0 = word_signed(wi);
            let w1 = word_signed(wi + 1);
            let w2 = word_signed(wi + 2);
            let w3 = word_signed(wi + 3);
            let w4 = word_signed(wi + 4);
            let lo = vec4<u32>(w0, w1, w2, w3);
            var win = lo;
            if sh != 0u {
                let hi = vec4<u32>(w1, w2, w3, w4);
                win = (lo >> vec4<u32>(sh)) | (hi << vec4<u32>(32u - sh));
            }
            mask &= eq_mask(win, params.b2, params.or2);
        }
    }
    for (var k = 0u; k < 4u; k++) {
        var m = mask[k];
        while m != 0u {
            let bit = countTrailingZeros(m);
            m &= m - 1u;
            let q = base + k * 4u + (bit >> 3u);
            if q < params.r1 {
                continue;
            }
            let slot = atomicAdd(&qlen, 1u);
            if slot < QCAP {
                queue[slot] = q - params.r1;
            } else {
                verify_and_set(q - params.r1);
            }
        }
    }
    workgroupBarrier();
    let n = min(atomicLoad(&qlen), QCAP);
    for (var i = lid; i < n; i += WG) {
        verify_and_set(queue[i]);
    }
}
