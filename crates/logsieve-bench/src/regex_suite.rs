//! The regex suite: what an SRE or analyst types, shared by
//! the `regex` bench and the `regex-route` profile.

/// The suite: what people type when they hunt through logs.
pub const SUITE: &[&str] = &[
    r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b",
    r"192\.168\.1\.\d+",
    r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"trace=[0-9a-f]{32}",
    r"[0-9a-f]{32}",
    r"ERROR_5\d\d",
    r"latency_ms=\d{4,}",
    r"(?i)timeout|refused",
    r"\b(GET|POST) /api/v\d/",
    r"user=u1\d*7 ",
    r"at [\w.$]+\(\w+\.java:\d+\)",
    r"Exception: .*(reset|exhausted)",
    r#"HTTP/1\.[01]" [45]\d\d"#,
    r"\d{4}-\d\d-\d\dT\d\d:\d\d",
    r"sshd\[\d+\]: Failed password",
    r"port \d{5} ssh2",
    r"web-\d\d (ERROR|WARN)",
    r"\bu\d{5}\b",
    r"bytes=\d{6,}$",
    r"\[svc-(payments|billing)\]",
    r"[A-Z][a-z]+Exception",
    r"client=10\.\d+\.\d+\.\d+",
    r"latency_ms=1\d{3} ",
];
