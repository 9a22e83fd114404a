"""Compact Bloom filters (COMPACT): memory against the one-link floor, false positives, speed.

Memory: MEMORY USAGE (SAMPLES 0) of filters holding n 16-character ids, for n in N_POINTS and
error rates 0.01 and 0.001, of
    set      a SET of the ids (the same at both rates)
    tiers    BF.RESERVE k e 1000 EXPANSION 10 (the feed's per-user tiers), then the ids
    sparse   the same on a server with bf-sparse-max-bytes 2048
    compact  BF.RESERVE k e 1000 COMPACT, then the ids
    floor    BF.RESERVE k e n NONSCALING: one link sized for exactly n, as if the filter knew
             its future
with compact/floor at each n, its geometric mean over N_TARGETS and its maximum, and compact
against the tiers at every n (small n included). The false-positive rate of the compact filter
is measured at each n with --probes absent ids.

Speed: usec_per_call (INFO commandstats: server time inside the command) of
    BF.EXISTS on a compact filter grown from capacity 100 to --big items against a one-link
              filter reserved for them (BF.RESERVE k 0.01 <big>) holding the same items
    BF.MEXISTS of 40 ids on a compact filter grown 1,000 -> 111,000 against the 3-tier filter
    BF.ADD    while growing the compact filter against adding the same ids to the one link
and the longest single command while a compact filter grows to --longest items (SLOWLOG)
against BF.RESERVE of a one-link filter of that size. Each speed case runs --runs times on a
fresh server; medians are reported. The machine is shared and has 2 cores: the ratios, taken
within one run, are what to read.

Deletes (COMPACT COUNTING): bits per item at 1% against the counting kind and a cuckoo filter
(bucket size 1), and the churn of counting.py: --churn adds, then half of them deleted, with the
false-positive rate at the peak and after, and the false negatives (must be 0).

Usage: compact.py [--bloomrs PATH] [--quick] [--out FILE]
"""

import argparse
import json
import math
import os
import statistics
import sys

from machine import describe
from server import RedisServer

N_TARGETS = [100, 200, 500, 1000, 1500, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
N_SMALL = [1, 2, 5, 10, 20, 50]
MIX = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1
BATCH = 1000


def ident(space, index):
    """A 16-character id, distinct for every (space, index)."""
    return f"{(((space << 40) | index) * MIX) & MASK64:016x}"


def ids(space, start, stop):
    return [ident(space, i) for i in range(start, stop)]


def add(client, key, space, start, stop, command="BF.MADD"):
    pipe = client.pipeline(transaction=False)
    for begin in range(start, stop, BATCH):
        pipe.execute_command(command, key, *ids(space, begin, min(stop, begin + BATCH)))
    return pipe.execute()


def present(client, key, space, start, stop):
    pipe = client.pipeline(transaction=False)
    for begin in range(start, stop, BATCH):
        pipe.execute_command("BF.MEXISTS", key, *ids(space, begin, min(stop, begin + BATCH)))
    return sum(sum(reply) for reply in pipe.execute())


def usage(client, key):
    return client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0") or 0


def memory(module, points, probes):
    """One row per (error, n): the bytes of every kind of value holding n ids."""
    rows = []
    with RedisServer(module) as plain, RedisServer(module) as sparse:
        sparse.client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "2048")
        for error in (0.01, 0.001):
            e = str(error)
            for server in (plain, sparse):
                server.client.execute_command("BF.RESERVE", "tiers", e, 1000, "EXPANSION", 10)
            plain.client.execute_command("BF.RESERVE", "compact", e, 1000, "COMPACT")
            held = 0
            for n in points:
                space = 1 if error == 0.01 else 2
                for server in (plain, sparse):
                    add(server.client, "tiers", space, held, n)
                add(plain.client, "compact", space, held, n)
                if error == 0.01:
                    add(plain.client, "set", space, held, n, "SADD")
                held = n
                plain.client.execute_command("BF.RESERVE", "floor", e, max(n, 1), "NONSCALING")
                add(plain.client, "floor", space, 0, n)
                row = {
                    "error": error,
                    "n": n,
                    "tiers": usage(plain.client, "tiers"),
                    "sparse": usage(sparse.client, "tiers"),
                    "compact": usage(plain.client, "compact"),
                    "floor": usage(plain.client, "floor"),
                    "compact_type": plain.client.type("compact"),
                }
                if error == 0.01:
                    row["set"] = usage(plain.client, "set")
                if n >= 100:
                    found = present(plain.client, "compact", 9, 0, probes)
                    row["fp_rate"] = found / probes
                    assert present(plain.client, "compact", space, 0, n) == n, "a false negative"
                plain.client.delete("floor")
                rows.append(row)
                print(f"  e={error} n={n}: compact {row['compact']} floor {row['floor']} "
                      f"tiers {row['tiers']}", file=sys.stderr)
            for server in (plain, sparse):
                server.client.delete("tiers", "compact", "set")
    return rows


def summary(rows):
    out = {}
    for error in (0.01, 0.001):
        at = [r for r in rows if r["error"] == error and r["n"] in N_TARGETS]
        ratios = [r["compact"] / r["floor"] for r in at]
        tier_ratios = [r["tiers"] / r["floor"] for r in at]
        above_tiers = [r["n"] for r in rows if r["error"] == error and r["compact"] > r["tiers"]]
        fp = [r["fp_rate"] / error for r in rows if r["error"] == error and "fp_rate" in r]
        out[str(error)] = {
            "geomean_compact_over_floor": math.exp(statistics.fmean(map(math.log, ratios))),
            "max_compact_over_floor": max(ratios),
            "geomean_tiers_over_floor": math.exp(statistics.fmean(map(math.log, tier_ratios))),
            "n_where_compact_above_tiers": above_tiers,
            "max_fp_over_error": max(fp) if fp else None,
        }
    return out


def per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}")
    return stats["usec_per_call"] if stats else None


def timed(client, command, key, items, per_command=1):
    """usec_per_call of `command key item...` over the items (per_command items per call)."""
    client.execute_command("CONFIG", "RESETSTAT")
    pipe = client.pipeline(transaction=False)
    for begin in range(0, len(items), per_command):
        pipe.execute_command(command, key, *items[begin:begin + per_command])
        if len(pipe) >= 2000:
            pipe.execute()
    pipe.execute()
    return per_call(client, command)


def speed_once(module, big):
    out = {}
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("BF.RESERVE", "compact", "0.01", 100, "COMPACT")
        c.execute_command("BF.RESERVE", "link", "0.01", big)
        items = ids(3, 0, big)
        out["add_compact"] = timed(c, "BF.ADD", "compact", items)
        out["add_link"] = timed(c, "BF.ADD", "link", items)
        probes = ids(3, 0, 100_000) + ids(4, 0, 100_000)
        out["exists_compact"] = timed(c, "BF.EXISTS", "compact", probes)
        out["exists_link"] = timed(c, "BF.EXISTS", "link", probes)
        c.delete("compact", "link")
        c.execute_command("BF.RESERVE", "compact", "0.01", 1000, "COMPACT")
        c.execute_command("BF.RESERVE", "tiers", "0.01", 1000, "EXPANSION", 10)
        add(c, "compact", 5, 0, 111_000)
        add(c, "tiers", 5, 0, 111_000)
        probes = ids(5, 0, 40_000) + ids(6, 0, 40_000)
        out["mexists40_compact"] = timed(c, "BF.MEXISTS", "compact", probes, 40)
        out["mexists40_tiers"] = timed(c, "BF.MEXISTS", "tiers", probes, 40)
        out["tiers_links"] = c.execute_command("BF.INFO", "tiers", "FILTERS")[0]
    return out


def longest(module, items):
    """The longest single BF.MADD (of 1,000 ids) while a compact filter grows to `items`, and
    BF.RESERVE of one link that size, in microseconds (SLOWLOG)."""
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 0)
        c.execute_command("CONFIG", "SET", "slowlog-max-len", 100_000)
        c.execute_command("BF.RESERVE", "compact", "0.01", 1000, "COMPACT")
        worst = 0
        for begin in range(0, items, 200_000):
            c.execute_command("SLOWLOG", "RESET")
            add(c, "compact", 7, begin, min(items, begin + 200_000))
            for entry in c.slowlog_get(100_000):
                if "BF.MADD" in str(entry["command"]).upper():
                    worst = max(worst, entry["duration"])
        c.execute_command("SLOWLOG", "RESET")
        c.execute_command("BF.RESERVE", "link", "0.01", items)
        reserve = max(e["duration"] for e in c.slowlog_get(10)
                      if "BF.RESERVE" in str(e["command"]).upper())
        size = c.execute_command("BF.INFO", "compact", "SIZE")[0]
    return {"items": items, "longest_madd_us": worst, "reserve_us": reserve,
            "compact_bytes": size}


def deletes(module, n, churn):
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("BF.RESERVE", "cc", "0.01", n, "COMPACT", "COUNTING")
        c.execute_command("BF.RESERVE", "ct", "0.01", n, "COUNTING")
        c.execute_command("CF.RESERVE", "cf", n, "BUCKETSIZE", 1)
        add(c, "cc", 8, 0, n)
        add(c, "ct", 8, 0, n)
        pipe = c.pipeline(transaction=False)
        for begin in range(0, n, BATCH):
            pipe.execute_command("CF.INSERT", "cf", "ITEMS", *ids(8, begin, min(n, begin + BATCH)))
        pipe.execute()
        bits = {k: usage(c, k) * 8 / n for k in ("cc", "ct", "cf")}
        c.execute_command("BF.RESERVE", "churn", "0.01", 1000, "COMPACT", "COUNTING")
        add(c, "churn", 10, 0, churn)
        probes = 200_000
        fp_peak = present(c, "churn", 11, 0, probes) / probes
        pipe = c.pipeline(transaction=False)
        for begin in range(0, churn // 2, BATCH):
            pipe.execute_command("BF.MDEL", "churn", *ids(10, begin, min(churn // 2, begin + BATCH)))
        pipe.execute()
        kept = churn - churn // 2
        false_negatives = kept - present(c, "churn", 10, churn // 2, churn)
        fp_after = present(c, "churn", 11, 0, probes) / probes
        return {
            "items": n,
            "bits_per_item": {"compact_counting": bits["cc"], "counting": bits["ct"],
                              "cuckoo_bucket1": bits["cf"]},
            "churn": {"adds": churn, "deletes": churn // 2, "fp_peak": fp_peak,
                      "fp_after": fp_after, "false_negatives": false_negatives,
                      "bytes_after": usage(c, "churn")},
        }


def plot(data, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    for axis, error in zip(axes, (0.01, 0.001)):
        rows = [r for r in data["memory"] if r["error"] == error]
        n = [r["n"] for r in rows]
        for name, label, style, color in (
            ("set", "SET of the ids", ":", "#7f7f7f"),
            ("tiers", "tiers (RESERVE e 1000 EXPANSION 10)", "-", "#1f77b4"),
            ("sparse", "tiers, sparse start (2 KiB)", "--", "#2ca02c"),
            ("compact", "compact (RESERVE e 1000 COMPACT)", "-", "#d62728"),
            ("floor", "one link sized for exactly n", "-.", "#9467bd"),
        ):
            values = [r.get(name) for r in rows]
            if all(v is not None for v in values):
                axis.plot(n, values, linestyle=style, label=label, color=color,
                          linewidth=2.5 if name == "compact" else 1.2)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("items held (16-character ids)")
        axis.set_ylabel("MEMORY USAGE (bytes)")
        axis.set_title(f"error rate {error}")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    m = data["machine"]
    figure.suptitle(f"{m.get('cpu')}, {m.get('cores')} cores; {m.get('redis_server')}; "
                    f"commit {m.get('git_commit', '')}", fontsize=8)
    figure.tight_layout()
    figure.savefig(out_png, dpi=110)
    plt.close(figure)


def main():
    default_so = os.path.join(os.path.dirname(__file__), "../../target/release/libbloomrs.so")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bloomrs", default=default_so)
    parser.add_argument("--probes", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--longest", type=int, default=10_000_000)
    parser.add_argument("--churn", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="n up to 100,000, a 300,000-item speed case, 1 run, 2M longest")
    parser.add_argument("--out", default="docs/bench/compact.json")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw the plot of an existing --out file")
    args = parser.parse_args()
    if args.plot_only:
        with open(args.out) as f:
            plot(json.load(f), args.out.replace(".json", "-memory.png"))
        return
    points = sorted(set(N_SMALL + N_TARGETS))
    if args.quick:
        points = [n for n in points if n <= 100_000]
        args.big, args.runs, args.longest, args.churn = 300_000, 1, 2_000_000, 200_000
        args.probes = 50_000
    data = {"machine": describe(),
            "settings": vars(args) | {"bloomrs": os.path.basename(args.bloomrs)}}
    print("== memory and false positives", file=sys.stderr)
    data["memory"] = memory(args.bloomrs, points, args.probes)
    data["summary"] = summary(data["memory"])
    print("== speed", file=sys.stderr)
    runs = [speed_once(args.bloomrs, args.big) for _ in range(args.runs)]
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    median["ratio_exists"] = median["exists_compact"] / median["exists_link"]
    median["ratio_mexists40"] = median["mexists40_compact"] / median["mexists40_tiers"]
    median["ratio_add"] = median["add_compact"] / median["add_link"]
    data["speed"] = {"runs": runs, "median": median, "big": args.big}
    print("== longest command while growing", file=sys.stderr)
    data["longest"] = longest(args.bloomrs, args.longest)
    print("== deletes", file=sys.stderr)
    data["deletes"] = deletes(args.bloomrs, 100_000, args.churn)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)
    plot(data, args.out.replace(".json", "-memory.png"))
    print(json.dumps({"summary": data["summary"], "speed": median,
                      "longest": data["longest"], "deletes": data["deletes"]}, indent=1))


if __name__ == "__main__":
    main()
