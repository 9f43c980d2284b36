//! `logsieve cluster`: a worker holding its shards, and the cluster's
//! status.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::serve::{FollowArgs, GpuArg};
use super::shared::{ColumnArgs, EngineArgs, InputArgs};
use super::walk::WalkArgs;

/// `logsieve cluster worker|status`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// The cluster's commands.
#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Load files once (each a shard) and run their scans for
    /// coordinators (`logsieve sql --cluster`).
    Worker(Box<WorkerArgs>),
    /// List the workers: their shards, bytes, lines, device and scans.
    Status(StatusArgs),
}

/// `logsieve cluster worker --listen ADDR [PATH]...`. `--follow` follows
/// growing files here; following symbolic links is `--follow-links`.
#[derive(Args, Debug)]
#[command(mut_arg("follow", |a| a.long("follow-links")))]
pub struct WorkerArgs {
    /// Files and directories (walked as `search` walks them); each file
    /// is a shard, named by its path as given.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// Address and port to listen on (port 0: any free port; the printed
    /// `listening on ADDR` line says which). Beyond loopback,
    /// --token-file is required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,

    /// A file whose first line is the token every coordinator must send.
    #[arg(long = "token-file", value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Keep the shards on the GPU: auto (a hardware adapter only), on,
    /// off.
    #[arg(long, value_enum, default_value_t = GpuArg::Auto)]
    pub gpu: GpuArg,

    /// This worker is I of N (0-based) started with the same paths: it
    /// keeps the files (in sorted path order) k with k mod N = I, and
    /// with --replicas R those of the R-1 workers before it too.
    /// (Not with --follow: files come and go; give each worker the paths
    /// it follows, and two workers the same paths for two replicas.)
    #[arg(long = "shard-of", value_name = "I/N", value_parser = parse_share,
          conflicts_with = "follow_files")]
    pub shard_of: Option<(usize, usize)>,

    /// Workers holding each file (with --shard-of): 2 keeps every shard
    /// answerable with one worker down.
    #[arg(long, value_name = "R", default_value_t = 1, requires = "shard_of",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub replicas: u32,

    /// --follow: appended lines and new files in the given directories
    /// are served as they come (new files are new shards).
    #[command(flatten)]
    pub follow: FollowArgs,

    /// --field, --time-format, --year (the same on every worker).
    #[command(flatten)]
    pub columns: ColumnArgs,

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files are read.
    #[command(flatten)]
    pub walk: WalkArgs,

    /// -j, --backend.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `logsieve cluster status ADDR[,ADDR...]`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The workers, comma-separated HOST:PORT.
    #[arg(value_name = "ADDR[,ADDR...]")]
    pub addrs: String,

    /// A file whose first line is the workers' token.
    #[arg(long = "token-file", value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Print the statuses as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `I/N` with `I < N`.
fn parse_share(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("{s:?}: expected I/N (0/3, 1/3, 2/3)"))?;
    let (i, n): (usize, usize) = (
        i.trim()
            .parse()
            .map_err(|_| format!("{s:?}: I is not a number"))?,
        n.trim()
            .parse()
            .map_err(|_| format!("{s:?}: N is not a number"))?,
    );
    if n == 0 || i >= n {
        return Err(format!("{s:?}: expected 0 <= I < N"));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::parse_share;

    #[test]
    fn shares_parse_and_bad_ones_say_why() {
        assert_eq!(parse_share("1/3"), Ok((1, 3)));
        assert!(parse_share("3/3").unwrap_err().contains("I < N"));
        assert!(parse_share("0/0").is_err());
        assert!(parse_share("x/2").unwrap_err().contains("number"));
        assert!(parse_share("2").unwrap_err().contains("I/N"));
    }
}
