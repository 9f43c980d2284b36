//! `logsieve sql`: SQL over files, or over a server's corpus.
//!
//! Files are walked and loaded as `search` loads them, their columns built
//! as `serve` builds them (`level`, `host`, `--field`s), and the query run
//! by `logsieve_sql` (DataFusion, with the filters the engine answers
//! pushed down to it). Exit 0 with rows, 1 without, 2 on an error
//! (DataFusion's message).

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::Arc;

use logsieve::stats::{self, ColumnOptions, Columns, FieldSpec, TimeFormat};
use logsieve::{SearchOptions, Session, Tuning, WatchlistOptions};
use logsieve_cluster::{Cluster, ClusterEngine};
use logsieve_sql::format::{self, Format};
use logsieve_sql::{Answer, Local, SqlEngine, SqlLimits};

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::shared::ColumnArgs;
use crate::flags::sql::SqlArgs;
use crate::input::load;

/// `logsieve sql`; returns the exit code.
pub fn run(a: &SqlArgs, tuning: &Tuning) -> i32 {
    let fmt = Format::from_name(&a.format).unwrap_or(Format::Table);
    let (query, paths) = a.query_and_paths();
    if let Some(url) = crate::remote::server_url(&a.server) {
        if !paths.is_empty() {
            err("--server: SQL is over the served corpus (no paths)");
            return EXIT_ERROR;
        }
        return match query {
            Some(q) => remote(&url, q, fmt),
            None => prompt(|q| remote(&url, q, fmt)),
        };
    }
    if let Some(addrs) = &a.cluster {
        if !paths.is_empty() {
            err("--cluster: SQL is over the workers' shards (no paths)");
            return EXIT_ERROR;
        }
        return cluster(addrs, a, query, fmt);
    }
    let (engine, had_error) = match local(a, &paths, tuning) {
        Ok(e) => e,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            err(format!("cannot start the runtime: {e}"));
            return EXIT_ERROR;
        }
    };
    let one = |q: &str| answer(rt.block_on(timed(a.timing, engine.query(q))), fmt);
    let code = match query {
        Some(q) => one(q),
        None => prompt(one),
    };
    // A path that could not be read was reported; the rest was queried.
    if had_error {
        EXIT_ERROR
    } else {
        code
    }
}

/// The engine over the files (loaded, columns built, watchlists
/// defined), and whether some path could not be read.
fn local(
    a: &SqlArgs,
    paths: &[std::path::PathBuf],
    tuning: &Tuning,
) -> Result<(SqlEngine, bool), String> {
    let mut lists = Vec::new();
    for w in &a.watchlist {
        let (name, file) = w
            .split_once('=')
            .ok_or_else(|| format!("--watchlist {w:?}: expected NAME=FILE"))?;
        let pats = crate::input::read_pattern_file(&file.into())
            .map_err(|e| format!("--watchlist {name}: {file}: {e}"))?;
        lists.push((name.to_string(), pats));
    }
    let paths = crate::input::search_paths(paths.to_vec());
    let (corpus, had_error) = load(&paths, a.input, &a.walk);
    let session = session(corpus, &a.columns, tuning)?;
    for (name, pats) in &lists {
        session
            .define_watchlist(name, pats, WatchlistOptions::default())
            .map_err(|e| format!("--watchlist {name}: {e}"))?;
    }
    let opts = SearchOptions {
        backend: a.engine.backend.choice(),
        threads: a.engine.threads,
        ..Default::default()
    };
    let limits = SqlLimits {
        pushdown: !a.no_pushdown,
        ..SqlLimits::local()
    };
    SqlEngine::new(Local::new(session), opts, limits).map(|e| (e, had_error))
}

/// The session over `corpus`, its columns built as `serve` builds them
/// (`sql` over files, a cluster worker's shards).
pub(crate) fn session(
    corpus: logsieve::Corpus,
    flags: &ColumnArgs,
    tuning: &Tuning,
) -> Result<Session, String> {
    let fields = FieldSpec::with_builtins(&flags.field).map_err(|e| e.to_string())?;
    let time_format = TimeFormat::from_flag(flags.time_format.as_deref())?;
    let year = flags.year;
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            time_format,
            year: year.unwrap_or_else(stats::time::current_year),
            doc_years: year.map_or_else(Vec::new, |y| vec![y; corpus.docs().len()]),
            doc_mtimes: stats::file_mtimes(&corpus),
            fields,
        },
    );
    let mut session = Session::with_tuning(corpus, tuning.clone());
    session.set_columns(cols);
    Ok(session)
}

/// `fut`'s answer; with `--timing`, its time and rows on stderr (as
/// psql's `\timing`).
pub(crate) async fn timed(
    on: bool,
    fut: impl std::future::Future<Output = Result<Answer, String>>,
) -> Result<Answer, String> {
    let t = std::time::Instant::now();
    let a = fut.await;
    if on {
        let ms = t.elapsed().as_secs_f64() * 1e3;
        match &a {
            Ok(a) => eprintln!("{} row(s) in {ms:.3} ms", a.rows),
            Err(_) => eprintln!("failed in {ms:.3} ms"),
        }
    }
    a
}

/// An answer printed (0 with rows, 1 without), or its error (2).
pub(crate) fn answer(a: Result<Answer, String>, fmt: Format) -> i32 {
    match a {
        Ok(a) => print(&a, fmt),
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}

/// Prints `a` as `fmt` on stdout: 0 with rows, 1 without.
pub(crate) fn print(a: &Answer, fmt: Format) -> i32 {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match format::write(&mut out, a, fmt)
        .map_err(|e| e.to_string())
        .and_then(|_| out.flush().map_err(|e| e.to_string()))
    {
        Ok(()) => {}
        Err(e) if e.contains("Broken pipe") => {}
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    }
    if a.rows > 0 {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}

/// `--server URL`: the answer as an Arrow stream, printed here.
fn remote(url: &str, q: &str, fmt: Format) -> i32 {
    let run = || -> Result<Answer, String> {
        let server = crate::remote::Server::parse(url)?;
        let resp = server.post("sql", &serde_json::json!({"query": q, "format": "arrow"}))?;
        let truncated = resp.header("x-logsieve-truncated") == Some("true");
        let reader = datafusion_ipc_reader(&resp.body)?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let rows = batches.iter().map(|b| b.num_rows()).sum();
        Ok(Answer {
            schema,
            batches,
            rows,
            truncated,
        })
    };
    match run() {
        Ok(a) => print(&a, fmt),
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}

fn datafusion_ipc_reader(
    body: &[u8],
) -> Result<logsieve_sql::format::StreamReader<io::Cursor<Vec<u8>>>, String> {
    logsieve_sql::format::StreamReader::try_new(io::Cursor::new(body.to_vec()), None)
        .map_err(|e| format!("the server's Arrow stream: {e}"))
}

/// The interactive prompt: statements ending in `;`, each run by `run`;
/// the last exit code. History in `~/.logsieve_sql_history` at a
/// terminal; without one, statements are read from stdin.
pub(crate) fn prompt(mut run: impl FnMut(&str) -> i32) -> i32 {
    let mut code = EXIT_NO_MATCH;
    if !io::stdin().is_terminal() {
        let mut buf = String::new();
        for line in io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            buf.push_str(&line);
            buf.push('\n');
            while let Some(i) = buf.find(';') {
                let stmt: String = buf.drain(..=i).collect();
                let stmt = stmt.trim().trim_end_matches(';').trim();
                if !stmt.is_empty() {
                    code = run(stmt);
                }
            }
        }
        let rest = buf.trim();
        if !rest.is_empty() {
            code = run(rest);
        }
        return code;
    }
    let Ok(mut rl) = rustyline::DefaultEditor::new() else {
        err("cannot open the terminal for the prompt");
        return EXIT_ERROR;
    };
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".logsieve_sql_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    eprintln!("logsieve sql: the table is logs; end a statement with ';', Ctrl-D to quit");
    let mut buf = String::new();
    loop {
        let p = if buf.is_empty() { "sql> " } else { "...> " };
        match rl.readline(p) {
            Ok(line) => {
                buf.push_str(&line);
                buf.push('\n');
                if line.trim_end().ends_with(';') {
                    let stmt = buf.trim().trim_end_matches(';').trim().to_string();
                    buf.clear();
                    if !stmt.is_empty() {
                        let _ = rl.add_history_entry(format!("{stmt};"));
                        code = run(&stmt);
                    }
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buf.clear(),
            Err(_) => break,
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    code
}

/// `logsieve sql --cluster ADDRS [QUERY]`.
fn cluster(addrs: &str, a: &SqlArgs, query: Option<&str>, fmt: Format) -> i32 {
    let run = || -> Result<(tokio::runtime::Runtime, ClusterEngine), String> {
        let urls = logsieve_cluster::worker_urls(addrs)?;
        let cluster = Arc::new(Cluster::new(urls, crate::input::token(&a.token_file)?));
        let limits = SqlLimits {
            pushdown: !a.no_pushdown,
            ..SqlLimits::local()
        };
        let rt =
            tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
        let engine = rt.block_on(ClusterEngine::connect(cluster, limits))?;
        Ok((rt, engine))
    };
    let (rt, engine) = match run() {
        Ok(x) => x,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let one = |q: &str| {
        let a = rt.block_on(timed(a.timing, engine.query(q)));
        answer(a, fmt)
    };
    match query {
        Some(q) => one(q),
        None => prompt(one),
    }
}
