// The corpus as vec4<u32> (kernels that stream 16 bytes per load).
@group(0) @binding(2) var<storage, read> data: array<vec4<u32>>;

fn word_at(w: u32) -> u32 {
    return data[w >> 2u][w & 3u];
}

fn byte_at(p: u32) -> u32 {
    return (word_at(p >> 2u) >> ((p & 3u) * 8u)) & 0xFFu;
}
