//! Corpus decoding and indexing (`corpus/decode.rs`, `LineIndex`,
//! `Document::segments`).
//!
//! Input: byte 0 = mode (bits 0-2: format, 7 = plain; bit 3: encode the
//! payload into a valid gzip/xz/lzip stream first, then cut it), bytes 1-2 =
//! the cut (little-endian, modulo the stream length + 1), bytes 3-4 = the
//! segment maximum, then the payload.
//!
//! Checks: no decoder panics on any bytes; a valid stream cut anywhere
//! decodes to a prefix of its payload (the whole payload when not cut);
//! the decoded bytes' line index equals a naive split on `\n`, and
//! `segments(max)` covers every line once, in order, each segment within
//! `max` (or one oversized line), packed greedily.
#![no_main]
use std::io::Write;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use logsieve::corpus::decode::{decode_into, detect, Format};
use logsieve::Document;

const FORMATS: [Format; 7] = [
    Format::Gzip,
    Format::Bzip2,
    Format::Xz,
    Format::Lzma,
    Format::Lzip,
    Format::Zstd,
    Format::Lz4,
];

fn encode(format: Format, payload: &[u8]) -> Option<Vec<u8>> {
    match format {
        Format::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(payload).ok()?;
            e.finish().ok()
        }
        Format::Xz => {
            let mut w =
                lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(0))
                    .ok()?;
            w.write_all(payload).ok()?;
            w.finish().ok()
        }
        Format::Lzip => {
            let mut w =
                lzma_rust2::LzipWriter::new(Vec::new(), lzma_rust2::LzipOptions::with_preset(0));
            w.write_all(payload).ok()?;
            w.finish().ok()
        }
        _ => None,
    }
}

/// Lines as a naive split: `\n` ends a line; a last line without one is a
/// line; nothing after a final `\n` is.
fn naive_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        v.pop();
    }
    v
}

fn check_index(data: Vec<u8>, max: u64) {
    let naive: Vec<Vec<u8>> = naive_lines(&data).iter().map(|l| l.to_vec()).collect();
    let len = data.len() as u64;
    let doc = Document::from_bytes("fuzz", data);
    let idx = doc.lines();
    assert_eq!(idx.len(), naive.len() as u64, "line count");
    for (i, l) in naive.iter().enumerate() {
        assert_eq!(doc.line(i as u64), &l[..], "line {i}");
        let r = idx.line_range(i as u64);
        assert_eq!(idx.line_of(r.start), i as u64, "line_of start of {i}");
    }
    let starts = idx.starts();
    let segs = doc.segments(max);
    let max = max.max(1);
    let mut next = 0u64;
    for (k, s) in segs.iter().enumerate() {
        assert_eq!(s.lines.start, next, "segments contiguous");
        assert!(s.lines.end > s.lines.start, "empty segment");
        assert_eq!(s.bytes.start, starts[s.lines.start as usize]);
        assert_eq!(s.bytes.end, starts[s.lines.end as usize].min(len));
        let size = s.bytes.end - s.bytes.start;
        if s.oversized {
            assert_eq!(s.lines.end - s.lines.start, 1, "oversized holds one line");
            assert!(size > max, "oversized but fits");
        } else {
            assert!(size <= max, "segment {k} of {size} bytes over {max}");
        }
        if k + 1 < segs.len() {
            // Greedy: the next line would not have fitted.
            let grown = starts[s.lines.end as usize + 1].min(len) - s.bytes.start;
            assert!(grown > max, "segment {k} could hold one more line");
        }
        next = s.lines.end;
    }
    assert_eq!(next, naive.len() as u64, "segments cover every line");
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let mode = data[0];
    let cut = u16::from_le_bytes([data[1], data[2]]) as usize;
    let max = u16::from_le_bytes([data[3], data[4]]) as u64 % 512;
    let payload = &data[5..];
    let fi = (mode & 7) as usize;
    // The magic-byte sniffing never panics, whatever the name.
    let names = ["a.log", "a.gz", "a.lzma", "a.Z", "a.br", "a.zst", "a"];
    let _ = detect(payload, Path::new(names[fi % names.len()]));
    if fi == 7 {
        check_index(payload.to_vec(), max);
        return;
    }
    let format = FORMATS[fi];
    if mode & 8 != 0 {
        let Some(stream) = encode(format, payload) else {
            return;
        };
        let cut = cut % (stream.len() + 1);
        let mut out = Vec::new();
        let res = decode_into(format, &stream[..cut], &mut out);
        if cut == stream.len() {
            assert!(res.is_ok(), "{format:?} valid stream: {res:?}");
            assert_eq!(out, payload, "{format:?} round trip");
        } else {
            // (Nothing at all is no stream: never detected as one.)
            assert!(
                cut == 0 || res.is_err(),
                "{format:?} cut at {cut} of {} decoded Ok",
                stream.len()
            );
            assert!(
                payload.starts_with(&out),
                "{format:?} cut at {cut}: decoded bytes are not a prefix of the payload"
            );
        }
        check_index(out, max);
    } else {
        let mut out = Vec::new();
        let _ = decode_into(format, payload, &mut out);
        out.truncate(1 << 16);
        check_index(out, max);
    }
});
