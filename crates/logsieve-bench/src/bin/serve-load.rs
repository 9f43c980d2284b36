//! Load generator for `logsieve serve`: count queries over loopback HTTP,
//! one keep-alive connection per client, and the latency of each request
//! from its first byte written to its last byte read.
//!
//! Usage: `serve-load --addr 127.0.0.1:PORT [--clients N] [--seconds S]
//! [--pause-ms MS] [--warmup N] [--patterns A,B,C] [--syntax literal|regex]
//! [--distinct] [--mix] [--regexes 'R1;R2'] [--expect-file FILE]
//! [--watchlist-file FILE]`.
//!
//! What each client asks:
//! * by default the queries rotate over `--patterns` (the five reference
//!   literals), so concurrent clients ask different things;
//! * `--distinct`: client `c` asks `patterns[c % n]` every time (16
//!   clients over a list of 16 literals: 16 analysts, 16 questions);
//! * `--mix`: request `i` of a client is a literal count, a regex count
//!   (`--regexes`, split on `;`) or a stats request (`count_by` level of
//!   the lines holding the literal), in turn;
//! * `--watchlist-file` (one literal a line, e.g. a 10k IOC list): the
//!   list is defined once (`PUT /api/v1/watchlists/serve-load`) and every
//!   request is its per-pattern count (`POST /api/v1/patterns` naming it).
//!
//! Every answer is checked against the CPU engine in the same run: before
//! the load, each distinct request is asked once with `"backend": "cpu"`
//! (kept in `--expect-file` when given, so a later run over the same
//! corpus asks only what it has not seen), and the run fails on any
//! answer that differs, on answers that differ among themselves, or on an
//! HTTP error.
//!
//! Prints one line: requests, requests per second, p50, p90, p99 and max
//! latency in ms, the bytes scanned per second (search requests times the
//! corpus's bytes, `/api/v1/health`), per-kind p50 under `--mix`, and the
//! answer of every request seen. Requests per second count the requests
//! that finished after every client's warm-up, over the time since the
//! last client's warm-up ended.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use logsieve_bench::http::Conn;

struct Args {
    addr: String,
    clients: usize,
    seconds: f64,
    pause: Duration,
    warmup: usize,
    patterns: Vec<String>,
    regexes: Vec<String>,
    syntax: String,
    distinct: bool,
    mix: bool,
    expect: Option<String>,
    watchlist: Option<String>,
}

const USAGE: &str = "usage: serve-load --addr HOST:PORT [--clients N] [--seconds S] [--pause-ms MS] [--warmup N] [--patterns A,B] [--syntax literal|regex] [--distinct] [--mix] [--regexes 'R1;R2'] [--expect-file FILE] [--watchlist-file FILE]";

fn parse() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:8788".into(),
        clients: 1,
        seconds: 5.0,
        pause: Duration::ZERO,
        warmup: 3,
        syntax: "literal".into(),
        distinct: false,
        mix: false,
        expect: None,
        watchlist: None,
        patterns: [
            "ERROR_503",
            "192.168.1",
            "error",
            "NullPointerException",
            "x",
        ]
        .map(String::from)
        .to_vec(),
        regexes: [r"ERROR_5\d\d", r"user=u9\d{4}\b", r"rt=1\.\d{3}"]
            .map(String::from)
            .to_vec(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        // Switches without a value.
        match f.as_str() {
            "--distinct" => {
                a.distinct = true;
                continue;
            }
            "--mix" => {
                a.mix = true;
                continue;
            }
            _ => {}
        }
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--addr" => a.addr = v,
            "--clients" => a.clients = v.parse().expect("--clients N"),
            "--seconds" => a.seconds = v.parse().expect("--seconds S"),
            "--pause-ms" => a.pause = Duration::from_millis(v.parse().expect("--pause-ms MS")),
            "--warmup" => a.warmup = v.parse().expect("--warmup N"),
            "--patterns" => a.patterns = v.split(',').map(String::from).collect(),
            // Patterns are split on commas: a regex with a comma cannot
            // be given here (`--regexes` splits on ';').
            "--syntax" => a.syntax = v,
            "--regexes" => a.regexes = v.split(';').map(String::from).collect(),
            "--expect-file" => a.expect = Some(v),
            "--watchlist-file" => a.watchlist = Some(v),
            _ => {
                eprintln!("{USAGE}");
                std::process::exit(2)
            }
        }
    }
    a
}

/// The kinds of request a client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Literal,
    Regex,
    Stats,
    Watchlist,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Literal => "literal",
            Kind::Regex => "regex",
            Kind::Stats => "stats",
            Kind::Watchlist => "watchlist",
        }
    }
}

/// One request: where it goes, its body without a backend, and its label.
#[derive(Clone, Debug)]
struct Req {
    kind: Kind,
    path: &'static str,
    /// The JSON body as an object (the backend is added per send).
    body: serde_json::Value,
    label: String,
}

impl Req {
    fn count(kind: Kind, pattern: &str, syntax: &str) -> Req {
        Req {
            kind,
            path: "/api/v1/search",
            body: serde_json::json!({"patterns": [pattern], "syntax": syntax, "output": "count"}),
            label: format!("{}:{pattern}", kind.name()),
        }
    }

    fn stats(pattern: &str) -> Req {
        Req {
            kind: Kind::Stats,
            path: "/api/v1/stats",
            body: serde_json::json!({"patterns": [pattern], "syntax": "literal", "count_by": ["level"]}),
            label: format!("stats:{pattern}"),
        }
    }

    fn watchlist() -> Req {
        Req {
            kind: Kind::Watchlist,
            path: "/api/v1/patterns",
            body: serde_json::json!({ "watchlist": WATCHLIST }),
            label: "watchlist".into(),
        }
    }

    /// The body asking `backend` (`None`: as the server routes it).
    fn body(&self, backend: Option<&str>) -> String {
        let mut b = self.body.clone();
        if let (Some(be), Some(o)) = (backend, b.as_object_mut()) {
            o.insert("backend".into(), be.into());
        }
        b.to_string()
    }
}

/// What an answer says, as compared with the CPU engine's: the total (a
/// count, the sum of a per-pattern count's lines), or a stats answer's
/// selected lines and groups.
fn answer_of(kind: Kind, body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    match kind {
        Kind::Watchlist => {
            let rows = v.get("patterns")?.as_array()?;
            let n: Option<u64> = rows.iter().map(|r| r.get("lines")?.as_u64()).sum();
            n.map(|n| n.to_string())
        }
        Kind::Stats => Some(format!(
            "{} {}",
            v.get("selected")?,
            v.get("groups").cloned().unwrap_or_default()
        )),
        Kind::Literal | Kind::Regex => v.get("total")?.as_u64().map(|n| n.to_string()),
    }
}

const WATCHLIST: &str = "serve-load";

/// Defines the watchlist of `file`'s lines; the label of its answers.
fn define_watchlist(addr: &str, file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let pats: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    let body = serde_json::json!({ "patterns": pats }).to_string();
    let mut conn = Conn::connect(addr).map_err(|e| format!("connect: {e}"))?;
    match conn.request("PUT", &format!("/api/v1/watchlists/{WATCHLIST}"), &body) {
        Ok((200 | 201, _)) => Ok(()),
        Ok((s, b)) => Err(format!(
            "PUT watchlist: HTTP {s}: {}",
            String::from_utf8_lossy(&b)
        )),
        Err(e) => Err(format!("PUT watchlist: {e}")),
    }
}

/// The corpus's bytes and lines (`/api/v1/health`).
fn corpus_size(addr: &str) -> Result<(u64, u64), String> {
    let mut conn = Conn::connect(addr).map_err(|e| format!("connect: {e}"))?;
    let (s, b) = conn
        .request("GET", "/api/v1/health", "")
        .map_err(|e| format!("health: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_slice(&b).map_err(|e| format!("health: HTTP {s}: {e}"))?;
    let n = |k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    Ok((n("bytes"), n("lines")))
}

/// The CPU engine's answer to every request of `reqs`: from `file`
/// (`label<TAB>lines<TAB>answer` a line, for this corpus's line count)
/// where it has it, else asked now and added to it.
fn expected(
    addr: &str,
    reqs: &[Req],
    lines: u64,
    file: Option<&str>,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let kept = file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    for l in kept.lines() {
        let mut it = l.splitn(3, '\t');
        if let (Some(label), Some(n), Some(ans)) = (it.next(), it.next(), it.next()) {
            if n.parse::<u64>().ok() == Some(lines) {
                out.insert(label.to_string(), ans.to_string());
            }
        }
    }
    let mut conn = Conn::connect(addr).map_err(|e| format!("connect: {e}"))?;
    let mut added = String::new();
    for r in reqs {
        if out.contains_key(&r.label) {
            continue;
        }
        let (s, b) = conn
            .request("POST", r.path, &r.body(Some("cpu")))
            .map_err(|e| format!("{} on the CPU: {e}", r.label))?;
        if s != 200 {
            return Err(format!(
                "{} on the CPU: HTTP {s}: {}",
                r.label,
                String::from_utf8_lossy(&b)
            ));
        }
        let ans = answer_of(r.kind, &b).ok_or_else(|| format!("{}: no answer", r.label))?;
        added.push_str(&format!("{}\t{lines}\t{ans}\n", r.label));
        out.insert(r.label.clone(), ans);
    }
    if let (Some(f), false) = (file, added.is_empty()) {
        let mut h = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(f)
            .map_err(|e| format!("{f}: {e}"))?;
        h.write_all(added.as_bytes())
            .map_err(|e| format!("{f}: {e}"))?;
    }
    Ok(out)
}

/// The requests client `c` sends, in turn.
fn plan(a: &Args, c: usize, watch: bool) -> Vec<Req> {
    if watch {
        return vec![Req::watchlist()];
    }
    let lit = |p: &String| Req::count(Kind::Literal, p, &a.syntax);
    let kind = if a.syntax == "regex" {
        Kind::Regex
    } else {
        Kind::Literal
    };
    let own = |v: &[String]| v[c % v.len()].clone();
    match (a.mix, a.distinct) {
        (false, false) => {
            // Rotating over the list from the client's own place.
            let n = a.patterns.len();
            (0..n)
                .map(|k| Req::count(kind, &a.patterns[(c + k) % n], &a.syntax))
                .collect()
        }
        (false, true) => vec![Req::count(kind, &own(&a.patterns), &a.syntax)],
        (true, distinct) => {
            let pick = |v: &[String], k: usize| match distinct {
                true => own(v),
                false => v[(c + k) % v.len()].clone(),
            };
            let mut out = Vec::new();
            for k in 0..a.patterns.len().max(a.regexes.len()) {
                out.push(lit(&pick(&a.patterns, k)));
                out.push(Req::count(Kind::Regex, &pick(&a.regexes, k), "regex"));
                out.push(Req::stats(&pick(&a.patterns, k)));
            }
            out
        }
    }
}

/// One request answered after its client's warm-up.
struct Done {
    kind: Kind,
    at: Instant,
    took: Duration,
}

fn main() {
    let a = parse();
    let watch = a.watchlist.is_some();
    if let Some(f) = &a.watchlist {
        if let Err(e) = define_watchlist(&a.addr, f) {
            eprintln!("serve-load: {e}");
            std::process::exit(1)
        }
    }
    let (bytes, lines) = corpus_size(&a.addr).unwrap_or_else(|e| {
        eprintln!("serve-load: {e}");
        std::process::exit(1)
    });
    let plans: Vec<Vec<Req>> = (0..a.clients).map(|c| plan(&a, c, watch)).collect();
    let mut all: Vec<Req> = plans.iter().flatten().cloned().collect();
    all.sort_by(|x, y| x.label.cmp(&y.label));
    all.dedup_by(|x, y| x.label == y.label);
    let expect = match expected(&a.addr, &all, lines, a.expect.as_deref()) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("serve-load: {e}");
            std::process::exit(1)
        }
    };
    let deadline = Instant::now() + Duration::from_secs_f64(a.seconds);
    let done = Arc::new(Mutex::new(Vec::<Done>::new()));
    let warm_at = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let seen = Arc::new(Mutex::new(BTreeMap::<String, BTreeMap<String, u64>>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut workers = Vec::new();
    for mine in plans {
        let (addr, pause, warmup) = (a.addr.clone(), a.pause, a.warmup);
        let (done, warm_at, seen, errors) =
            (done.clone(), warm_at.clone(), seen.clone(), errors.clone());
        workers.push(std::thread::spawn(move || {
            let mut conn = match Conn::connect(&addr) {
                Ok(c) => c,
                Err(e) => {
                    errors.lock().unwrap().push(format!("connect: {e}"));
                    return;
                }
            };
            let bodies: Vec<String> = mine.iter().map(|r| r.body(None)).collect();
            let mut out = Vec::new();
            let mut answers = BTreeMap::<String, BTreeMap<String, u64>>::new();
            let mut n = 0usize;
            if warmup == 0 {
                warm_at.lock().unwrap().push(Instant::now());
            }
            while Instant::now() < deadline {
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                }
                let k = n % mine.len();
                let r = &mine[k];
                let t = Instant::now();
                match conn.request("POST", r.path, &bodies[k]) {
                    Ok((200, body)) => {
                        let took = t.elapsed();
                        match answer_of(r.kind, &body) {
                            Some(ans) => {
                                *answers
                                    .entry(r.label.clone())
                                    .or_default()
                                    .entry(ans)
                                    .or_default() += 1;
                            }
                            None => {
                                errors.lock().unwrap().push(format!(
                                    "{}: no answer in {}",
                                    r.label,
                                    String::from_utf8_lossy(&body)
                                ));
                                return;
                            }
                        }
                        n += 1;
                        if n == warmup {
                            warm_at.lock().unwrap().push(Instant::now());
                        } else if n > warmup {
                            out.push(Done {
                                kind: r.kind,
                                at: Instant::now(),
                                took,
                            });
                        }
                    }
                    Ok((s, body)) => {
                        errors.lock().unwrap().push(format!(
                            "{}: HTTP {s}: {}",
                            r.label,
                            String::from_utf8_lossy(&body)
                        ));
                        return;
                    }
                    Err(e) => {
                        errors.lock().unwrap().push(format!("request: {e}"));
                        return;
                    }
                }
            }
            done.lock().unwrap().extend(out);
            let mut s = seen.lock().unwrap();
            for (label, m) in answers {
                let e = s.entry(label).or_default();
                for (ans, n) in m {
                    *e.entry(ans).or_default() += n;
                }
            }
        }));
    }
    for w in workers {
        let _ = w.join();
    }
    let mut bad = errors.lock().unwrap().clone();
    let warm = warm_at.lock().unwrap();
    if warm.len() < a.clients && bad.is_empty() {
        bad.push(format!(
            "{} of {} clients finished their {} warm-up requests: run longer",
            warm.len(),
            a.clients,
            a.warmup
        ));
    }
    let start = warm.iter().max().copied();
    let done = done.lock().unwrap();
    let counted: Vec<&Done> = done
        .iter()
        .filter(|d| start.is_some_and(|s| d.at >= s))
        .collect();
    let end = counted.iter().map(|d| d.at).max();
    let window = match (start, end) {
        (Some(s), Some(e)) if e > s => (e - s).as_secs_f64(),
        _ => f64::NAN,
    };
    let pct = |l: &mut Vec<Duration>, p: f64| {
        l.sort();
        if l.is_empty() {
            f64::NAN
        } else {
            l[((l.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
        }
    };
    let mut l: Vec<Duration> = counted.iter().map(|d| d.took).collect();
    let searches = counted
        .iter()
        .filter(|d| matches!(d.kind, Kind::Literal | Kind::Regex | Kind::Watchlist))
        .count();
    let mut kinds = BTreeMap::<Kind, Vec<Duration>>::new();
    for d in &counted {
        kinds.entry(d.kind).or_default().push(d.took);
    }
    let per_kind: Vec<String> = match kinds.len() > 1 {
        true => kinds
            .iter_mut()
            .map(|(k, v)| format!("{} {} p50 {:.3}", k.name(), v.len(), pct(v, 0.5)))
            .collect(),
        false => Vec::new(),
    };
    let seen = seen.lock().unwrap();
    let mut answers = Vec::new();
    for (label, m) in seen.iter() {
        let want = expect.get(label);
        for (ans, n) in m {
            if want != Some(ans) {
                bad.push(format!(
                    "{label}: {n} answers {ans:?}, the CPU engine's {want:?}"
                ));
            }
        }
        if let Some((ans, _)) = m.iter().next() {
            answers.push(format!("{label}={ans}"));
        }
    }
    println!(
        "clients {} pause {} ms{}{}: {} requests in {:.1} s = {:.0}/s; p50 {:.3} ms, p90 {:.3}, p99 {:.3}, max {:.3}; scanned {:.1} GB/s{}; checked against the CPU engine: {}",
        a.clients,
        a.pause.as_millis(),
        if a.distinct { " distinct" } else { "" },
        if a.mix { " mix" } else { "" },
        l.len(),
        window,
        l.len() as f64 / window,
        pct(&mut l, 0.5),
        pct(&mut l, 0.9),
        pct(&mut l, 0.99),
        pct(&mut l, 1.0),
        searches as f64 * bytes as f64 / window / 1e9,
        if per_kind.is_empty() {
            String::new()
        } else {
            format!(" ({})", per_kind.join(", "))
        },
        answers.join(" ")
    );
    if !bad.is_empty() {
        for b in bad.iter().take(5) {
            eprintln!("serve-load: {b}");
        }
        std::process::exit(1);
    }
}
