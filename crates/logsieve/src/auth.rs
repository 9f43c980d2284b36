//! Who may ask a network front end (`serve`, a cluster's workers): a
//! bearer token, required when listening beyond loopback.

use std::net::SocketAddr;

/// True when listening on `addr` needs a token: anything but a loopback
/// address can be reached by other machines.
pub fn token_required(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// The decision `logsieve serve` makes before binding: a non-loopback
/// address without a token is refused (exit 2 with this message).
pub fn check_listen(addr: &SocketAddr, has_token: bool) -> Result<(), String> {
    if token_required(addr) && !has_token {
        return Err(format!(
            "--listen {addr}: a non-loopback address needs --token-file FILE \
             (clients then send `Authorization: Bearer TOKEN`)"
        ));
    }
    Ok(())
}

/// Reads a token file: its first line, trimmed; empty is an error.
pub fn read_token_file(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty",
            path.display()
        ));
    }
    Ok(token)
}

/// Compares two byte strings in time that depends only on their lengths,
/// never on where they first differ, so a client cannot find the token a
/// byte at a time by timing 401s. Every byte of the longer string is
/// visited and the differences are ORed together; `black_box` keeps the
/// optimiser from turning the loop into an early-exit compare.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= std::hint::black_box(u64::from(x ^ y));
    }
    diff == 0
}

/// True when the `Authorization` header value carries `token`.
pub fn authorized(header: Option<&[u8]>, token: &str) -> bool {
    let Some(h) = header else { return false };
    let Some(given) = h.strip_prefix(b"Bearer ") else {
        return false;
    };
    constant_time_eq(given, token.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_required_beyond_loopback() {
        for (addr, needs) in [
            ("127.0.0.1:8788", false),
            ("127.0.0.2:0", false),
            ("[::1]:8788", false),
            ("0.0.0.0:8788", true),
            ("[::]:8788", true),
            ("192.168.1.7:80", true),
            ("10.0.0.1:8788", true),
        ] {
            let a: SocketAddr = addr.parse().unwrap();
            assert_eq!(token_required(&a), needs, "{addr}");
            assert_eq!(check_listen(&a, false).is_err(), needs, "{addr}");
            assert!(check_listen(&a, true).is_ok(), "{addr}");
        }
        let e = check_listen(&"0.0.0.0:1".parse().unwrap(), false).unwrap_err();
        assert!(e.contains("--token-file"), "{e}");
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
        assert!(authorized(Some(b"Bearer s3"), "s3"));
        assert!(!authorized(Some(b"bearer s3"), "s3"));
        assert!(!authorized(Some(b"Bearer s4"), "s3"));
        assert!(!authorized(None, "s3"));
    }
}
