//! The GPU tests' one rule for a machine without an adapter.

/// `r`'s value, or `None` with a loud message that the GPU tests named
/// `what` did not run; a panic instead when `LOGSIEVE_REQUIRE_GPU=1` (CI,
/// where a missing adapter is a failure, never a skip). Every test that
/// opens a GPU goes through here.
pub fn or_skip<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if std::env::var("LOGSIEVE_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("LOGSIEVE_REQUIRE_GPU=1 but no GPU: {e}");
            }
            eprintln!(
                "\n!!!!!!!! NO GPU ADAPTER: {what} SKIPPED ({e}) !!!!!!!!\n\
                 !!!!!!!! set LOGSIEVE_REQUIRE_GPU=1 to make this a failure !!!!!!!!\n"
            );
            None
        }
    }
}
