//! `logsieve serve`'s flags.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::shared::{ColumnArgs, InputArgs};
use super::walk::WalkArgs;

impl From<GpuArg> for logsieve_server::GpuMode {
    fn from(g: GpuArg) -> Self {
        match g {
            GpuArg::Auto => logsieve_server::GpuMode::Auto,
            GpuArg::On => logsieve_server::GpuMode::On,
            GpuArg::Off => logsieve_server::GpuMode::Off,
        }
    }
}

/// `--gpu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum GpuArg {
    /// Keep the corpus on a hardware GPU when one exists (never a
    /// software adapter).
    #[default]
    Auto,
    /// Upload to the GPU, or exit 2 with the error.
    On,
    /// CPU only.
    Off,
}

/// `logsieve serve`. `--follow` follows growing files here; following
/// symbolic links (`-L`, `--follow` elsewhere) is `--follow-links`.
#[derive(Args, Debug)]
#[command(mut_arg("follow", |a| a.long("follow-links")))]
pub struct ServeArgs {
    /// Files and directories to serve (walked as `search` walks them).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Serve generated logs instead of files.
    #[arg(long, conflicts_with_all = ["paths", "follow_files"])]
    pub demo: bool,

    /// Answer from the cluster of these workers (`logsieve cluster
    /// worker`) instead of loading files: health, search (no context
    /// lines), stats, SQL and the page; other routes answer 501.
    #[arg(long, value_name = "ADDR[,ADDR...]", conflicts_with_all = ["paths", "follow_files", "demo"])]
    pub cluster: Option<String>,

    /// A file whose first line is the cluster workers' token.
    #[arg(long = "cluster-token-file", value_name = "FILE", requires = "cluster")]
    pub cluster_token_file: Option<PathBuf>,

    /// Lines to generate with --demo.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, requires = "demo")]
    pub lines: u64,

    /// Address and port to listen on (port 0: any free port; the printed
    /// line says which). Beyond loopback, --token-file is required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8788")]
    pub listen: SocketAddr,

    /// A file whose first line is the bearer token every request must
    /// carry (`Authorization: Bearer TOKEN`).
    #[arg(long = "token-file", value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// TLS certificate chain (PEM); with --tls-key, serve HTTPS.
    #[arg(long = "tls-cert", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// TLS private key (PEM).
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Allow browser pages from ORIGIN (repeatable); none: no CORS.
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Vec<String>,

    /// The page's in-browser engine (a folder built by
    /// scripts/build-web.sh); default: $LOGSIEVE_WEB_DIR, target/web beside
    /// this executable's folder, ~/.local/share/logsieve/web, ./target/web.
    /// Without one the page at / searches the served logs only.
    #[arg(long = "web-dir", value_name = "DIR")]
    pub web_dir: Option<PathBuf>,

    /// --follow and how it follows.
    #[command(flatten)]
    pub follow: FollowArgs,

    /// Keep the corpus on the GPU: auto, on, off.
    #[arg(long, value_enum, default_value_t = GpuArg::Auto)]
    pub gpu: GpuArg,

    /// --field, --time-format, --year.
    #[command(flatten)]
    pub columns: ColumnArgs,

    /// A query's deadline in seconds (504 past it).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,

    /// Queries running at once (429 past it).
    #[arg(long = "max-in-flight", value_name = "N", default_value_t = 64)]
    pub max_in_flight: usize,

    /// Live tails (`/api/v1/tail`, `/loki/api/v1/tail`) open at once (429
    /// past it; each costs one search of every appended batch; 0: none).
    #[arg(long = "max-tails", value_name = "N", default_value_t = 256)]
    pub max_tails: usize,

    /// While no query runs, a tiny GPU dispatch this often (`2ms`, `5ms`),
    /// so that a query after an idle pause finds the GPU's clocks up
    /// (off by default: it keeps the GPU from idling).
    #[arg(long = "keep-warm", value_name = "DURATION", value_parser = parse_keep_warm)]
    pub keep_warm: Option<std::time::Duration>,

    /// Largest request body in bytes (413 past it).
    #[arg(long = "max-body", value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_body: usize,

    /// -z, --no-mmap.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files a directory walk reads.
    #[command(flatten)]
    pub walk: WalkArgs,
}

/// `--follow` and its settings (`serve`, `cluster worker`).
#[derive(Args, Debug)]
pub struct FollowArgs {
    /// Follow the files: appended lines become searchable, new
    /// files in served directories are picked up, rotation (rename or
    /// copytruncate) and truncation are handled.
    #[arg(long = "follow")]
    pub follow_files: bool,

    /// With --follow: a last line without its newline is held back until
    /// it completes or the file has not grown for this many seconds.
    #[arg(long = "follow-idle", value_name = "SECS", default_value_t = 5.0)]
    pub follow_idle: f64,

    /// With --follow: poll the files at least this often, in seconds (the
    /// backstop when file events are lost).
    #[arg(long = "follow-interval", value_name = "SECS", default_value_t = 0.25)]
    pub follow_interval: f64,

    /// With --follow: no file events (inotify); poll on the timer only.
    #[arg(long = "follow-poll")]
    pub follow_poll: bool,

    /// With --follow: evict lines older than this before the newest line
    /// (its time, the log's clock: 7d, 12h, 1h30m). Evicted lines are
    /// dropped from memory and the GPU and no longer searchable; kept
    /// lines keep their line numbers and offsets (those of the whole
    /// file). Evicts once the oldest line is 1/8 older than the bound. A
    /// line without a timestamp has the time of the stamped line before
    /// it; a file without timestamps is bounded by --max-resident only.
    #[arg(long = "retain", value_name = "DURATION", requires = "follow_files",
          value_parser = parse_retain)]
    pub retain: Option<i64>,

    /// With --follow: hold at most this many bytes of lines (512M, 8G;
    /// K, M, G, T: powers of 1024). Past it the oldest lines are evicted
    /// down to 7/8 of it (as --retain: no longer searchable, numbers
    /// kept). The newest line is never evicted, so a single line larger
    /// than the bound stays, alone. An eviction copies the kept lines
    /// (and uploads them to the GPU) beside the held ones: keep the bound
    /// under half of the memory (and GPU memory) available, or the
    /// corpus is searched on the CPU after the eviction.
    #[arg(long = "max-resident", value_name = "SIZE", requires = "follow_files",
          value_parser = logsieve::gpu::parse_size)]
    pub max_resident: Option<u64>,
}

impl FollowArgs {
    /// The follower's settings (`None` without --follow), or what is
    /// wrong with them.
    pub fn settings(&self) -> Result<Option<logsieve_server::follow::FollowSettings>, String> {
        for (flag, v) in [
            ("--follow-idle", self.follow_idle),
            ("--follow-interval", self.follow_interval),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("{flag} {v}: expected a positive number of seconds"));
            }
        }
        Ok(self
            .follow_files
            .then(|| logsieve_server::follow::FollowSettings {
                idle: std::time::Duration::from_secs_f64(self.follow_idle),
                interval: std::time::Duration::from_secs_f64(self.follow_interval),
                force_poll: self.follow_poll,
                retention: logsieve::session::Retention {
                    max_age_ms: self.retain,
                    max_bytes: self.max_resident,
                },
                ..Default::default()
            }))
    }
}

/// `--keep-warm`: a duration such as `2ms` or `1s`, above zero and at
/// most a minute.
pub(crate) fn parse_keep_warm(s: &str) -> Result<std::time::Duration, String> {
    logsieve::stats::time::parse_duration(s.trim())
        .filter(|&ms| ms > 0 && ms <= 60_000)
        .map(|ms| std::time::Duration::from_millis(ms as u64))
        .ok_or_else(|| format!("{s:?}: expected a duration from 1ms to 1m, such as 2ms"))
}

/// `--retain`: a duration such as `7d` or `1h30m`, in ms.
fn parse_retain(s: &str) -> Result<i64, String> {
    logsieve::stats::time::parse_duration(s.trim())
        .filter(|&ms| ms > 0)
        .ok_or_else(|| format!("{s:?}: expected a duration such as 7d, 12h or 1h30m"))
}

#[cfg(test)]
mod tests {
    use super::parse_keep_warm;
    use std::time::Duration;

    #[test]
    fn keep_warm_takes_a_duration_from_a_millisecond_to_a_minute() {
        assert_eq!(parse_keep_warm("2ms"), Ok(Duration::from_millis(2)));
        assert_eq!(parse_keep_warm(" 1s "), Ok(Duration::from_secs(1)));
        assert_eq!(parse_keep_warm("1m"), Ok(Duration::from_secs(60)));
        for bad in ["", "0ms", "2", "fast", "2m", "-1ms"] {
            assert!(parse_keep_warm(bad).is_err(), "{bad:?}");
        }
    }
}
