//! Timestamps: the formats logs write them in, detection per file, and the
//! times users type (`--since 2h`, `--until 2026-11-20T12:00`).
//!
//! Every time is `i64` milliseconds since 1970-01-01T00:00:00Z. A timestamp
//! without a zone is read as UTC (logs rarely say, and a fixed rule keeps the
//! CPU and GPU paths, and two runs on different machines, identical).
//!
//! A timestamp may sit anywhere among a line's first [`MAX_FIELD`]
//! whitespace-separated fields (HPC writes it in the fifth, access logs after
//! the client address). Detection runs every format at every such field of a
//! sample of the file's lines and keeps the (format, field) rules that hit,
//! best first; each line then tries those rules in order. A file can so mix
//! formats (the generator writes ISO, access-log and syslog lines).

use crate::error::Error;

/// The time of a line that has none (only in a file without any timestamp).
pub const NO_TIME: i64 = i64::MIN;

/// Timestamps are looked for in fields `0..MAX_FIELD` of a line.
pub const MAX_FIELD: usize = 8;

/// A timestamp format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeFormat {
    /// ISO 8601 / RFC 3339 and log4j: `2015-10-18 18:01:47,978`,
    /// `2026-11-20T00:00:00.123Z`, `2017-05-16 00:00:00.008+02:00`.
    Iso,
    /// Apache error log / ctime: `[Sun Dec 04 04:47:44 2005]`.
    Apache,
    /// Common log format (access logs): `[04/Dec/2005:04:47:44 +0000]`.
    Clf,
    /// `YY/MM/DD HH:MM:SS` (Spark); four-digit years too.
    Slash,
    /// `YYMMDD HHMMSS` (HDFS).
    Compact,
    /// `YYYYMMDD-H:M:S:ms` (HealthApp; fields need not be zero-padded).
    Dashed,
    /// BSD syslog `Jun 14 15:16:01` (no year).
    Syslog,
    /// Android logcat `MM-DD HH:MM:SS.mmm` (no year).
    Logcat,
    /// `[MM.DD HH:MM:SS]` (Proxifier; no year).
    MonthDot,
    /// Unix epoch seconds (10 digits, optional fraction) or milliseconds
    /// (13 digits) as a whole field; a following `YYYY.MM.DD` field (the
    /// loghub BGL/Thunderbird layout) belongs to the timestamp.
    Epoch,
}

impl TimeFormat {
    /// Every format, in the order ties are broken (the most specific first).
    pub const ALL: [TimeFormat; 10] = [
        TimeFormat::Iso,
        TimeFormat::Apache,
        TimeFormat::Clf,
        TimeFormat::Slash,
        TimeFormat::Compact,
        TimeFormat::Dashed,
        TimeFormat::Syslog,
        TimeFormat::Logcat,
        TimeFormat::MonthDot,
        TimeFormat::Epoch,
    ];

    /// The name used by `--time-format`.
    pub fn name(self) -> &'static str {
        match self {
            TimeFormat::Iso => "iso",
            TimeFormat::Apache => "apache",
            TimeFormat::Clf => "clf",
            TimeFormat::Slash => "slash",
            TimeFormat::Compact => "compact",
            TimeFormat::Dashed => "dashed",
            TimeFormat::Syslog => "syslog",
            TimeFormat::Logcat => "logcat",
            TimeFormat::MonthDot => "month-dot",
            TimeFormat::Epoch => "epoch",
        }
    }

    /// An example of the format.
    pub fn example(self) -> &'static str {
        match self {
            TimeFormat::Iso => "2015-10-18 18:01:47,978",
            TimeFormat::Apache => "[Sun Dec 04 04:47:44 2005]",
            TimeFormat::Clf => "[04/Dec/2005:04:47:44 +0000]",
            TimeFormat::Slash => "17/06/09 20:10:40",
            TimeFormat::Compact => "081109 203615",
            TimeFormat::Dashed => "20171223-22:15:29:606",
            TimeFormat::Syslog => "Jun 14 15:16:01",
            TimeFormat::Logcat => "03-17 16:13:38.811",
            TimeFormat::MonthDot => "[10.30 16:49:06]",
            TimeFormat::Epoch => "1117838570",
        }
    }

    /// `--time-format`'s value: `None` detects per document; an unknown
    /// name is an error listing the known ones.
    pub fn from_flag(name: Option<&str>) -> Result<Option<TimeFormat>, String> {
        let Some(n) = name else {
            return Ok(None);
        };
        TimeFormat::from_name(n).map(Some).ok_or_else(|| {
            let names: Vec<&str> = TimeFormat::ALL.iter().map(|f| f.name()).collect();
            format!(
                "--time-format {n:?}: unknown format (one of {})",
                names.join(", ")
            )
        })
    }

    /// The format named `name` (`--time-format`); a few aliases are
    /// accepted (`rfc3339`, `log4j`, `iso8601`, `bsd`, `ctime`, `access`,
    /// `hdfs`, `yymmdd`, `spark`, `healthapp`, `android`, `proxifier`,
    /// `unix`).
    pub fn from_name(name: &str) -> Option<TimeFormat> {
        let n = name.to_ascii_lowercase();
        let f = match n.as_str() {
            "iso" | "iso8601" | "rfc3339" | "log4j" => TimeFormat::Iso,
            "apache" | "ctime" => TimeFormat::Apache,
            "clf" | "access" => TimeFormat::Clf,
            "slash" | "spark" => TimeFormat::Slash,
            "compact" | "hdfs" | "yymmdd" => TimeFormat::Compact,
            "dashed" | "healthapp" => TimeFormat::Dashed,
            "syslog" | "bsd" => TimeFormat::Syslog,
            "logcat" | "android" => TimeFormat::Logcat,
            "month-dot" | "proxifier" => TimeFormat::MonthDot,
            "epoch" | "unix" => TimeFormat::Epoch,
            _ => return None,
        };
        Some(f)
    }

    /// True when the format carries no year (it comes from the options).
    pub fn yearless(self) -> bool {
        matches!(
            self,
            TimeFormat::Syslog | TimeFormat::Logcat | TimeFormat::MonthDot
        )
    }

    /// Parses a timestamp at the start of `s`; `year` fills year-less
    /// formats. Returns the time and the bytes consumed.
    pub fn parse(self, s: &[u8], year: i32) -> Option<(i64, usize)> {
        let mut p = P { s, i: 0 };
        let t = match self {
            TimeFormat::Iso => iso(&mut p, false),
            TimeFormat::Apache => apache(&mut p),
            TimeFormat::Clf => clf(&mut p),
            TimeFormat::Slash => slash(&mut p),
            TimeFormat::Compact => compact(&mut p),
            TimeFormat::Dashed => dashed(&mut p),
            TimeFormat::Syslog => syslog(&mut p, year),
            TimeFormat::Logcat => logcat(&mut p, year),
            TimeFormat::MonthDot => month_dot(&mut p, year),
            TimeFormat::Epoch => epoch(&mut p),
        }?;
        // A timestamp ends at a field edge: never inside a longer number or
        // word.
        if p.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        Some((t, p.i))
    }
}

impl std::fmt::Display for TimeFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The current UTC year (the year of year-less stamps when nothing in
/// the input dates them).
pub fn current_year() -> i32 {
    let now = web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    year_of_ms(now)
}

/// The UTC year of a time in ms since the epoch.
pub fn year_of_ms(ms: i64) -> i32 {
    civil_from_days(ms.div_euclid(86_400_000)).0 as i32
}

/// The civil date (year, month, day) of a day number.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Milliseconds of a validated civil date and time; `None` when a field is
/// out of range (that rejects most false positives during detection).
fn to_ms(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> Option<i64> {
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return None;
    }
    if h > 23 || mi > 59 || s > 60 || ms > 999 {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86_400
        + i64::from(h) * 3600
        + i64::from(mi) * 60
        + i64::from(s);
    Some(secs * 1000 + i64::from(ms))
}

/// Formats `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_ms(ms: i64) -> String {
    if ms == NO_TIME {
        return "-".to_string();
    }
    let secs = ms.div_euclid(1000);
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ms.rem_euclid(1000)
    )
}

/// A tiny cursor over bytes.
struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }
    fn eat_opt(&mut self, b: u8) -> bool {
        self.eat(b).is_some()
    }
    /// Exactly `n` digits.
    fn num(&mut self, n: usize) -> Option<u32> {
        let d = self.s.get(self.i..self.i + n)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(d.iter().fold(0, |a, &b| a * 10 + u32::from(b - b'0')))
    }
    /// `min..=max` digits, as many as there are.
    fn var(&mut self, min: usize, max: usize) -> Option<u32> {
        let n = self.s[self.i.min(self.s.len())..]
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n < min {
            return None;
        }
        self.num(n)
    }
    /// A fraction after `.` or `,` (any length), as milliseconds; 0 when
    /// absent. A separator without digits is not consumed.
    fn frac(&mut self, seps: &[u8]) -> u32 {
        let Some(c) = self.peek() else { return 0 };
        if !seps.contains(&c) || !self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit) {
            return 0;
        }
        self.i += 1;
        let mut ms = 0;
        let mut n = 0;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            if n < 3 {
                ms = ms * 10 + u32::from(b - b'0');
            }
            n += 1;
            self.i += 1;
        }
        for _ in n..3 {
            ms *= 10;
        }
        ms
    }
    /// `HH:MM:SS`.
    fn hms(&mut self) -> Option<(u32, u32, u32)> {
        let h = self.num(2)?;
        self.eat(b':')?;
        let m = self.num(2)?;
        self.eat(b':')?;
        let s = self.num(2)?;
        Some((h, m, s))
    }
    /// An English month abbreviation (any case).
    fn month(&mut self) -> Option<u32> {
        const M: [&[u8; 3]; 12] = [
            b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov",
            b"dec",
        ];
        let w = self.s.get(self.i..self.i + 3)?;
        let k = M.iter().position(|m| w.eq_ignore_ascii_case(&m[..]))?;
        self.i += 3;
        Some(k as u32 + 1)
    }
    fn spaces(&mut self, min: usize, max: usize) -> Option<()> {
        let n = self.s[self.i.min(self.s.len())..]
            .iter()
            .take(max)
            .take_while(|&&b| b == b' ')
            .count();
        (n >= min).then(|| self.i += n)
    }
    /// A zone: `Z`, `+HH:MM`, `+HHMM`, `+HH`; its offset in milliseconds
    /// (0 when absent).
    fn zone(&mut self) -> i64 {
        match self.peek() {
            Some(b'Z' | b'z') => {
                self.i += 1;
                0
            }
            Some(c @ (b'+' | b'-')) => {
                let save = self.i;
                self.i += 1;
                let Some(h) = self.num(2) else {
                    self.i = save;
                    return 0;
                };
                let colon = self.eat_opt(b':');
                let m = match self.num(2) {
                    Some(m) => m,
                    None if colon => {
                        self.i = save;
                        return 0;
                    }
                    None => 0,
                };
                if h > 23 || m > 59 {
                    self.i = save;
                    return 0;
                }
                let off = i64::from(h * 60 + m) * 60_000;
                if c == b'+' {
                    off
                } else {
                    -off
                }
            }
            _ => 0,
        }
    }
}

fn two_digit_year(y: u32) -> i64 {
    // POSIX strptime's %y: 69..99 are 19xx, 00..68 are 20xx.
    if y >= 69 {
        1900 + i64::from(y)
    } else {
        2000 + i64::from(y)
    }
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.,frac][zone]`; with `lenient` (user input) the
/// time, or its seconds, may be missing.
fn iso(p: &mut P, lenient: bool) -> Option<i64> {
    let y = p.num(4)?;
    p.eat(b'-')?;
    let mo = p.num(2)?;
    p.eat(b'-')?;
    let d = p.num(2)?;
    let (mut h, mut mi, mut s, mut ms) = (0, 0, 0, 0);
    let has_time = matches!(p.peek(), Some(b'T' | b't' | b' '))
        && p.s.get(p.i + 1).is_some_and(u8::is_ascii_digit);
    if has_time {
        p.i += 1;
        h = p.num(2)?;
        p.eat(b':')?;
        mi = p.num(2)?;
        if p.eat_opt(b':') {
            s = p.num(2)?;
            ms = p.frac(b".,");
        } else if !lenient {
            return None;
        }
    } else if !lenient {
        return None;
    }
    let t = to_ms(i64::from(y), mo, d, h, mi, s, ms)?;
    Some(t - p.zone())
}

/// `[Www Mon DD HH:MM:SS YYYY]`.
fn apache(p: &mut P) -> Option<i64> {
    let br = p.eat_opt(b'[');
    const W: [&[u8; 3]; 7] = [b"mon", b"tue", b"wed", b"thu", b"fri", b"sat", b"sun"];
    let w = p.s.get(p.i..p.i + 3)?;
    if !W.iter().any(|x| w.eq_ignore_ascii_case(&x[..])) {
        return None;
    }
    p.i += 3;
    p.spaces(1, 1)?;
    let mo = p.month()?;
    p.spaces(1, 2)?;
    let d = p.var(1, 2)?;
    p.spaces(1, 1)?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".");
    p.spaces(1, 1)?;
    let y = p.num(4)?;
    if br {
        p.eat(b']')?;
    }
    to_ms(i64::from(y), mo, d, h, mi, s, ms)
}

/// `[DD/Mon/YYYY:HH:MM:SS +ZZZZ]`.
fn clf(p: &mut P) -> Option<i64> {
    let br = p.eat_opt(b'[');
    let d = p.num(2)?;
    p.eat(b'/')?;
    let mo = p.month()?;
    p.eat(b'/')?;
    let y = p.num(4)?;
    p.eat(b':')?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".");
    let mut off = 0;
    if p.peek() == Some(b' ') && matches!(p.s.get(p.i + 1), Some(b'+' | b'-')) {
        p.i += 1;
        off = p.zone();
    }
    if br {
        p.eat(b']')?;
    }
    Some(to_ms(i64::from(y), mo, d, h, mi, s, ms)? - off)
}

/// `YY/MM/DD HH:MM:SS` or `YYYY/MM/DD HH:MM:SS`.
fn slash(p: &mut P) -> Option<i64> {
    let y = match p.var(2, 4)? {
        y if p.i == 2 => two_digit_year(y),
        y if p.i == 4 => i64::from(y),
        _ => return None,
    };
    p.eat(b'/')?;
    let mo = p.num(2)?;
    p.eat(b'/')?;
    let d = p.num(2)?;
    p.spaces(1, 1)?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".,");
    to_ms(y, mo, d, h, mi, s, ms)
}

/// `YYMMDD HHMMSS`.
fn compact(p: &mut P) -> Option<i64> {
    let y = p.num(2)?;
    let mo = p.num(2)?;
    let d = p.num(2)?;
    p.spaces(1, 1)?;
    let h = p.num(2)?;
    let mi = p.num(2)?;
    let s = p.num(2)?;
    to_ms(two_digit_year(y), mo, d, h, mi, s, 0)
}

/// `YYYYMMDD-H:M:S:ms`.
fn dashed(p: &mut P) -> Option<i64> {
    let y = p.num(4)?;
    let mo = p.num(2)?;
    let d = p.num(2)?;
    p.eat(b'-')?;
    let h = p.var(1, 2)?;
    p.eat(b':')?;
    let mi = p.var(1, 2)?;
    p.eat(b':')?;
    let s = p.var(1, 2)?;
    let ms = if p.eat_opt(b':') { p.var(1, 3)? } else { 0 };
    to_ms(i64::from(y), mo, d, h, mi, s, ms)
}

/// `Mon DD HH:MM:SS` (day space-padded or not).
fn syslog(p: &mut P, year: i32) -> Option<i64> {
    let mo = p.month()?;
    p.spaces(1, 2)?;
    let d = p.var(1, 2)?;
    p.spaces(1, 1)?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".");
    to_ms(i64::from(year), mo, d, h, mi, s, ms)
}

/// `MM-DD HH:MM:SS.mmm`.
fn logcat(p: &mut P, year: i32) -> Option<i64> {
    let mo = p.num(2)?;
    p.eat(b'-')?;
    let d = p.num(2)?;
    p.spaces(1, 1)?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".");
    to_ms(i64::from(year), mo, d, h, mi, s, ms)
}

/// `[MM.DD HH:MM:SS]`.
fn month_dot(p: &mut P, year: i32) -> Option<i64> {
    let br = p.eat_opt(b'[');
    let mo = p.num(2)?;
    p.eat(b'.')?;
    let d = p.num(2)?;
    p.spaces(1, 1)?;
    let (h, mi, s) = p.hms()?;
    let ms = p.frac(b".");
    if br {
        p.eat(b']')?;
    }
    to_ms(i64::from(year), mo, d, h, mi, s, ms)
}

/// Epoch seconds (10 digits, optional fraction) or milliseconds (13).
fn epoch(p: &mut P) -> Option<i64> {
    let n = p.s.iter().take_while(|b| b.is_ascii_digit()).count();
    let t = match n {
        10 => {
            let s = i64::from(p.num(10)?);
            s * 1000 + i64::from(p.frac(b"."))
        }
        13 => {
            let d = &p.s[..13];
            p.i = 13;
            d.iter().fold(0i64, |a, &b| a * 10 + i64::from(b - b'0'))
        }
        _ => return None,
    };
    if p.peek().is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    // loghub's BGL/Thunderbird write `EPOCH YYYY.MM.DD NODE ...`: the date
    // is part of the timestamp (so that the host rule finds the node next).
    let save = p.i;
    let date = (|| {
        p.spaces(1, 1)?;
        p.num(4)?;
        p.eat(b'.')?;
        p.num(2)?;
        p.eat(b'.')?;
        p.num(2)?;
        p.peek().is_none_or(|b| b == b' ').then_some(())
    })();
    if date.is_none() {
        p.i = save;
    }
    Some(t)
}

/// The byte offsets where the first `max` whitespace-separated fields of
/// `line` start.
pub fn field_starts(line: &[u8], out: &mut [usize; MAX_FIELD]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while n < MAX_FIELD {
        while i < len && (line[i] == b' ' || line[i] == b'\t') {
            i += 1;
        }
        if i >= len {
            break;
        }
        out[n] = i;
        n += 1;
        while i < len && line[i] != b' ' && line[i] != b'\t' {
            i += 1;
        }
    }
    n
}

/// Where a document's timestamps are: (format, field) rules, best first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeRules {
    /// The rules, tried in order on every line.
    pub rules: Vec<(TimeFormat, usize)>,
}

/// A parsed line timestamp: time, format, and the byte offset in the line
/// just past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Milliseconds since the epoch (UTC).
    pub ms: i64,
    /// The format that matched.
    pub format: TimeFormat,
    /// Offset in the line just past the timestamp.
    pub end: usize,
}

impl TimeRules {
    /// Detects the rules from `sample` lines. With `only`, just that format
    /// is considered (at the fields where it is found, field 0 if nowhere).
    pub fn detect<'a>(
        sample: impl Iterator<Item = &'a [u8]>,
        only: Option<TimeFormat>,
        year: i32,
    ) -> TimeRules {
        let formats: Vec<TimeFormat> = match only {
            Some(f) => vec![f],
            None => TimeFormat::ALL.to_vec(),
        };
        let mut hits = vec![[0u32; MAX_FIELD]; formats.len()];
        let mut lines = 0u32;
        let mut fs = [0usize; MAX_FIELD];
        for line in sample {
            lines += 1;
            let nf = field_starts(line, &mut fs);
            for (k, f) in formats.iter().enumerate() {
                for (j, &at) in fs[..nf].iter().enumerate() {
                    if f.parse(&line[at..], year).is_some() {
                        hits[k][j] += 1;
                    }
                }
            }
        }
        let mut cands: Vec<(u32, usize, usize)> = Vec::new(); // (hits, field, format index)
        for (k, h) in hits.iter().enumerate() {
            for (j, &n) in h.iter().enumerate() {
                if n > 0 {
                    cands.push((n, j, k));
                }
            }
        }
        cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut rules = Vec::new();
        if let Some(&(best, _, _)) = cands.first() {
            // Secondary rules must be common enough not to be noise: 1% of
            // the sample (one line of a small sample).
            let floor = (lines / 100).clamp(1, best);
            for &(n, j, k) in &cands {
                let f = formats[k];
                if rules.is_empty() || (n >= floor && f != TimeFormat::Epoch && rules.len() < 4) {
                    rules.push((f, j));
                }
            }
        } else if let Some(f) = only {
            rules.push((f, 0));
        }
        TimeRules { rules }
    }

    /// The timestamp of `line`, by the first rule that parses.
    pub fn stamp(&self, line: &[u8], year: i32) -> Option<Stamp> {
        let mut fs = [0usize; MAX_FIELD];
        let mut nf = usize::MAX;
        for &(format, field) in &self.rules {
            if nf == usize::MAX {
                nf = field_starts(line, &mut fs);
            }
            if field >= nf {
                continue;
            }
            let at = fs[field];
            if let Some((ms, n)) = format.parse(&line[at..], year) {
                return Some(Stamp {
                    ms,
                    format,
                    end: at + n,
                });
            }
        }
        None
    }
}

/// A time as typed by a user: absolute, or a duration before the newest
/// entry of the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSpec {
    /// Milliseconds since the epoch.
    At(i64),
    /// This many milliseconds before the newest entry.
    Ago(i64),
}

impl TimeSpec {
    /// Parses `15m`, `2h`, `1d`, `1h30m`, `500ms`, `90s`, `1w` (durations),
    /// or an absolute time: `2026-11-20`, `2026-11-20T12:00`,
    /// `2026-11-20 12:00:00.5+01:00` (UTC unless a zone is given), or epoch
    /// seconds (10 digits) / milliseconds (13 digits).
    pub fn parse(s: &str) -> Result<TimeSpec, Error> {
        let t = s.trim();
        if let Some(ms) = parse_duration(t) {
            return Ok(TimeSpec::Ago(ms));
        }
        let b = t.as_bytes();
        let mut p = P { s: b, i: 0 };
        if let Some(ms) = iso(&mut p, true) {
            if p.i == b.len() {
                return Ok(TimeSpec::At(ms));
            }
        }
        if let Some((ms, n)) = TimeFormat::Epoch.parse(b, 1970) {
            if n == b.len() {
                return Ok(TimeSpec::At(ms));
            }
        }
        Err(Error::query(format!(
            "invalid time {s:?}: expected a duration before the newest entry (15m, 2h, 1d, 1h30m) \
             or an absolute time (2026-11-20, 2026-11-20T12:00:00Z, epoch seconds)"
        )))
    }

    /// The absolute time, given the newest entry of the corpus.
    pub fn resolve(self, newest: i64) -> i64 {
        match self {
            TimeSpec::At(t) => t,
            TimeSpec::Ago(d) => newest.saturating_sub(d),
        }
    }
}

/// `1h30m`-style durations in milliseconds; `None` if `s` is not one.
pub fn parse_duration(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let mut i = 0;
    let mut total: i64 = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let n: i64 = s[start..i].parse().ok()?;
        let us = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit: i64 = match &s[us..i] {
            "ms" => 1,
            "s" | "sec" => 1000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 7 * 86_400_000,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for d in [-800_000i64, -1, 0, 1, 59, 10_000, 20_000, 2_000_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(days_from_civil(2026, 11, 20) * 86_400, 1_795_132_800);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("15m"), Some(900_000));
        assert_eq!(parse_duration("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("1d"), Some(86_400_000));
        assert_eq!(parse_duration("15"), None);
        assert_eq!(parse_duration("m"), None);
        assert_eq!(parse_duration("1y"), None);
        assert_eq!(parse_duration("99999999999999999999d"), None);
    }

    #[test]
    fn user_times() {
        let at = |s: &str| match TimeSpec::parse(s).unwrap() {
            TimeSpec::At(t) => t,
            TimeSpec::Ago(_) => panic!("{s} is not absolute"),
        };
        assert_eq!(at("2026-11-20"), 1_795_132_800_000);
        assert_eq!(at("2026-11-20T00:01"), 1_795_132_860_000);
        assert_eq!(at("2026-11-20 00:00:01.5"), 1_795_132_801_500);
        assert_eq!(at("2026-11-20T01:00:00+01:00"), 1_795_132_800_000);
        assert_eq!(at("1795132800"), 1_795_132_800_000);
        assert_eq!(at("1795132800123"), 1_795_132_800_123);
        assert_eq!(TimeSpec::parse("2h").unwrap(), TimeSpec::Ago(7_200_000));
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-11-20T25:00",
            "15 m",
            "-5m",
        ] {
            assert!(TimeSpec::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn format_round_trip() {
        assert_eq!(format_ms(1_795_132_801_500), "2026-11-20T00:00:01.500Z");
        assert_eq!(format_ms(-1), "1969-12-31T23:59:59.999Z");
    }
}
