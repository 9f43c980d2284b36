//! A deterministic generator of realistic logs, for demos, tests and
//! benchmarks.
//!
//! The output mixes application lines (ISO timestamps, hosts, levels,
//! services, request ids, user ids, client IPs), Apache-style access lines,
//! syslog lines, and Java stack traces (an `ERROR` line followed by an
//! exception line and `\tat ...` frames). Lines average about 200 bytes.
//! Entries span one day starting at [`GenOptions::start_epoch`] in time order.
//!
//! The same `(lines, seed)` always gives the same bytes, on every platform:
//! the generator uses its own SplitMix64 (not `rand`, whose streams may change
//! between versions) and fixed-size blocks of lines, each seeded from the
//! seed and its block number, so blocks can be made in parallel.
//!
//! Token frequencies, per line, roughly (the `gen` tests check them):
//!
//! | token                  | share of lines |
//! |------------------------|----------------|
//! | `ERROR_503`            | ~0.07%         |
//! | `192.168.1.`           | ~1%            |
//! | `error`                | ~2%            |
//! | `NullPointerException` | ~0.17%         |
//! | `x`                    | ~25%           |

use std::io::Write;

use rayon::prelude::*;

/// Generator settings.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// Number of lines (stack-trace frames count as lines).
    pub lines: u64,
    /// Seed: the same seed gives the same output.
    pub seed: u64,
    /// Unix time of the first entry.
    pub start_epoch: i64,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            lines: 1_000_000,
            seed: 42,
            // 2026-11-20T00:00:00Z
            start_epoch: 1_795_132_800,
        }
    }
}

/// SplitMix64: tiny, fast, and stable forever (the generator's stream, and
/// the benchmarks' pattern sets: the data must not depend on a crate
/// version).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const BLOCK: u64 = 4096;

const SERVICES: &[&str] = &[
    "payments",
    "orders",
    "auth",
    "search",
    "catalog",
    "gateway",
    "billing",
    "inventory",
    "shipping",
    "profile",
];
const METHODS: &[&str] = &["GET", "GET", "GET", "POST", "PUT", "DELETE"];
const PATHS: &[&str] = &[
    "/api/v2/orders",
    "/api/v2/users",
    "/api/v1/login",
    "/static/app.js",
    "/healthz",
    "/api/v2/cart/items",
    "/api/v1/search",
    "/images/logo.png",
    "/api/v2/payments/charge",
];
const AGENTS: &[&str] = &[
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Gecko/20100101 Firefox/121.0",
    "curl/8.4.0",
    "Go-http-client/1.1",
    "python-requests/2.31.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 Version/17.1 Safari/605.1.15",
];
const INFO_MSGS: &[&str] = &[
    "request completed",
    "cache refreshed for tenant",
    "user session started",
    "order accepted for processing",
    "payment authorised by upstream provider",
    "health check passed",
    "config reloaded from store",
    "connection pool resized",
];
const WARN_MSGS: &[&str] = &[
    "slow response from upstream",
    "retrying request after timeout",
    "queue depth above threshold",
    "deprecated API version used by client",
];
const ERROR_MSGS: &[&str] = &[
    "upstream returned ERROR_502 bad gateway",
    "database deadlock detected, transaction rolled back",
    "failed to write audit record",
    "request failed with status 500",
];
const EXCEPTIONS: &[&str] = &[
    "java.lang.IllegalStateException: pool exhausted",
    "java.util.concurrent.TimeoutException: deadline exceeded",
    "java.io.IOException: Connection reset by peer",
];
const FRAMES: &[&str] = &[
    "com.acme.payments.ChargeService.charge(ChargeService.java:214)",
    "com.acme.orders.OrderController.create(OrderController.java:88)",
    "com.acme.common.http.Client.execute(Client.java:131)",
    "org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
];

struct Clock {
    start: i64,
    total: u64,
}

impl Clock {
    /// Seconds and milliseconds of line `i`: one day spread evenly.
    fn at(&self, i: u64) -> (i64, u32) {
        let ms = (i as u128 * 86_400_000 / self.total.max(1) as u128) as i64;
        (self.start + ms / 1000, (ms % 1000) as u32)
    }
}

/// Civil date (year, month, day) from days since 1970-01-01 (one
/// implementation, shared with the timestamp parser).
pub use crate::stats::time::civil_from_days;

/// The reference queries over generated logs (all fixed strings): the
/// demo's, `logsieve bench`'s and the GPU benchmarks'.
pub const REFERENCE_QUERIES: [&str; 5] = [
    "ERROR_503",
    "192.168.1",
    "error",
    "NullPointerException",
    "x",
];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn ip(r: &mut SplitMix64, out: &mut Vec<u8>) {
    // ~1% of addresses in 192.168.1.0/24 (the demo's IP-prefix query).
    if r.chance(10) {
        let _ = write!(out, "192.168.1.{}", r.below(254) + 1);
    } else if r.chance(500) {
        let _ = write!(
            out,
            "10.{}.{}.{}",
            r.below(16),
            r.below(256),
            r.below(254) + 1
        );
    } else {
        let _ = write!(
            out,
            "{}.{}.{}.{}",
            r.below(200) + 11,
            r.below(256),
            r.below(256),
            r.below(254) + 1
        );
    }
}

fn hex(r: &mut SplitMix64, n: usize, out: &mut Vec<u8>) {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut v = r.next_u64();
    for i in 0..n {
        if i % 16 == 15 {
            v = r.next_u64();
        }
        out.push(H[(v & 15) as usize]);
        v >>= 4;
    }
}

/// Writes lines `first .. first + count` of the stream into `out`.
fn block(opts: &GenOptions, first: u64, count: u64, out: &mut Vec<u8>) {
    let mut r = SplitMix64(opts.seed ^ (first / BLOCK).wrapping_mul(0xA076_1D64_78BD_642F));
    let clock = Clock {
        start: opts.start_epoch,
        total: opts.lines,
    };
    let mut i = first;
    let end = first + count;
    while i < end {
        let (secs, ms) = clock.at(i);
        let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
        let sod = secs.rem_euclid(86_400);
        let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
        let host = r.below(40) + 1;
        let kind = r.below(1000);
        if kind < 250 {
            // Apache combined access log.
            ip(&mut r, out);
            let status = match r.below(1000) {
                0 => "503",
                1..=20 => "404",
                21..=30 => "500",
                31..=60 => "302",
                _ => "200",
            };
            let _ = writeln!(
                out,
                " - - [{d:02}/{}/{y}:{hh:02}:{mm:02}:{ss:02} +0000] \"{} {}/{} HTTP/1.1\" {status} {} \"https://shop.acme.example/{}\" \"{}\" rt={}.{:03}",
                MONTHS[mo as usize - 1],
                r.pick(METHODS),
                r.pick(PATHS),
                r.below(100_000),
                r.below(60_000) + 200,
                r.pick(SERVICES),
                r.pick(AGENTS),
                r.below(3),
                r.below(1000)
            );
            i += 1;
            continue;
        }
        if kind < 300 {
            // syslog.
            let _ = write!(
                out,
                "{} {d:2} {hh:02}:{mm:02}:{ss:02} node-{host:02} sshd[{}]: ",
                MONTHS[mo as usize - 1],
                r.below(60_000) + 1000
            );
            if r.chance(300) {
                let _ = write!(out, "Failed password for invalid user admin from ");
            } else {
                let _ = write!(out, "Accepted publickey for deploy from ");
            }
            ip(&mut r, out);
            let _ = writeln!(out, " port {} ssh2", r.below(60_000) + 1024);
            i += 1;
            continue;
        }
        let lvl = r.below(1000);
        let (level, msg) = if lvl < 20 {
            ("ERROR", r.pick(ERROR_MSGS))
        } else if lvl < 110 {
            ("WARN", r.pick(WARN_MSGS))
        } else if lvl < 250 {
            ("DEBUG", "cache lookup")
        } else {
            ("INFO", r.pick(INFO_MSGS))
        };
        let svc = r.pick(SERVICES);
        let _ = write!(
            out,
            "{y}-{mo:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{ms:03}Z web-{host:02} {level:<5} [svc-{svc}] req="
        );
        hex(&mut r, 16, out);
        out.extend_from_slice(b" trace=");
        hex(&mut r, 32, out);
        let _ = write!(out, " user=u{} client=", r.below(90_000) + 10_000);
        ip(&mut r, out);
        // ~0.1% of lines carry the rare error code; ~3% say "error".
        let code = r.below(1000);
        if code == 0 {
            let _ = write!(
                out,
                " status=ERROR_503 msg=\"service unavailable, upstream error\""
            );
        } else if code < 30 {
            let _ = write!(out, " msg=\"{msg}; error count={}\"", r.below(50));
        } else {
            let _ = write!(out, " msg=\"{msg}\"");
        }
        let _ = writeln!(
            out,
            " latency_ms={} bytes={}",
            r.below(2000),
            r.below(1 << 20)
        );
        i += 1;
        // ~1 in 200 lines starts a stack trace (5 more lines).
        if level == "ERROR" && r.chance(250) && i + 5 < end {
            if r.chance(500) {
                let _ = writeln!(
                    out,
                    "java.lang.NullPointerException: Cannot invoke \"com.acme.{svc}.Session.user()\" because \"session\" is null"
                );
            } else {
                let _ = writeln!(out, "{}", r.pick(EXCEPTIONS));
            }
            for _ in 0..4 {
                let _ = writeln!(out, "\tat {}", r.pick(FRAMES));
            }
            i += 5;
        }
    }
}

/// Generates the whole stream into memory (in parallel, deterministic).
pub fn generate(opts: &GenOptions) -> Vec<u8> {
    let blocks = opts.lines.div_ceil(BLOCK);
    let parts: Vec<Vec<u8>> = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let first = b * BLOCK;
            let count = BLOCK.min(opts.lines - first);
            let mut out = Vec::with_capacity(count as usize * 210);
            block(opts, first, count, &mut out);
            out
        })
        .collect();
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        let o = GenOptions {
            lines: 20_000,
            seed: 7,
            ..Default::default()
        };
        let a = generate(&o);
        let b = generate(&o);
        assert_eq!(a, b);
        let lines = a.iter().filter(|&&c| c == b'\n').count();
        assert_eq!(lines, 20_000);
        let avg = a.len() / lines;
        assert!((150..260).contains(&avg), "average line {avg} bytes");
        let other = generate(&GenOptions { seed: 8, ..o });
        assert_ne!(a, other);
    }

    #[test]
    fn token_frequencies_are_as_documented() {
        let o = GenOptions {
            lines: 200_000,
            seed: 1,
            ..Default::default()
        };
        let data = generate(&o);
        let share = |tok: &[u8]| {
            let f = memchr::memmem::Finder::new(tok);
            let n = data
                .split(|&c| c == b'\n')
                .filter(|l| f.find(l).is_some())
                .count();
            n as f64 / o.lines as f64
        };
        let e503 = share(b"ERROR_503");
        assert!((0.0003..0.003).contains(&e503), "ERROR_503 {e503}");
        let ip = share(b"192.168.1.");
        assert!((0.005..0.02).contains(&ip), "192.168.1. {ip}");
        let err = share(b"error");
        assert!((0.01..0.06).contains(&err), "error {err}");
        let npe = share(b"NullPointerException");
        assert!((0.0005..0.01).contains(&npe), "NPE {npe}");
        let x = share(b"x");
        assert!((0.15..0.4).contains(&x), "x {x}");
        eprintln!("shares: ERROR_503 {e503} 192.168.1. {ip} error {err} NPE {npe} x {x}");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(1_795_132_800 / 86_400), (2026, 11, 20));
    }
}
