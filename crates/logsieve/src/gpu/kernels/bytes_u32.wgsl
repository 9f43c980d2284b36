// The corpus as plain u32 words (kernels that read byte by byte).
@group(0) @binding(2) var<storage, read> data: array<u32>;

fn byte_at(p: u32) -> u32 {
    return (data[p >> 2u] >> ((p & 3u) * 8u)) & 0xFFu;
}
