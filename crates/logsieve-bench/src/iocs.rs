//! Indicator lists for the many-literal benchmarks (`multi`,
//! `watchlists`): the indicator-shaped tokens of a corpus, and pattern
//! sets of which a tenth occur.

use std::collections::HashMap;

use logsieve::gen::SplitMix64;

/// Is `t` an indicator-shaped token: an IPv4 address, a hex hash of 16+
/// digits, or a dotted name?
fn ioc_shaped(t: &[u8]) -> bool {
    if t.len() < 7 {
        return false;
    }
    let ip = t.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && t.iter().filter(|&&b| b == b'.').count() == 3;
    let hash = t.len() >= 16 && t.iter().all(|b| b.is_ascii_hexdigit());
    let name = t.contains(&b'.')
        && t.iter().any(|b| b.is_ascii_alphabetic())
        && t.iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'.' || *b == b'-');
    ip || hash || name
}

/// The indicator-shaped tokens of `data` and how many lines hold each,
/// sorted by token.
pub fn token_lines(data: &[u8]) -> Vec<(&[u8], u64)> {
    let mut f: HashMap<&[u8], u64> = HashMap::new();
    for line in data.split(|&b| b == b'\n') {
        let mut seen: Vec<&[u8]> = Vec::new();
        for t in line.split(|&b| matches!(b, b' ' | b'=' | b'"' | b'[' | b']' | b'/' | b',')) {
            if ioc_shaped(t) && !seen.contains(&t) {
                seen.push(t);
                *f.entry(t).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(&[u8], u64)> = f.into_iter().collect();
    v.sort();
    v
}

/// `n` patterns: a tenth real tokens of `freq` (from [`token_lines`]),
/// chosen so that about 1% of `lines` hit, the rest random indicators (IPs,
/// hashes, domains) that do not occur; shuffled, so hits are spread
/// through the list.
pub fn pattern_set(
    n: usize,
    lines: u64,
    freq: &[(&[u8], u64)],
    rng: &mut SplitMix64,
) -> Vec<Vec<u8>> {
    let hits = (n / 10).max(1);
    let target = (lines / 100 / hits as u64).max(1);
    let mut by_fit: Vec<&(&[u8], u64)> = freq.iter().collect();
    by_fit.sort_by_key(|(t, c)| (c.abs_diff(target), *t));
    let mut out: Vec<Vec<u8>> = by_fit.iter().take(hits).map(|(t, _)| t.to_vec()).collect();
    let mut k = 0u64;
    while out.len() < n {
        let r = rng.next_u64();
        k += 1;
        let p = match k % 3 {
            0 => format!(
                "{}.{}.{}.{}",
                r & 0xff,
                (r >> 8) & 0xff,
                (r >> 16) & 0xff,
                (r >> 24) & 0xff
            ),
            1 => format!("{:016x}{:016x}", r, rng.next_u64()),
            _ => format!("x{:08x}-c2.evil{}.example", r as u32, (r >> 40) % 97),
        };
        out.push(p.into_bytes());
    }
    for i in (1..out.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        out.swap(i, j);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenth_of_a_set_occurs() {
        let data = b"a 10.0.0.1 b\nc 10.0.0.1 d evil.example\ne 10.0.0.2\n".repeat(50);
        let freq = token_lines(&data);
        assert_eq!(
            freq,
            vec![
                (&b"10.0.0.1"[..], 100),
                (&b"10.0.0.2"[..], 50),
                (&b"evil.example"[..], 50)
            ]
        );
        let set = pattern_set(20, 150, &freq, &mut SplitMix64(7));
        assert_eq!(set.len(), 20);
        let real = set
            .iter()
            .filter(|p| freq.iter().any(|(t, _)| *t == &p[..]))
            .count();
        assert_eq!(real, 2);
        // The same seed, the same set.
        assert_eq!(set, pattern_set(20, 150, &freq, &mut SplitMix64(7)));
    }
}
