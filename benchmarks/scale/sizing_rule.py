#!/usr/bin/python3
"""The sizing rule of docs/sizing.md (the same formulas as lib/train/server_count.cc, which --num-pservers -1
runs): the server count with the most modeled samples/s for a job, and the modeled step at each count.

    /usr/bin/python3 benchmarks/scale/sizing_rule.py --ranks 64 --ranks-per-node 4 --mb 0.94 --compute-ms 0.709 \
        --mode sync [--node-aggregation] [--link-gbps 100] [--update-gbs 12] [--batch 64] [--all]

--mb: the model's dense megabytes (what a trainer pushes, and pulls, per step); --compute-ms: a trainer's forward
and backward of one batch; --link-gbps: one node's link, each way; --update-gbs: GB/s of slot bytes a shard sums
(sync, 12 measured here) or applies (async: 8 for sgd, 4 for adam measured here); --node-aggregation: sync whose
trainers of a node push and pull once, through their leader (pstrain's --node-aggregation)."""
import argparse

ASYNC_SHARD_BUSY_CEILING = 0.65  # lib/train/server_count.h: kAsyncShardBusyCeiling


def step_seconds(ranks, per_node, servers, dense_bytes, compute_s, sync, link, update, node_pushes=False):
    trainers = ranks - servers
    k, m = min(servers, per_node), min(trainers, per_node)
    if sync and node_pushes:
        groups = -(-ranks // per_node) - servers // per_node  # the nodes holding trainers
        return (compute_s + 2 * max(k * groups / servers, 1) * dense_bytes / link
                + groups * dense_bytes / (servers * update) + 2 * (m - 1) * dense_bytes / update)
    if sync:
        return (compute_s + 2 * max(k * trainers / servers, m) * dense_bytes / link
                + trainers * dense_bytes / (servers * update))
    return max(compute_s + 2 * m * dense_bytes / link,
               trainers * dense_bytes / servers * max(k / link, 1 / update) / ASYNC_SHARD_BUSY_CEILING)


def choose(ranks, per_node, dense_bytes, compute_s, sync, link, update, node_pushes=False):
    """[(servers, step seconds, trainer-steps per second)] for 1..ranks/2, and the chosen count."""
    rows, best = [], None
    for servers in range(1, max(1, ranks // 2) + 1):
        step = step_seconds(ranks, per_node, servers, dense_bytes, compute_s, sync, link, update, node_pushes)
        rate = (ranks - servers) / step
        rows.append((servers, step, rate))
        if best is None or rate > best[2] * (1 + 1e-9):
            best = rows[-1]
    return rows, best[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--ranks-per-node", type=int, required=True)
    parser.add_argument("--mb", type=float, required=True)
    parser.add_argument("--compute-ms", type=float, required=True)
    parser.add_argument("--mode", choices=("sync", "async", "ssp"), default="sync")
    parser.add_argument("--node-aggregation", action="store_true")
    parser.add_argument("--link-gbps", type=float, default=100.0)
    parser.add_argument("--update-gbs", type=float)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--all", action="store_true", help="print every count, not only the chosen one")
    args = parser.parse_args()
    sync = args.mode == "sync"
    update = (args.update_gbs or (12.0 if sync else 8.0)) * 1e9
    rows, chosen = choose(args.ranks, args.ranks_per_node, args.mb * 1e6, args.compute_ms / 1e3, sync,
                          args.link_gbps * 1e9 / 8, update, args.node_aggregation)
    for servers, step, rate in rows:
        if args.all or servers == chosen:
            print(f"servers={servers} trainers={args.ranks - servers} step_ms={step * 1e3:.3f} "
                  f"samples_per_s={rate * args.batch:.0f}{'  <- chosen' if servers == chosen else ''}")


if __name__ == "__main__":
    main()
