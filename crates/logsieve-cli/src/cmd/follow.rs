//! `logsieve search --server URL --follow PATTERN`: new lines of the served
//! corpus that match, printed as they come (`tail -f | grep`), from the
//! server's live tail (`POST /api/v1/tail`, server-sent events of ripgrep
//! `match` objects).
//!
//! Each match goes through the same printer as a local search (text, `-n`,
//! `-b`, `-o`, `--column`, `--vimgrep`, colour, `-H`/`-I`), so the output is
//! byte for byte what a local search over the appended lines prints when
//! they were appended file after file; `--json` prints the `match` objects
//! (the lines a local `--json` prints between a file's `begin` and `end`).
//! A stream never ends, so what only an end can print — `-c`, `-l`,
//! `--files-without-match`, context (`-A/-B/-C`), `--stats`,
//! `--count-by`, `--histogram` — is refused (exit 2) rather than never
//! printed; `-q` exits 0 at the first match. `--since`/`--until` go to the
//! tail as written (the server times lines by its stats columns; a line
//! stamped at or after `--until` ends the tail, exit as below).
//! Ctrl-C (or the server's end) ends it: exit 0 when a line matched, else
//! 1.

use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::exit::{EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::{ColorChoice, SearchArgs};
use crate::printer::Printer;
use crate::remote::{self, Server};

/// Follows `server`'s live tail of `query`; `files`: served names, or all.
pub fn run(
    a: &SearchArgs,
    query: &logsieve::Query,
    server: &Server,
    files: &[String],
) -> Result<i32, String> {
    let refused = [
        (a.count, "-c/--count"),
        (a.per_pattern.active(), "--count-per-pattern"),
        (a.files_with_matches, "-l/--files-with-matches"),
        (a.files_without_match, "--files-without-match"),
        (
            a.after_context.is_some() || a.before_context.is_some() || a.context.is_some(),
            "-A/-B/-C (context)",
        ),
        (a.max_count.is_some(), "-m/--max-count"),
        (a.report.explain, "--explain"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(on, _)| *on) {
        return Err(format!(
            "{flag} is not supported with --follow: a live tail never ends, so what is printed at the end would never be (search without --follow for it)"
        ));
    }
    let pipe = &a.pipeline;
    let aggregate = [
        (!pipe.count_by.is_empty(), "--count-by"),
        (pipe.histogram.is_some(), "--histogram"),
    ];
    if let Some((_, flag)) = aggregate.iter().find(|(on, _)| *on) {
        return Err(format!(
            "{flag} is not supported with --follow: a live tail never ends, so what is printed at the end would never be (search without --follow for it)"
        ));
    }
    // The server's columns time the lines, as for `stats --server`.
    let fixed = [
        (!pipe.field.is_empty(), "--field"),
        (pipe.time_format.is_some(), "--time-format"),
        (pipe.year.is_some(), "--year"),
    ];
    if let Some((_, flag)) = fixed.iter().find(|(on, _)| *on) {
        return Err(format!(
            "{flag} is not supported with --server: the server's columns decide (logsieve serve {flag})"
        ));
    }
    let mut req = remote::query_fields(query, true, true)?;
    if !files.is_empty() {
        req.insert("files".into(), files.to_vec().into());
    }
    // The time window as the user wrote it: the server resolves a
    // duration against its newest line when the tail starts, as a local
    // search does against the newest line it loaded.
    if let Some(s) = &pipe.since {
        req.insert("since".into(), s.clone().into());
    }
    if let Some(u) = &pipe.until {
        req.insert("until".into(), u.clone().into());
    }
    let body = serde_json::to_vec(&Value::Object(req)).map_err(|e| e.to_string())?;
    // Ctrl-C is caught from before the request is sent: a tail the server
    // has opened is always ended by it, never by the default action.
    let stop = Arc::new(AtomicBool::new(false));
    let conn: Arc<Mutex<Option<TcpStream>>> = Arc::default();
    on_ctrl_c(conn.clone(), stop.clone());
    let stream = server
        .send("POST", "/api/v1/tail", &body)
        .map_err(|e| format!("--server {}: {e}", server.url()))?;
    *conn.lock().unwrap_or_else(|e| e.into_inner()) = stream.try_clone().ok();
    if stop.load(Ordering::Relaxed) {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
    let mut events = open(stream)?;
    let first = events
        .next_event()
        .ok_or("the server closed the tail before it started")?;
    let served: u64 = serde_json::from_str::<Value>(&first.1)
        .ok()
        .and_then(|v| v["files"].as_u64())
        .unwrap_or(0);
    let many = files.len() > 1 || (files.is_empty() && served > 1);
    let stdout_tty = io::stdout().is_terminal();
    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_tty && std::env::var_os("NO_COLOR").is_none(),
    };
    let with_filename = (many || a.with_filename || a.vimgrep) && !a.no_filename;
    let printer = Printer {
        a,
        query,
        color,
        with_filename,
        line_number: !a.no_line_number && (a.line_number || stdout_tty || a.column || a.vimgrep),
        heading: with_filename && !a.vimgrep && (a.heading || (stdout_tty && !a.no_heading)),
    };
    let stdout = io::stdout();
    let mut matched = false;
    let mut until_passed = false;
    while let Some((ev, data)) = events.next_event() {
        if ev == "end" {
            // `--until`: the log's clock passed it; the tail is over.
            until_passed =
                serde_json::from_str::<Value>(&data).is_ok_and(|v| v["reason"] == "until");
            break;
        }
        if ev != "match" {
            continue;
        }
        matched = true;
        if a.quiet {
            break;
        }
        let mut out = stdout.lock();
        let res = if a.report.json {
            out.write_all(data.as_bytes())
                .and_then(|_| out.write_all(b"\n"))
        } else {
            print_match(&printer, &mut out, &data)?
        };
        if let Err(e) = res.and_then(|_| out.flush()) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                break;
            }
            return Err(e.to_string());
        }
    }
    if !stop.load(Ordering::Relaxed) && !until_passed && !matched && !a.quiet {
        // The server went away (it stopped): not an error of the search.
        eprintln!("logsieve: the server ended the tail");
    }
    Ok(if matched { EXIT_MATCH } else { EXIT_NO_MATCH })
}

/// One `match` object through the local printer.
fn print_match<W: Write>(
    printer: &Printer,
    out: &mut W,
    data: &str,
) -> Result<io::Result<()>, String> {
    let v: Value = serde_json::from_str(data)
        .map_err(|e| format!("the server's tail sent an event that is not JSON: {e}"))?;
    let begin = serde_json::json!({"type": "begin", "data": {"path": v["data"]["path"]}});
    let ndjson = format!("{begin}\n{data}\n");
    let answer = remote::read_lines(ndjson.as_bytes())?;
    Ok(printer.print_files(out, answer.files.iter().map(|(f, h)| (f, h))))
}

/// On Ctrl-C: note it and shut the connection (once `conn` holds it),
/// which ends the read loop. Returns once the handler is in place, so a
/// Ctrl-C from then on is always caught (a handler registered later by its
/// thread left a window where Ctrl-C killed the process).
fn on_ctrl_c(conn: Arc<Mutex<Option<TcpStream>>>, stop: Arc<AtomicBool>) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            return;
        };
        let caught = rt.block_on(async move {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let mut sig = signal(SignalKind::interrupt()).ok()?;
                let _ = ready_tx.send(());
                sig.recv().await
            }
            #[cfg(not(unix))]
            {
                let _ = ready_tx.send(());
                tokio::signal::ctrl_c().await.ok()
            }
        });
        if caught.is_some() {
            stop.store(true, Ordering::Relaxed);
            if let Some(s) = conn.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    });
    // Err: the thread could not set a handler and dropped the sender.
    let _ = ready_rx.recv();
}

/// The answer's head read: server-sent events, or the server's error.
fn open(stream: TcpStream) -> Result<Events, String> {
    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?;
        head.extend_from_slice(&line);
        if n == 0 || line == b"\r\n" {
            break;
        }
    }
    let status = head
        .split(|&b| b == b' ')
        .nth(1)
        .and_then(|c| std::str::from_utf8(c).ok()?.parse::<u16>().ok());
    if status != Some(200) {
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest);
        head.extend_from_slice(&rest);
        let resp = remote::parse(&head).ok_or("not an HTTP response (is it a logsieve server?)")?;
        let msg = serde_json::from_slice::<Value>(&resp.body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&resp.body).trim().to_string());
        return Err(format!("server answered {}: {msg}", resp.status));
    }
    let chunked = String::from_utf8_lossy(&head)
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    Ok(Events {
        reader,
        chunked,
        left: 0,
    })
}

/// Server-sent events over a (chunked) body.
struct Events {
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// Bytes left in the current chunk.
    left: usize,
}

impl Events {
    /// One line of the body (through its `\n`), chunks decoded.
    fn line(&mut self) -> Option<Vec<u8>> {
        if !self.chunked {
            let mut l = Vec::new();
            return (self.reader.read_until(b'\n', &mut l).ok()? > 0).then_some(l);
        }
        let mut out = Vec::new();
        loop {
            if self.left == 0 {
                let mut size = String::new();
                if self.reader.read_line(&mut size).ok()? == 0 {
                    return None;
                }
                if size.trim().is_empty() {
                    continue;
                }
                let hex = size.trim().split(';').next().unwrap_or("");
                self.left = usize::from_str_radix(hex, 16).ok()?;
                if self.left == 0 {
                    return None;
                }
            }
            let buf = self.reader.fill_buf().ok()?;
            if buf.is_empty() {
                return None;
            }
            let n = buf.len().min(self.left);
            let nl = buf[..n].iter().position(|&b| b == b'\n');
            let take = nl.map_or(n, |i| i + 1);
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            self.left -= take;
            if self.left == 0 {
                let mut crlf = [0u8; 2];
                self.reader.read_exact(&mut crlf).ok()?;
            }
            if nl.is_some() {
                return Some(out);
            }
        }
    }

    /// The next event (comments and keep-alives skipped): name and data.
    fn next_event(&mut self) -> Option<(String, String)> {
        let (mut ev, mut data) = (String::new(), String::new());
        loop {
            let l = self.line()?;
            let l = String::from_utf8_lossy(&l);
            let l = l.trim_end_matches(['\n', '\r']);
            if l.is_empty() {
                if !data.is_empty() || !ev.is_empty() {
                    return Some((ev, data));
                }
            } else if let Some(v) = l.strip_prefix("event:") {
                ev = v.trim().to_string();
            } else if let Some(v) = l.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
    }
}
