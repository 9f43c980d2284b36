/*!
A logsieve cluster on datafusion-distributed: workers that hold their
shards resident, and SQL over all of them from any coordinator.

A worker ([`worker::serve`]) loads its files into one session once (on
its GPU when it has one) and serves datafusion-distributed's worker
service with logsieve's scan codec, and its status (shards, fields,
device, scans per shard) on the same port. A coordinator
([`coordinator::ClusterEngine`]) places each shard's scan on a live worker
holding it and runs the query through datafusion-distributed: the
`logs` table's filter, projection and limit pushdown run inside each
worker's own engine (the same [`logsieve_sql::table::LogsTable`] a local
query uses), and partial aggregates are computed there, so only their
results cross the network.

A shard is a file: workers given the same paths name it the same, and
`--shard-of I/N --replicas R` has each keep its share.
*/
#![deny(missing_docs)]

pub mod coordinator;
pub mod scan;
pub mod status;
pub mod worker;

pub use coordinator::{Cluster, ClusterEngine, Placement};
pub use status::{worker_url, worker_urls, ShardInfo, WorkerStatus};

/// The shards a worker keeps of `count` files (in sorted path order):
/// file `k`'s holders are workers `k mod n` and the `replicas - 1`
/// after it (`index` of `n` workers).
pub fn holds(k: usize, index: usize, n: usize, replicas: usize) -> bool {
    let n = n.max(1);
    let r = replicas.clamp(1, n);
    (index + n - k % n) % n < r
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn every_file_has_exactly_its_replicas() {
        for n in 1..6 {
            for r in 1..=n + 1 {
                for k in 0..20 {
                    let held = (0..n).filter(|&i| holds(k, i, n, r)).count();
                    assert_eq!(held, r.min(n), "n={n} r={r} k={k}");
                    assert!(holds(k, k % n, n, r), "the home worker holds it");
                }
            }
        }
    }
}
