//! `-z`: compressed inputs, recognised by their magic bytes (the name only
//! where a format has no magic), decoded in memory by pure-Rust decoders
//! (no C toolchain, and the library still builds for wasm32).
//!
//! A stream cut short (a log copied while it was written, a download that
//! stopped) keeps what was decoded before the cut, as `zcat` prints it: the
//! caller searches that prefix and reports the cut. A file whose magic says
//! "compressed" in a format we cannot decode is an error, never searched as
//! binary noise.

use std::io::{self, BufRead, Read};
use std::path::Path;

/// A compression format we recognise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// gzip, possibly several members (`cat a.gz b.gz`).
    Gzip,
    /// bzip2, possibly several streams (`pbzip2`).
    Bzip2,
    /// xz, possibly several streams.
    Xz,
    /// The legacy `.lzma` container (`xz --format=lzma`). It has no magic:
    /// recognised by its name only.
    Lzma,
    /// lzip (`.lz`).
    Lzip,
    /// Zstandard, possibly several frames; skippable frames are skipped.
    Zstd,
    /// LZ4 frame format (what the `lz4` command writes).
    Lz4,
}

impl Format {
    /// The format's usual name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Bzip2 => "bzip2",
            Format::Xz => "xz",
            Format::Lzma => "lzma",
            Format::Lzip => "lzip",
            Format::Zstd => "zstd",
            Format::Lz4 => "lz4",
        }
    }
}

/// The bytes `detect` needs to see (the longest magic).
pub const MAGIC_LEN: usize = 6;

/// What the first bytes and the name of a file say about its compression.
#[derive(Debug, PartialEq, Eq)]
pub enum Detected {
    /// Not compressed (as far as we can tell): search the bytes as they are.
    Plain,
    /// Compressed in a format we decode.
    Compressed(Format),
    /// Compressed in a format we cannot decode, or named as compressed
    /// without that format's magic: the message says which.
    Unsupported(String),
}

/// Recognises the compression of a file from its first bytes (`head`, at
/// least [`MAGIC_LEN`] of them unless the file is shorter) and its name.
/// The magic decides; the name only for `.lzma` (no magic) and to refuse a
/// file named `.gz` (etc.) that is not.
pub fn detect(head: &[u8], path: &Path) -> Detected {
    let magic: &[(&[u8], Result<Format, &str>)] = &[
        (b"\x1f\x8b", Ok(Format::Gzip)),
        (b"BZh", Ok(Format::Bzip2)),
        (b"\xfd7zXZ\x00", Ok(Format::Xz)),
        (b"LZIP", Ok(Format::Lzip)),
        (b"\x28\xb5\x2f\xfd", Ok(Format::Zstd)),
        (b"\x04\x22\x4d\x18", Ok(Format::Lz4)),
        (b"\x1f\x9d", Err("compress (.Z)")),
        (b"\x02\x21\x4c\x18", Err("legacy lz4 (lz4 -l)")),
    ];
    for (m, f) in magic {
        if head.starts_with(m) {
            return match f {
                Ok(f) => Detected::Compressed(*f),
                Err(what) => Detected::Unsupported(format!(
                    "compressed with {what}, which logsieve -z cannot decode"
                )),
            };
        }
    }
    // The zstd skippable frames (0x184D2A50..=0x184D2A5F, little endian).
    if head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18] {
        return Detected::Compressed(Format::Zstd);
    }
    if head.is_empty() {
        // An empty file is an empty log, whatever its name.
        return Detected::Plain;
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let named = match ext.as_str() {
        "gz" | "tgz" => Format::Gzip,
        "bz2" | "tbz2" | "tbz" => Format::Bzip2,
        "xz" | "txz" => Format::Xz,
        "lzma" => return Detected::Compressed(Format::Lzma),
        "lz" => Format::Lzip,
        "zst" | "zstd" => Format::Zstd,
        "lz4" => Format::Lz4,
        "z" if path.extension().is_some_and(|e| e == "Z") => {
            return Detected::Unsupported(
                "compressed with compress (.Z), which logsieve -z cannot decode".into(),
            )
        }
        "br" => {
            return Detected::Unsupported(
                "compressed with brotli (.br), which logsieve -z cannot decode".into(),
            )
        }
        _ => return Detected::Plain,
    };
    Detected::Unsupported(format!(
        "named .{ext} but not {} data (no {} magic bytes)",
        named.name(),
        named.name()
    ))
}

/// Decodes all of `src` (in `format`) and appends it to `out`. On error,
/// `out` keeps every byte decoded before it (the readable prefix) and the
/// error is returned; the caller decides what a prefix is worth.
pub fn decode_into<R: Read>(format: Format, src: R, out: &mut Vec<u8>) -> io::Result<()> {
    let src = io::BufReader::with_capacity(1 << 16, src);
    let res = match format {
        Format::Gzip => flate2::bufread::MultiGzDecoder::new(src).read_to_end(out),
        Format::Bzip2 => bzip2::bufread::MultiBzDecoder::new(src).read_to_end(out),
        Format::Xz => lzma_rust2::XzReader::new(src, true).read_to_end(out),
        Format::Lzma => lzma_rust2::LzmaReader::new_mem_limit(src, u32::MAX, None)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?
            .read_to_end(out),
        Format::Lzip => lzma_rust2::LzipReader::new(src).read_to_end(out),
        Format::Zstd => zstd_frames(src, out).map(|_| 0),
        Format::Lz4 => lz4_frames(src, out).map(|_| 0),
    };
    res.map(|_| ()).map_err(cut_or_corrupt)
}

/// The error with kind `UnexpectedEof` when the input ran out, wherever
/// the decoder put that fact: ruzstd wraps the io error of its source in
/// its own (kind `Other`), sometimes only in the message.
fn cut_or_corrupt(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return e;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    let mut cut = false;
    while let Some(c) = cause {
        cut |= c
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof);
        cause = c.source();
    }
    if cut || e.to_string().contains("UnexpectedEof") {
        io::Error::new(io::ErrorKind::UnexpectedEof, e.to_string())
    } else {
        e
    }
}

/// Every frame of a zstd stream (`StreamingDecoder` decodes one). ruzstd
/// keeps the last window (up to a few MiB) of a frame until the frame ends,
/// and has no call that hands it over early: from a cut frame, the prefix
/// we get stops a window short of the cut.
fn zstd_frames<R: BufRead>(mut src: R, out: &mut Vec<u8>) -> io::Result<()> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    use ruzstd::decoding::StreamingDecoder;
    let invalid = |e: FrameDecoderError| io::Error::new(io::ErrorKind::InvalidData, e.to_string());
    while !src.fill_buf()?.is_empty() {
        match StreamingDecoder::new(&mut src) {
            Ok(mut frame) => {
                frame.read_to_end(out)?;
            }
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                let skipped = io::copy(&mut (&mut src).take(u64::from(length)), &mut io::sink())?;
                if skipped < u64::from(length) {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            // A header cut short is an end of file, not bad data.
            Err(FrameDecoderError::ReadFrameHeaderError(
                ReadFrameHeaderError::MagicNumberReadError(e)
                | ReadFrameHeaderError::FrameDescriptorReadError(e),
            )) => return Err(e),
            Err(e) => return Err(invalid(e)),
        }
    }
    Ok(())
}

/// A reader that remembers whether its source ran dry.
struct EofFlag<R> {
    inner: R,
    hit_eof: bool,
}

impl<R: Read> Read for EofFlag<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.hit_eof = true;
        }
        Ok(n)
    }
}

/// Every frame of an lz4 stream. lz4_flex's decoder ends quietly when its
/// input ends at a block boundary, and at the end of each frame: a frame
/// that ran out of input before its end mark is a cut stream.
fn lz4_frames<R: BufRead>(mut src: R, out: &mut Vec<u8>) -> io::Result<()> {
    while !src.fill_buf()?.is_empty() {
        let mut frame = lz4_flex::frame::FrameDecoder::new(EofFlag {
            inner: &mut src,
            hit_eof: false,
        });
        frame.read_to_end(out)?;
        if frame.get_ref().hit_eof {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A log of `n` numbered lines, varied enough not to compress to
    /// nothing (the truncation tests need several blocks).
    fn log(n: usize) -> Vec<u8> {
        let mut v = Vec::new();
        let mut rng = crate::gen::SplitMix64(7);
        for i in 0..n {
            let x = rng.next_u64();
            writeln!(
                v,
                "2026-11-24T10:{:02}:00Z host{} line {i} id={x:016x}",
                i % 60,
                x % 7
            )
            .unwrap();
        }
        v
    }

    fn encode(format: Format, data: &[u8]) -> Vec<u8> {
        match format {
            Format::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Bzip2 => {
                let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(1));
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Xz => {
                let mut e =
                    lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1))
                        .unwrap();
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Lzma => {
                let mut e = lzma_rust2::LzmaWriter::new_use_header(
                    Vec::new(),
                    &lzma_rust2::LzmaOptions::with_preset(1),
                    Some(data.len() as u64),
                )
                .unwrap();
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Lzip => {
                let mut e = lzma_rust2::LzipWriter::new(
                    Vec::new(),
                    lzma_rust2::LzipOptions::with_preset(1),
                );
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Format::Zstd => {
                ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
            }
            Format::Lz4 => {
                let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
        }
    }

    const ALL: [(Format, &str); 7] = [
        (Format::Gzip, "a.log.gz"),
        (Format::Bzip2, "a.log.bz2"),
        (Format::Xz, "a.log.xz"),
        (Format::Lzma, "a.log.lzma"),
        (Format::Lzip, "a.log.lz"),
        (Format::Zstd, "a.log.zst"),
        (Format::Lz4, "a.log.lz4"),
    ];

    #[test]
    fn every_format_round_trips_and_is_detected() {
        let data = log(3000);
        for (f, name) in ALL {
            let enc = encode(f, &data);
            let head = &enc[..enc.len().min(MAGIC_LEN)];
            assert_eq!(
                detect(head, Path::new(name)),
                Detected::Compressed(f),
                "{name}"
            );
            if f != Format::Lzma {
                // The magic alone decides, whatever the name.
                assert_eq!(
                    detect(head, Path::new("x.log")),
                    Detected::Compressed(f),
                    "{name}"
                );
            }
            let mut out = Vec::new();
            decode_into(f, &enc[..], &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(out == data, "{name}: round trip differs");
            // An empty input file decodes to nothing and is not an error
            // for `detect` either.
            assert_eq!(detect(b"", Path::new(name)), Detected::Plain);
        }
    }

    #[test]
    fn concatenated_streams_decode_whole() {
        let (a, b) = (log(500), log(700));
        for (f, name) in ALL {
            if f == Format::Lzma {
                continue; // one stream per .lzma file, by definition
            }
            let mut enc = encode(f, &a);
            enc.extend(encode(f, &b));
            let mut out = Vec::new();
            decode_into(f, &enc[..], &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                out == [&a[..], &b[..]].concat(),
                "{name}: concatenation differs"
            );
        }
    }

    #[test]
    fn zstd_skippable_frame_is_skipped() {
        let data = log(100);
        let mut enc = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, b'x', b'y', b'z'];
        enc.extend(encode(Format::Zstd, &data));
        assert_eq!(
            detect(&enc[..MAGIC_LEN], Path::new("a")),
            Detected::Compressed(Format::Zstd)
        );
        let mut out = Vec::new();
        decode_into(Format::Zstd, &enc[..], &mut out).unwrap();
        assert!(out == data);
    }

    /// A stream cut anywhere is an error, and what was decoded before the
    /// cut is a prefix of the original (never garbage).
    #[test]
    fn truncated_streams_keep_a_true_prefix() {
        let data = log(40_000); // ~2.4 MB: several blocks in every format
        for (f, name) in ALL {
            let enc = encode(f, &data);
            let mut longest = 0;
            let cuts = [1, 5, 20, enc.len() - 1].into_iter();
            for keep in cuts.chain((1..24).map(|i| enc.len() * i / 24)) {
                let mut out = Vec::new();
                let r = decode_into(f, &enc[..keep], &mut out);
                assert!(
                    r.is_err(),
                    "{name} cut at {keep} of {}: no error",
                    enc.len()
                );
                assert!(data.starts_with(&out), "{name} cut at {keep}: not a prefix");
                longest = longest.max(out.len());
            }
            assert!(
                longest > 0,
                "{name}: no prefix at all from 90% of the stream"
            );
        }
    }

    #[test]
    fn unsupported_and_misnamed_files_are_named() {
        let cases: [(&[u8], &str, &str); 5] = [
            (b"\x1f\x9d\x90abc", "a.log.Z", "compress"),
            (b"\x1f\x9d\x90abc", "a.log", "compress"),
            (b"\x02\x21\x4c\x18xx", "a.lz4", "legacy lz4"),
            (b"plain text\n", "a.log.gz", "not gzip"),
            (b"\x0b\x02\x80", "a.log.br", "brotli"),
        ];
        for (head, name, want) in cases {
            match detect(head, Path::new(name)) {
                Detected::Unsupported(m) => assert!(m.contains(want), "{name}: {m}"),
                d => panic!("{name}: {d:?}"),
            }
        }
        assert_eq!(detect(b"plain", Path::new("a.log.1")), Detected::Plain);
        assert_eq!(detect(b"plain", Path::new("a.log")), Detected::Plain);
    }
}
