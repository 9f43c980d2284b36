//! The cost model: each side's estimated milliseconds, and the unit each
//! GPU kernel's calibrated speed is kept in (bytes, or bytes x the
//! automaton's or the bitap chain's updates a byte for tier 2's kernels;
//! the one place that pricing lives).

use super::{Calibration, PlanInput};
use crate::kernel::Kernel;
use crate::query::Query;
use crate::results::Want;

/// CPU time to verify one candidate line of tier 1 with the query's own
/// matcher, ms: the per-line cost `cpu_estimate` uses for a line a regex
/// re-checks (~0.4 us on the 2-core build machine, 2026-11-24).
pub const VERIFY_MS_PER_LINE: f64 = 4e-4;

/// The CPU's time for `input`, in ms: the corpus scanned at the calibrated
/// single-literal speed times the chosen matcher's factor (`Matcher::speed`),
/// the per-thread efficiency, a cost per matching line (~0.1 us to find the
/// line and resume; ~0.2 us when a candidate line is verified by a regex),
/// and for line output one newline-counting pass for line ids (~20 GB/s).
pub fn cpu_estimate(input: &PlanInput<'_>) -> f64 {
    let bytes = input.bytes as f64;
    let threads = input.threads.max(1) as f64;
    let m = &input.query.matcher;
    let gbps = cpu_gbps(input);
    let lines = input.lines.unwrap_or((bytes / 200.0) as u64) as f64;
    // A regex that finds each match itself pays no second check: 1M
    // matching lines of `\d{4}-\d\d` ran in 126 ms on the H100 machine's
    // CPU (80 ms on the build machine), 97 ms of it the scan at 2 GB/s:
    // 29 ms for the matches (5e-5 a line until the 2026-11-26
    // measurement at `19e3983` put the regex's estimate at 2.1x its run
    // on that day's build machine).
    // A verified line: `-w admin`'s 14,730 lines took 2.3-3.2 ms over the
    // scan's estimate on an AMD EPYC build machine (0.15-0.22 us a line;
    // 2026-11-26, one thread); at 0.4 us the shape was estimated at
    // 1.9-2.1x its run there and 1.9-2.0x on the H100 host's Xeon.
    let per_line_ms = match &**m {
        crate::cpu::matcher::Matcher::Regex { .. } => 3e-5,
        _ if m.verifies() => 2e-4,
        _ => 1e-4,
    };
    let matches = input.sample.density() * lines * per_line_ms / threads;
    let ids = match input.want {
        Want::Lines if input.line_ids || input.query.invert() => bytes / 20e9 * 1e3,
        _ => 0.0,
    };
    bytes / (gbps * 1e9) * 1e3 + matches + ids + fault_ms(input)
}

/// The CPU's time mapping a lazily mapped corpus's pages as it reads
/// them, in ms ([`SampleStats::fault_gbps`]; 0 when none are left to
/// map): the same for every matcher, so added to the scan, not folded
/// into its speed (folded in, the `-i` literals were estimated at 2x
/// their run on the build machine).
pub(super) fn fault_ms(input: &PlanInput<'_>) -> f64 {
    let g = input.sample.fault_gbps;
    if g > 0.0 {
        let threads = input.threads.max(1) as f64;
        input.bytes as f64 / (g * 1e9) * 1e3 / (1.0 + 0.8 * (threads - 1.0))
    } else {
        0.0
    }
}

/// The CPU's speed for `input`, GB/s on all its threads: the calibrated
/// single-literal speed times the matcher's factor (`Matcher::speed`) and
/// the per-thread efficiency (~0.8 per extra thread, measured). A fuzzy
/// matcher's speed is the sample's, when timed: its pigeonhole pieces
/// decide it (H100 machine, 1 thread, 194 MB, 2026-11-25: 2.4 GB/s for
/// `--fuzzy 3` of a 38-byte pattern, 9-byte pieces; 0.16 GB/s for `-i
/// --fuzzy 1 fr33m0ney`), which no fixed factor fits.
pub(super) fn cpu_gbps(input: &PlanInput<'_>) -> f64 {
    let threads = input.threads.max(1) as f64;
    let m = &input.query.matcher;
    // The finder's speed on this corpus when the sample measured it
    // (`SampleStats::cpu_speed`: a rare byte or pair), else the matcher's.
    let speed = match input.sample.cpu_speed {
        s if s > 0.0 => s,
        _ => m.speed(),
    };
    let one = match (&**m, input.sample.cpu_gbps()) {
        (crate::cpu::matcher::Matcher::Fuzzy(_), Some(g)) => g,
        _ => cpu_base(input).0 * speed,
    };
    one * (1.0 + 0.8 * (threads - 1.0))
}

/// The single-literal speed the matchers' factors multiply, GB/s on one
/// thread, and where it comes from (for `--explain`): this machine's
/// [`scan_probe`] over the rare byte's factor when measured, else the
/// calibration's (8 GB/s by default: the H100 machine's Xeon, one thread;
/// refined by recorded runs).
pub fn cpu_base(input: &PlanInput<'_>) -> (f64, String) {
    let probe = input.sample.scan_gbps;
    let rare = crate::cpu::RARE_BYTE_SPEED;
    if probe > 0.0 {
        let base = probe / rare;
        let faults = match input.sample.fault_gbps {
            g if g > 0.0 => format!("; page faults of the lazy map {g:.1} GB/s"),
            _ => String::new(),
        };
        return (
            base,
            format!("{base:.1} GB/s a thread for a literal (probe: memchr at {probe:.1} GB/s over 1 MiB of the corpus, / {rare}){faults}"),
        );
    }
    let c = input.calibration;
    let from = if c.samples == 0 {
        "default: the H100 machine's Xeon"
    } else {
        "calibrated"
    };
    (
        c.cpu_gbps,
        format!("{:.1} GB/s a thread for a literal ({from})", c.cpu_gbps),
    )
}

/// The bitap kernel's work per corpus byte for `q`, in 32-bit state-word
/// updates: K + 1 rows of the chain's words, times 4.5 when the chain
/// spans more than one word (its state arrays then leave registers). On
/// the H100 (194 MB, 2026-11-25) one-word chains ran at 265-291 GB/s x
/// units (K = 1, 2), the 38-byte `--fuzzy 3` chain (2 words, 8 units) at
/// 60: 4.5x slower per unit. `None` when `q` has no bitap chain. The
/// calibration keeps bitap's speed in bytes x units per second, so that a
/// one-word run does not make a long chain look fast (the 38-byte
/// pattern went to `bitap`, 25.8 ms, against 6.8 ms on the CPU).
pub fn bitap_units(q: &Query) -> Option<f64> {
    let b = crate::query::bitap::Bitap::for_query(q).ok()?;
    let spill = if b.words > 1 { 4.5 } else { 1.0 };
    Some(f64::from(b.k + 1) * b.words as f64 * spill)
}

/// The cost of a byte of `q`'s automaton on the `shift-and` kernel, in
/// units of the linear path's (`run_linear`: the extended shift-and form,
/// no look-around groups, one or two state words): 1, else 2 (the step
/// with groups or follow tables). On the H100 (194 MB, 2026-11-25, tier 2
/// over every line) the linear path's regexes took 0.54-0.67 ms, the
/// others 0.82-1.95 (1.3-3.2x, median 1.9: `\b(GET|POST) /api/v\d/`
/// 1.26, `user=u1\d*7 ` 1.30). The calibration keeps `shift-and`'s speed
/// in bytes x units per second, as bitap's ([`bitap_units`]): with one
/// rate for every automaton a linear one made the others look fast, and
/// tier 1 chose the denser literal ` /api/v` (17.5% of lines, 0.34 ms)
/// over `GET /api/v`, `POST /api/v` (12.2%, 0.28 ms; measured 2026-11-25 at `ef5693c`).
pub fn shift_and_units(q: &Query) -> f64 {
    match crate::support::shift_and_support(q) {
        Ok(a) if a.linear_path() => 1.0,
        _ => 2.0,
    }
}

/// `q`'s units a corpus byte on `kernel`: tier 2's kernels keep their
/// calibrated speed per unit ([`bitap_units`], [`shift_and_units`]), so
/// a run is recorded as its bytes times its units; every other kernel is
/// priced per byte (1).
pub fn units(kernel: Kernel, q: &Query) -> f64 {
    match kernel {
        Kernel::Bitap => bitap_units(q).unwrap_or(1.0),
        Kernel::ShiftAnd => shift_and_units(q),
        _ => 1.0,
    }
}

/// True when `kernel`'s calibrated speed is kept per unit ([`units`]),
/// not per byte: its throughput is then compared as it is, not through a
/// pass's time.
pub fn per_unit(kernel: Kernel) -> bool {
    matches!(kernel, Kernel::ShiftAnd | Kernel::Bitap)
}

/// A per-unit kernel's speed before any run, bytes x units per second:
/// `shift-and` an eighth of the literal kernels' (brute-line, also a
/// thread per line, ran at ~1/8 of scan on the H100), `bitap` half
/// (265-291 GB/s x units on the H100 against `scan`'s ~500). `None` for
/// the kernels priced per byte.
pub(crate) fn unit_default_gbps(c: &Calibration, kernel: Kernel) -> Option<f64> {
    match kernel {
        Kernel::ShiftAnd => Some(c.best_kernel().1 / 8.0),
        Kernel::Bitap => Some(c.best_kernel().1 / 2.0),
        _ => None,
    }
}

/// A tier-2 kernel's speed for `q`, GB/s of corpus: its calibrated speed
/// per unit (before any run, [`unit_default_gbps`]) over `q`'s [`units`].
pub fn tier2_gbps(c: &Calibration, kernel: Kernel, q: &Query) -> f64 {
    let g = c.gpu_gbps.get(&kernel).copied();
    let g = g.or_else(|| unit_default_gbps(c, kernel));
    g.unwrap_or_else(|| c.best_kernel().1) / units(kernel, q)
}
