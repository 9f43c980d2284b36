//! LogQL parsing (`logsieve::logql::parse`): any input is a query or an
//! error whose position lies inside the input; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    if let Err(e) = logsieve::logql::parse(&src) {
        assert!(e.pos <= src.len(), "error offset {} past {}", e.pos, src.len());
        let _ = e.to_string();
    }
});
