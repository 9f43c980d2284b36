//! Loki's request parameters: the URL's query string and, for POST, a
//! form-encoded body; times, steps, limits and directions read as Loki
//! reads them (`pkg/loghttp/params.go`).

use std::time::{SystemTime, UNIX_EPOCH};

use logsieve::logql::duration_ms;

use super::LokiError;

/// The parameters of one request, in order (`match[]` may repeat).
pub struct Params(Vec<(String, String)>);

/// Loki's `limit` when none is given.
pub const DEFAULT_LIMIT: u64 = 100;
/// Loki's window when no `start`/`since` is given.
pub const DEFAULT_SINCE_NS: i64 = 3_600 * 1_000_000_000;
/// Loki refuses a range query of more points per series.
pub const MAX_POINTS: i64 = 11_000;

/// `forward` (oldest first) or `backward` (newest first, Loki's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Oldest first.
    Forward,
    /// Newest first.
    Backward,
}

impl Params {
    /// The query string and, when the body is form-encoded, the body.
    pub fn new(query: Option<&str>, body: &[u8]) -> Params {
        let mut v = Vec::new();
        for src in [query.unwrap_or("").as_bytes(), body] {
            for pair in src.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
                let (k, val) = match pair.iter().position(|&b| b == b'=') {
                    Some(i) => (&pair[..i], &pair[i + 1..]),
                    None => (pair, &b""[..]),
                };
                v.push((decode(k), decode(val)));
            }
        }
        Params(v)
    }

    /// The last value of `name` (Go's `Form.Get` takes the first; clients
    /// send each once).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// `query`, required.
    pub fn query(&self) -> Result<&str, LokiError> {
        self.get("query")
            .ok_or_else(|| LokiError::bad("query parameter is required (a LogQL query)"))
    }

    /// `limit` (default 100, positive).
    pub fn limit(&self) -> Result<u64, LokiError> {
        match self.get("limit") {
            None => Ok(DEFAULT_LIMIT),
            Some(s) => match s.parse::<i64>() {
                Ok(n) if n > 0 => Ok(n as u64),
                Ok(_) => Err(LokiError::bad("limit must be a positive value")),
                Err(_) => Err(LokiError::bad(format!(
                    "invalid limit {s:?}: expected an integer"
                ))),
            },
        }
    }

    /// `direction` (default backward; case-insensitive as in Loki).
    pub fn direction(&self) -> Result<Direction, LokiError> {
        match self.get("direction").map(|s| s.to_ascii_uppercase()) {
            None => Ok(Direction::Backward),
            Some(s) if s == "BACKWARD" => Ok(Direction::Backward),
            Some(s) if s == "FORWARD" => Ok(Direction::Forward),
            Some(s) => Err(LokiError::bad(format!(
                "invalid direction '{}'",
                s.to_ascii_lowercase()
            ))),
        }
    }

    /// A time parameter in ns, or `default`.
    pub fn time(&self, name: &str, default: i64) -> Result<i64, LokiError> {
        match self.get(name) {
            None => Ok(default),
            Some(s) => parse_time(s)
                .ok_or_else(|| LokiError::bad(format!("invalid {name} {s:?}: expected a Unix time in ns or s, a float of seconds, or RFC 3339"))),
        }
    }

    /// `start`, `end` (and `since`): Loki's bounds, in ns. `end` defaults
    /// to now, `start` to `end - since` (since defaults to 1h).
    pub fn bounds(&self) -> Result<(i64, i64), LokiError> {
        let end = self.time("end", now_ns())?;
        let since = match self.get("since") {
            None => DEFAULT_SINCE_NS,
            Some(s) => duration_ms(s)
                .filter(|&ms| ms > 0)
                .map(|ms| ms.saturating_mul(1_000_000))
                .ok_or_else(|| {
                    LokiError::bad(format!(
                        "invalid since {s:?}: expected a duration such as 15m"
                    ))
                })?,
        };
        let start = self.time("start", end.saturating_sub(since))?;
        if end < start {
            return Err(LokiError::bad(
                "end timestamp must not be before or equal to start time",
            ));
        }
        Ok((start, end))
    }

    /// `step` in ns: a float of seconds or a duration; by default
    /// `max(floor((end - start) / 250 s), 1 s)` as in Loki.
    pub fn step(&self, start: i64, end: i64) -> Result<i64, LokiError> {
        let step = match self.get("step") {
            None => {
                (span(start, end) / 1_000_000_000 / 250).clamp(1, i64::MAX as i128 / 1_000_000_000)
                    as i64
                    * 1_000_000_000
            }
            Some(s) => {
                if let Ok(f) = s.parse::<f64>() {
                    let ns = f * 1e9;
                    if !ns.is_finite() || ns.abs() > i64::MAX as f64 {
                        return Err(LokiError::bad(format!(
                            "cannot parse {s:?} to a valid duration. It overflows int64"
                        )));
                    }
                    ns as i64
                } else {
                    duration_ms(s)
                        .map(|ms| ms.saturating_mul(1_000_000))
                        .ok_or_else(|| {
                            LokiError::bad(format!("cannot parse {s:?} to a valid duration"))
                        })?
                }
            }
        };
        if step <= 0 {
            return Err(LokiError::bad("zero or negative query resolution step widths are not accepted. Try a positive integer"));
        }
        if span(start, end) / i128::from(step) > i128::from(MAX_POINTS) {
            return Err(LokiError::bad(
                "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)",
            ));
        }
        Ok(step)
    }
}

/// `end - start` without overflow (the bounds may be any i64).
fn span(start: i64, end: i64) -> i128 {
    i128::from(end) - i128::from(start)
}

/// The evaluation steps `start, start + step, ..., <= end` (ns), computed
/// without overflow: a range near `i64::MAX` ends at the last step that
/// fits instead of wrapping around. `step` is positive (see `step`).
pub fn steps(start: i64, end: i64, step: i64) -> Vec<i64> {
    let n = (span(start, end) / i128::from(step.max(1))).max(-1);
    (0..=n)
        .map(|k| i128::from(start) + k * i128::from(step))
        .take_while(|&t| t <= i128::from(end))
        .map(|t| t as i64)
        .collect()
}

fn decode(b: &[u8]) -> String {
    let plus: Vec<u8> = b
        .iter()
        .map(|&c| if c == b'+' { b' ' } else { c })
        .collect();
    percent_encoding::percent_decode(&plus)
        .decode_utf8_lossy()
        .into_owned()
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

/// Loki's time forms: a float of seconds (with a `.`), an integer (up to
/// 10 digits: seconds; more: ns), or RFC 3339 with optional fraction.
pub fn parse_time(s: &str) -> Option<i64> {
    if s.contains('.') {
        if let Ok(f) = s.parse::<f64>() {
            if f.is_finite() && f.abs() < 9.2e9 {
                let secs = f.trunc();
                // Loki rounds the fraction to ms.
                let ms = ((f - secs) * 1000.0).round() as i64;
                return Some(secs as i64 * 1_000_000_000 + ms * 1_000_000);
            }
        }
    }
    if let Ok(n) = s.parse::<i64>() {
        let digits = s.trim_start_matches(['-', '+']).len();
        return if s.len() <= 10 && digits <= 10 {
            n.checked_mul(1_000_000_000)
        } else {
            Some(n)
        };
    }
    rfc3339(s)
}

/// `2006-01-02T15:04:05.999999999Z07:00`.
fn rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ns = 0i64;
    if b.get(i) == Some(&b'.') {
        let st = i + 1;
        i = st;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &s[st..i];
        if digits.is_empty() || digits.len() > 9 {
            return None;
        }
        frac_ns = digits.parse::<i64>().ok()? * 10i64.pow(9 - digits.len() as u32);
    }
    let offset_s = match &s[i..] {
        "Z" | "z" => 0,
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) && &z[3..4] == ":" => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            let o = oh * 3600 + om * 60;
            if z.starts_with('-') {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_every_form_loki_accepts() {
        let t = 1_700_000_000_000_000_000i64;
        for (s, want) in [
            ("1700000000000000000", Some(t)),
            ("1700000000", Some(t)),
            ("1700000000.5", Some(t + 500_000_000)),
            ("1700000000.0004", Some(t)),
            ("2023-11-14T22:13:20Z", Some(t)),
            ("2023-11-14T22:13:20.123456789Z", Some(t + 123_456_789)),
            ("2023-11-15T00:13:20+02:00", Some(t)),
            ("2023-11-14T21:13:20-01:00", Some(t)),
            ("0", Some(0)),
            ("2023-11-14 22:13:20", None),
            ("yesterday", None),
            ("2023-13-14T22:13:20Z", None),
            ("2023-11-14T22:13:20", None),
        ] {
            assert_eq!(parse_time(s), want, "{s}");
        }
    }

    #[test]
    fn steps_near_the_ends_of_i64_stop_at_the_last_that_fits() {
        // A range ending near i64::MAX once wrapped `start + k * step`
        // around to negative times, which never passed `end`: the loop
        // grew until memory ran out (found by the loki_params fuzzer).
        let (end, step) = (i64::MAX - 5, 1_000_000_000_000_000_000);
        let start = end - 3 * step;
        assert_eq!(
            steps(start, end, step),
            vec![start, start + step, start + 2 * step, end]
        );
        let p = Params::new(Some("step=1000000000"), b"");
        assert_eq!(p.step(start, end).unwrap(), step);
        // The whole i64 range at 1 s: refused as too many points, not
        // overflowed.
        let p = Params::new(Some("step=1"), b"");
        assert!(p.step(i64::MIN, i64::MAX).is_err());
        let p = Params::new(Some(""), b"");
        let s = p.step(i64::MIN, i64::MAX).unwrap();
        assert!(s > 0 && steps(i64::MIN, i64::MAX, s).len() <= 251, "{s}");
        assert_eq!(steps(5, 4, 1), Vec::<i64>::new());
        assert_eq!(steps(4, 4, 7), vec![4]);
    }

    #[test]
    fn forms_steps_limits_directions() {
        let p = Params::new(
            Some("query=%7Bhost%3D%22a%22%7D+%7C%3D+%22x%22&limit=5&match%5B%5D=a&match[]=b"),
            b"direction=FORWARD&step=30s",
        );
        assert_eq!(p.query().unwrap(), r#"{host="a"} |= "x""#);
        assert_eq!(p.limit().unwrap(), 5);
        assert_eq!(p.all("match[]"), vec!["a", "b"]);
        assert_eq!(p.direction().unwrap(), Direction::Forward);
        assert_eq!(p.step(0, 3_600_000_000_000).unwrap(), 30_000_000_000);
        let p = Params::new(Some("step=0.5&limit=0&direction=sideways"), b"");
        assert_eq!(p.step(0, 1_000_000_000).unwrap(), 500_000_000);
        assert!(p.limit().is_err());
        assert!(p.direction().is_err());
        // Default step: range / 250, at least 1 s.
        let p = Params::new(None, b"");
        assert_eq!(p.step(0, 1_000_000_000_000).unwrap(), 4_000_000_000);
        assert_eq!(p.step(0, 1_000_000_000).unwrap(), 1_000_000_000);
        assert!(Params::new(Some("step=1s"), b"")
            .step(0, 86_400_000_000_000)
            .is_err());
        assert!(Params::new(Some("step=-1"), b"").step(0, 10).is_err());
        // since: start = end - since.
        let p = Params::new(Some("end=1700000000&since=15m"), b"");
        assert_eq!(
            p.bounds().unwrap(),
            (
                1_700_000_000_000_000_000 - 900_000_000_000,
                1_700_000_000_000_000_000
            )
        );
        assert!(Params::new(Some("start=2&end=1"), b"").bounds().is_err());
    }
}
