"""Sparse Bloom filters (bf-sparse-max-bytes): memory by items held, and cost per call.

Memory: for n = 0 ... 2,000 items (16-character hex ids), MEMORY USAGE of
    set     SADD of the n ids
    dense   BF.RESERVE u 0.01 1000 EXPANSION 10 (the feed's per-user tier), then the n ids
    sparse  the same on a server with bf-sparse-max-bytes set, where the filter starts sparse
            and becomes the dense one once its hash pairs would outgrow it
and the same for a filter created by BF.ADD with the defaults (100 items at 1%).

Cost per call: usec_per_call (INFO commandstats, server time inside the command) of BF.ADD,
BF.EXISTS and BF.MEXISTS with 40 items on --filters filters of each encoding holding n items
(n = 10, 80 and, for a filter of capacity 100,000 under a 4 KiB setting, 250), run --runs
times, medians and the sparse/dense ratios reported; and a promotion (the BF.ADD that turns a
full sparse filter dense) against BF.RESERVE of the same filter.

Usage: sparse.py [--bloomrs PATH] [--sparse-max-bytes N] [--quick] [--out FILE]
"""

import os
import statistics
import sys

from machine import describe, write_result
from plots import plot_sparse_memory
from server import RedisServer, module_parser

TIER = ("0.01", 1000, "EXPANSION", 10)
MIX = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1


def item(key_no, index):
    """A 16-character id, distinct for every (key, index)."""
    return f"{(((key_no << 32) | index) * MIX) & MASK64:016x}"


def memory_points():
    return list(range(0, 101)) + list(range(110, 501, 10)) + list(range(550, 2001, 50))


def fill(client, key, key_no, n, command):
    pipe = client.pipeline(transaction=False)
    for start in range(0, n, 500):
        ids = [item(key_no, i) for i in range(start, min(n, start + 500))]
        pipe.execute_command(command, key, *ids)
    pipe.execute()


def memory_usage(client, key):
    return client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0") or 0


def memory_curve(plain, sparse):
    """MEMORY USAGE of each kind of value holding n ids, for every n of memory_points()."""
    rows = []
    for n in memory_points():
        row = {"n": n}
        fill(plain.client, f"set:{n}", n, n, "SADD")
        row["set"] = memory_usage(plain.client, f"set:{n}")
        for name, server in (("dense", plain), ("sparse", sparse)):
            key = f"tier:{n}"
            server.client.execute_command("BF.RESERVE", key, *TIER)
            fill(server.client, key, n, n, "BF.MADD")
            row[name] = memory_usage(server.client, key)
            row[name + "_type"] = server.client.type(key)
            key = f"auto:{n}"
            if n:
                fill(server.client, key, n, n, "BF.MADD")
            else:
                server.client.execute_command("BF.RESERVE", key, "0.01", 100)
            row[name + "_default"] = memory_usage(server.client, key)
        rows.append(row)
    return rows


def usec_per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}")
    return stats["usec_per_call"] if stats else None


def timed(client, commands, name):
    """Runs the pipelined commands after CONFIG RESETSTAT; the server's usec_per_call."""
    client.config_resetstat()
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    pipe.execute()
    return usec_per_call(client, name)


def call_costs(server, filters, n, reserve, run):
    """usec_per_call of BF.ADD, BF.EXISTS, BF.MEXISTS x40 on `filters` filters holding n ids."""
    c = server.client
    c.flushall()
    keys = [f"f:{k}" for k in range(filters)]
    pipe = c.pipeline(transaction=False)
    for k, key in enumerate(keys):
        pipe.execute_command("BF.RESERVE", key, *reserve)
        if n:
            pipe.execute_command("BF.MADD", key, *[item(k, i) for i in range(n)])
    pipe.execute()
    salt = 1_000_000 * (run + 1)
    return {
        # Half the lookups hit, half miss, as in the feed workload.
        "BF.EXISTS": timed(c, [("BF.EXISTS", key, item(k, (salt + k) % (2 * n + 1)))
                               for k, key in enumerate(keys)], "BF.EXISTS"),
        "BF.MEXISTS x40": timed(c, [("BF.MEXISTS", key, *[item(k, i % (2 * n + 1))
                                                         for i in range(salt, salt + 40)])
                                    for k, key in enumerate(keys)], "BF.MEXISTS"),
        "BF.ADD": timed(c, [("BF.ADD", key, item(k, salt)) for k, key in enumerate(keys)],
                        "BF.ADD"),
    }


def promotion_cost(plain, sparse, filters, full):
    """usec_per_call of the BF.ADD that promotes a full sparse filter, and of BF.RESERVE."""
    sparse.client.flushall()
    plain.client.flushall()
    keys = [f"p:{k}" for k in range(filters)]
    pipe = sparse.client.pipeline(transaction=False)
    for k, key in enumerate(keys):
        pipe.execute_command("BF.RESERVE", key, *TIER)
        pipe.execute_command("BF.MADD", key, *[item(k, i) for i in range(full)])
    pipe.execute()
    promote = timed(sparse.client, [("BF.ADD", key, item(k, full)) for k, key in enumerate(keys)],
                    "BF.ADD")
    assert sparse.client.type(keys[0]) == "MBbloom--", "the add promoted"
    reserve = timed(plain.client, [("BF.RESERVE", key, *TIER) for key in keys], "BF.RESERVE")
    return {"promoting BF.ADD": promote, "BF.RESERVE": reserve}


def median_costs(runs):
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def costs(plain, sparse, args):
    cases = [("10 items", 10, TIER), ("80 items", 80, TIER),
             ("250 items, capacity 100,000", 250, ("0.01", 100_000))]
    out = []
    for label, n, reserve in cases:
        dense = median_costs([call_costs(plain, args.filters, n, reserve, r)
                              for r in range(args.runs)])
        thin = median_costs([call_costs(sparse, args.filters, n, reserve, r)
                             for r in range(args.runs)])
        kind = sparse.client.type("f:0")
        out.append({"case": label, "sparse_type": kind, "dense": dense, "sparse": thin,
                    "ratio": {k: round(thin[k] / dense[k], 2) for k in dense}})
    promotions = [promotion_cost(plain, sparse, args.filters, 89) for _ in range(args.runs)]
    return out, median_costs(promotions)


def print_summary(result):
    print("     n    SET  dense  sparse  sparse/SET  (MEMORY USAGE, bytes; tier 1000 @ 1% x10)")
    for row in result["memory"]:
        if row["n"] in (0, 1, 2, 5, 10, 20, 50, 80, 89, 90, 100, 200, 500, 1000, 2000):
            ratio = row["sparse"] / row["set"] if row["set"] else float("nan")
            print(f"{row['n']:>6} {row['set']:>6} {row['dense']:>6} {row['sparse']:>7}"
                  f" {ratio:>10.2f}  {row['sparse_type']}")
    for case in result["costs"]:
        print(f"{case['case']} ({case['sparse_type']}): " + ", ".join(
            f"{k} {case['sparse'][k]:.2f}/{case['dense'][k]:.2f} us = {v}x"
            for k, v in case["ratio"].items()))
    p = result["promotion"]
    print(f"promotion: BF.ADD that promotes {p['promoting BF.ADD']:.2f} us, "
          f"BF.RESERVE {p['BF.RESERVE']:.2f} us")


def parse_args():
    parser = module_parser(__doc__)
    parser.add_argument("--sparse-max-bytes", type=int, default=4096)
    parser.add_argument("--filters", type=int, default=20_000, help="filters per cost run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2,000 filters, 3 runs")
    parser.add_argument("--out", default="docs/bench/sparse.json")
    args = parser.parse_args()
    if args.quick:
        args.filters, args.runs = 2_000, 3
    return args


def main():
    args = parse_args()
    if not os.path.isfile(args.bloomrs):
        sys.exit(f"no module at {args.bloomrs}")
    setting = ["--bf.bf-sparse-max-bytes", str(args.sparse_max_bytes)]
    with RedisServer(args.bloomrs) as plain, RedisServer(args.bloomrs, setting) as sparse:
        memory = memory_curve(plain, sparse)
        call, promotion = costs(plain, sparse, args)
    settings = vars(args) | {"bloomrs": os.path.basename(args.bloomrs),
                             "tier": list(TIER)}
    result = {"machine": describe(), "settings": settings, "memory": memory,
              "costs": call, "promotion": promotion}
    print_summary(result)
    write_result(args.out, result)
    print(f"wrote {args.out} and {plot_sparse_memory(args.out)}")


if __name__ == "__main__":
    main()
