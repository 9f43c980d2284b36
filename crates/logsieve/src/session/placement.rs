//! Placement: where the corpus lives when several devices (and host
//! memory) hold parts of it ([`layout`], decided when the GPUs are
//! attached) and how a request is split across those parts ([`split`]).
//! The routing point ([`super::route`]) re-exports it.

use crate::corpus::Corpus;
use crate::kernel::Kernel;
use crate::planner::Calibration;

/// Where a part of the corpus lives, decided when the GPUs are attached
/// ([`layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Host memory only: the CPU searches it.
    Host,
    /// Resident on device `k` (the session's `k`-th GPU).
    Device(usize),
}

/// A run of lines in one place. Lines are numbered over the whole corpus
/// (the lines of every document, in corpus order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutPart {
    /// Corpus-wide line numbers.
    pub lines: std::ops::Range<u64>,
    /// The corpus bytes of those lines.
    pub bytes: u64,
    /// Where they live.
    pub place: Place,
}

/// The corpus cut at line boundaries into parts, each in one place; the
/// parts tile every line once, in corpus order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The parts, in corpus order.
    pub parts: Vec<LayoutPart>,
}

/// Each document's line starts, and the corpus-wide numbering of lines
/// and bytes ([`Layout`]'s coordinates).
pub(crate) struct LineMap<'a> {
    corpus: &'a Corpus,
    /// Corpus-wide number of each document's first line, plus the total.
    first_line: Vec<u64>,
    /// Corpus-wide offset of each document's first byte, plus the total.
    first_byte: Vec<u64>,
}

impl<'a> LineMap<'a> {
    pub(crate) fn new(corpus: &'a Corpus) -> LineMap<'a> {
        let mut first_line = vec![0];
        let mut first_byte = vec![0];
        for d in corpus.docs() {
            first_line.push(first_line.last().copied().unwrap_or(0) + d.lines().len());
            first_byte.push(first_byte.last().copied().unwrap_or(0) + d.data().len() as u64);
        }
        LineMap {
            corpus,
            first_line,
            first_byte,
        }
    }

    /// Lines in the corpus.
    pub(crate) fn total_lines(&self) -> u64 {
        self.first_line.last().copied().unwrap_or(0)
    }

    /// Corpus-wide byte offset of corpus-wide line `g` (the total at the
    /// end).
    fn byte_of(&self, g: u64) -> u64 {
        let d = self
            .first_line
            .partition_point(|&f| f <= g)
            .saturating_sub(1);
        if d >= self.corpus.docs().len() {
            return self.first_byte.last().copied().unwrap_or(0);
        }
        let doc = &self.corpus.docs()[d];
        let local = g - self.first_line[d];
        let at = doc.lines().starts()[local as usize].min(doc.data().len() as u64);
        self.first_byte[d] + at
    }

    /// Bytes of corpus-wide lines `r`.
    pub(crate) fn bytes(&self, r: &std::ops::Range<u64>) -> u64 {
        self.byte_of(r.end) - self.byte_of(r.start)
    }

    /// Corpus-wide lines `r` as (document, lines in it), empty ones left
    /// out.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn doc_lines(&self, r: &std::ops::Range<u64>) -> Vec<(usize, std::ops::Range<u64>)> {
        let mut out = Vec::new();
        for d in 0..self.corpus.docs().len() {
            let (a, b) = (self.first_line[d], self.first_line[d + 1]);
            let lo = r.start.max(a);
            let hi = r.end.min(b);
            if lo < hi {
                out.push((d, lo - a..hi - a));
            }
        }
        out
    }

    /// Corpus-wide lines `r` as (document, bytes in it).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn doc_bytes(&self, r: &std::ops::Range<u64>) -> Vec<(usize, std::ops::Range<u64>)> {
        self.doc_lines(r)
            .into_iter()
            .map(|(d, l)| {
                let doc = &self.corpus.docs()[d];
                let len = doc.data().len() as u64;
                let st = doc.lines().starts();
                (
                    d,
                    st[l.start as usize].min(len)..st[l.end as usize].min(len),
                )
            })
            .collect()
    }
}

/// GPU memory, in bytes, that `bytes` of corpus in `lines` lines take
/// when resident (`gpu/upload.rs`): the bytes themselves (rounded, plus
/// padding per segment), line offsets (4 bytes a line), block hints (4
/// bytes per 64), two bit sets and their readback (3 bits a line), and
/// brute-byte's first append buffer (256 KiB, per segment). The
/// signatures (16 bytes a line) are not counted: built only when the
/// `signature` kernel runs. `tests/multi_gpu.rs` checks this against
/// `GpuCorpus::buffers`.
pub fn resident_cost(bytes: u64, lines: u64) -> u64 {
    bytes + 4 * (lines + 1) + 4 * (bytes / 64 + 2) + (3 * lines).div_ceil(8) + (256 << 10) + 512
}

/// Decides where each line of `corpus` lives when `devices` GPUs are
/// attached: with a `budget` of GPU memory (all devices together; `None`:
/// no limit), the lines that fit ([`resident_cost`]) are resident, the
/// newest ones (the corpus's last lines) with [`Newest`](crate::gpu::Placement)
/// placement or the oldest, and the rest stay in host memory. The
/// resident lines are cut at line boundaries into one shard per device,
/// in proportion to `weights` (each device's memory where known; equal
/// weights otherwise), by bytes.
pub fn layout(
    corpus: &Corpus,
    devices: usize,
    weights: Option<&[f64]>,
    budget: Option<u64>,
    newest: bool,
) -> Layout {
    let map = LineMap::new(corpus);
    let total = map.total_lines();
    let cost = |r: std::ops::Range<u64>| resident_cost(map.bytes(&r), r.end - r.start);
    // The longest run of lines at the newest (or oldest) end that fits.
    let fits = |n: u64| {
        let r = if newest { total - n..total } else { 0..n };
        budget.is_none_or(|b| cost(r) <= b)
    };
    let (mut lo, mut hi) = (0u64, total);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let resident = lo;
    let (host, gpu) = if newest {
        (0..total - resident, total - resident..total)
    } else {
        (resident..total, 0..resident)
    };
    let mut parts = Vec::new();
    let mut push = |lines: std::ops::Range<u64>, place| {
        if !lines.is_empty() {
            parts.push(LayoutPart {
                bytes: map.bytes(&lines),
                lines,
                place,
            });
        }
    };
    if !newest {
        // Oldest on the GPUs: their shards come first.
    } else {
        push(host.clone(), Place::Host);
    }
    let n = devices.max(1);
    let w: Vec<f64> = match weights {
        Some(w) if w.len() == n && w.iter().all(|&x| x > 0.0) => w.to_vec(),
        _ => vec![1.0; n],
    };
    let wsum: f64 = w.iter().sum();
    let (g0, gbytes) = (map.byte_of(gpu.start), map.bytes(&gpu));
    let mut at = gpu.start;
    let mut acc = 0.0;
    for (k, wk) in w.iter().enumerate() {
        acc += wk;
        let end = if k + 1 == n {
            gpu.end
        } else {
            // The first line starting at or after the byte target.
            let target = g0 + (gbytes as f64 * acc / wsum) as u64;
            let (mut a, mut b) = (at, gpu.end);
            while a < b {
                let m = (a + b) / 2;
                if map.byte_of(m) < target {
                    a = m + 1;
                } else {
                    b = m;
                }
            }
            a
        };
        push(at..end, Place::Device(k));
        at = end;
    }
    if !newest {
        push(host, Place::Host);
    }
    Layout { parts }
}

/// Who searches each part of a [`Layout`] for one request, and the
/// estimates that chose it.
#[derive(Clone, Debug)]
pub struct Split {
    /// Each part, in corpus order, with who searches it: `Some(k)` device
    /// `k`, `None` the CPU.
    pub parts: Vec<(LayoutPart, Option<usize>)>,
    /// Estimated CPU time for its parts, ms.
    pub cpu_ms: f64,
    /// Estimated time of the slowest device, ms.
    pub gpu_ms: f64,
    /// What happened to devices (lost, failed upload), for the report.
    pub notes: Vec<String>,
}

impl Split {
    /// The split in one line, for `--explain` and the report.
    pub fn summary(&self) -> String {
        let mb = |b: u64| b as f64 / 1e6;
        let mut gpu = Vec::new();
        let mut cpu_bytes = 0;
        for (p, on) in &self.parts {
            match on {
                Some(k) => gpu.push(format!("device {k} {:.1} MB", mb(p.bytes))),
                None => cpu_bytes += p.bytes,
            }
        }
        let mut s = format!(
            "split: {}{}CPU {:.1} MB (estimates: GPUs {:.3} ms, CPU {:.3} ms)",
            gpu.join(", "),
            if gpu.is_empty() { "" } else { ", " },
            mb(cpu_bytes),
            self.gpu_ms,
            self.cpu_ms
        );
        for n in &self.notes {
            s.push_str("; ");
            s.push_str(n);
        }
        s
    }
}

/// A device as [`split`] sees it.
#[derive(Clone, Debug)]
pub struct DeviceState {
    /// Why it cannot be used (lost device), if so.
    pub lost: Option<String>,
}

/// Decides who searches each part of `layout` for a request on `kernel`,
/// so that the CPU and the GPUs finish together:
///
/// * host parts and the shards of lost devices go to the CPU;
/// * a device `k` holding `B_k` bytes takes `L + B_k / G` ms (`L`: the
///   calibrated GPU latency, `G`: the kernel's throughput), the CPU
///   `H / C` ms for its `H` bytes (`C`: the calibrated per-thread CPU
///   throughput times `1 + 0.8 (threads - 1)`, the planner's measured
///   parallel efficiency); the request ends at the larger of the two.
/// * On automatic routes (`balance`), the devices with the fewest bytes
///   move their shards to the CPU when that lowers the end: with shards of
///   `B` bytes on `n` devices and `H` on the host, the split where both
///   finish together gives the CPU `x = C (L + T / (n G)) / (1 + C / (n G))`
///   of the `T` bytes; the CPU takes whole shards, so the split is the
///   whole-shard assignment closest to it (with a GPU 10-100x the CPU,
///   that is: the host tier alone, and the GPUs idle the rest of the
///   CPU's time).
pub fn split(
    layout: &Layout,
    devices: &[DeviceState],
    calibration: &Calibration,
    kernel: Kernel,
    threads: usize,
    notes: Vec<String>,
    balance: bool,
) -> Split {
    let ms = |bytes: u64, gbps: f64| bytes as f64 / (gbps.max(1e-6) * 1e6);
    let t = threads.max(1) as f64;
    let cpu = calibration.cpu_gbps * (1.0 + 0.8 * (t - 1.0));
    let best = calibration.best_kernel().1;
    let gpu = calibration.gpu_gbps.get(&kernel).copied().unwrap_or(
        // Before any run, a many-literal kernel as the planner scores it.
        if kernel.multi().is_some() {
            best / 10.0
        } else {
            best
        },
    );
    let lat = calibration.gpu_latency_ms;
    let mut notes = notes;
    let mut parts: Vec<(LayoutPart, Option<usize>)> = layout
        .parts
        .iter()
        .map(|p| {
            let on = match p.place {
                Place::Host => None,
                Place::Device(k) => match devices.get(k).and_then(|d| d.lost.as_ref()) {
                    Some(why) => {
                        notes.push(format!("device {k} not used ({why}): its shard on the CPU"));
                        None
                    }
                    None => Some(k),
                },
            };
            (p.clone(), on)
        })
        .collect();
    let times = |parts: &[(LayoutPart, Option<usize>)]| {
        let cpu_bytes: u64 = parts
            .iter()
            .filter(|p| p.1.is_none())
            .map(|p| p.0.bytes)
            .sum();
        let mut per_dev: std::collections::BTreeMap<usize, u64> = Default::default();
        for (p, on) in parts {
            if let Some(k) = on {
                *per_dev.entry(*k).or_default() += p.bytes;
            }
        }
        let g = per_dev
            .values()
            .map(|&b| lat + ms(b, gpu))
            .fold(0.0, f64::max);
        (ms(cpu_bytes, cpu), g)
    };
    // Moving the k smallest devices' shards to the CPU, for every k: the
    // best end wins (one at a time could stop while a larger device still
    // sets the end). Only on automatic routes: `--backend gpu` keeps every
    // shard on its device.
    if balance {
        let mut per_dev: std::collections::BTreeMap<usize, u64> = Default::default();
        for (p, on) in &parts {
            if let Some(k) = on {
                *per_dev.entry(*k).or_default() += p.bytes;
            }
        }
        let mut order: Vec<(usize, u64)> = per_dev.into_iter().collect();
        order.sort_by_key(|&(k, b)| (b, k));
        let end = |p: &[(LayoutPart, Option<usize>)]| {
            let (c, g) = times(p);
            c.max(g)
        };
        let mut best = (end(&parts), parts.clone());
        let mut moved = parts.clone();
        for &(k, _) in &order {
            for p in moved.iter_mut().filter(|p| p.1 == Some(k)) {
                p.1 = None;
            }
            let e = end(&moved);
            if e < best.0 {
                best = (e, moved.clone());
            }
        }
        parts = best.1;
    }
    let (cpu_ms, gpu_ms) = times(&parts);
    Split {
        parts,
        cpu_ms,
        gpu_ms,
        notes,
    }
}
