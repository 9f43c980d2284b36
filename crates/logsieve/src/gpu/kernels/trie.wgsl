// trie: one walk of the pattern trie per start position.
//
// Nodes live in one compact array (`tables`, from word mp.a): a header
// word (child count in bits 0..8, group + 1 in bits 9..31, 0 = no pattern
// ends here), the child labels four to a word (padded with the last
// label), then the child offsets (relative to mp.a): two 16-bit offsets a
// word when the whole trie fits in 65536 words (mp.b = 1), else one a
// word. The root's children are a 256-entry table (from word mp.c) held in
// workgroup memory: most walks end there. The walk fetches the next byte
// before it searches the current node's labels (prefetch).

var<workgroup> wroot: array<u32, 256>;

// The child of `node` labelled `b`, or 0 (the root is never a child).
fn child(node: u32, hdr: u32, b: u32) -> u32 {
    let c = hdr & 0x1FFu;
    let nl = (c + 3u) >> 2u;
    let bb = b * 0x01010101u;
    for (var w = 0u; w < nl; w++) {
        let x = tables[mp.a + node + 1u + w] ^ bb;
        let z = (x - 0x01010101u) & ~x & 0x80808080u;
        if z != 0u {
            let i = w * 4u + (countTrailingZeros(z) >> 3u);
            if i >= c {
                return 0u;
            }
            let cb = mp.a + node + 1u + nl;
            if mp.b == 1u {
                return (tables[cb + (i >> 1u)] >> ((i & 1u) * 16u)) & 0xFFFFu;
            }
            return tables[cb + i];
        }
    }
    return 0u;
}

@compute @workgroup_size(256)
fn trie(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    wroot[lid] = tables[mp.c + lid];
    workgroupBarrier();
    let p = group_id(wid, nwg) * WG + lid;
    if p >= seg.n_bytes {
        return;
    }
    var node = wroot[mfold(byte_at(p))];
    if node == 0u {
        return;
    }
    var q = p + 1u;
    var b = mfold(byte_at(q));
    loop {
        let hdr = tables[mp.a + node];
        let g = hdr >> 9u;
        if g != 0u {
            on_match(p, g - 1u);
            if mp.per_pattern == 0u {
                return;
            }
        }
        if (hdr & 0x1FFu) == 0u {
            return;
        }
        // Prefetch: the byte after this one is loaded before the label
        // search needs the current one. The segment's '\n' padding ends
        // every walk (no pattern holds '\n'), so reads stay in bounds.
        let next = mfold(byte_at(q + 1u));
        node = child(node, hdr, b);
        if node == 0u {
            return;
        }
        b = next;
        q += 1u;
    }
}
