//! The server's JSON request decoding and the conversion into a query
//! (`logsieve_server::api`): the real handlers (`search`, `stats`,
//! `patterns`, `PUT watchlists/NAME`) called in-process on a ready CPU
//! session over a small generated corpus, with the fuzzer's bytes as the
//! body. Checks: no panic; never a 5xx; an error is the documented shape
//! (`{"error": {"kind", "message"}}`) with a 4xx status.
//!
//! Input: byte 0 = route (modulo 4), then the body.
#![no_main]
// The server types nest deeply: the `Sync` check of the static World
// needs more than the default recursion limit.
#![recursion_limit = "256"]
use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use libfuzzer_sys::fuzz_target;
use logsieve::gen::{generate, GenOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, Session};
use logsieve_server::{api, AppState, Limits, Ready};

struct World {
    rt: tokio::runtime::Runtime,
    state: AppState,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let data = generate(&GenOptions {
            lines: 200,
            ..Default::default()
        });
        let corpus = Corpus::from_bytes("a.log", data);
        let fields: Vec<FieldSpec> = ["level", "host"]
            .iter()
            .filter_map(|n| FieldSpec::builtin(n))
            .collect();
        let cols = Columns::build(
            &corpus,
            &ColumnOptions {
                time_format: None,
                year: 2026,
                doc_years: vec![],
                doc_mtimes: vec![None],
                fields,
            },
        );
        let mut s = Session::new(corpus);
        s.set_columns(cols);
        let state = AppState::new(
            Limits {
                timeout: Duration::from_secs(5),
                max_in_flight: 4,
                max_body: 1 << 20,
                threads: 1,
                ..Limits::default()
            },
            None,
        );
        state.set_ready(Ready::new(s));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        World { rt, state }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&route, body)) = data.split_first() else {
        return;
    };
    let w = world();
    let st = || State(w.state.clone());
    let body: Result<Bytes, _> = Ok(Bytes::copy_from_slice(body));
    let resp: Response = w.rt.block_on(async {
        match route % 4 {
            0 => api::search(st(), body).await,
            1 => api::stats(st(), body).await,
            2 => api::patterns(st(), body).await,
            _ => api::watchlists::put_watchlist(st(), Path("fuzz".to_string()), body).await,
        }
    });
    let status = resp.status();
    let bytes = w.rt.block_on(async {
        axum::body::to_bytes(resp.into_body(), 64 << 20)
            .await
            .expect("the body is readable")
    });
    assert!(
        !status.is_server_error(),
        "{status}: {}",
        String::from_utf8_lossy(&bytes)
    );
    if !status.is_success() {
        assert!(status.is_client_error(), "{status}");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("an error body is JSON");
        assert!(v["error"]["kind"].is_string(), "{v}");
        assert!(v["error"]["message"].is_string(), "{v}");
    }
});
