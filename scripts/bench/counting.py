"""Counting Bloom filters against plain Bloom and Cuckoo filters, on a real server.

Three measurements, written to docs/bench/counting.json:

1. Memory: bits per item of a non-scaling plain Bloom filter, a non-scaling counting filter
   and a non-expanding Cuckoo filter, each filled with --items distinct items, at error rates
   0.01, 0.001 and 0.0001, with the false-positive rate measured on --probes items never
   added. Cuckoo filters cannot choose an error rate (8-bit fingerprints give about
   2 * bucket size / 256): every bucket size from 1 to 4 is measured and the smallest filter
   whose measured rate is within the target is reported, or none.
2. Churn: a scaling counting filter reserved for --churn-adds items takes that many distinct
   items, then deletes --churn-deletes of them; the false-positive rate on items never added
   at the peak and after the deletes, whether every item still held reads present, the
   saturated counters and the deletes left undone (more than one link held the item). Then saturation under skew: the same
   number of adds drawn from a Zipf(1) distribution over --items distinct items (hot items
   added thousands of times), with the fraction of counters stuck at 15, and what they cost
   once every add is deleted again: items still read present, and the false-positive rate.
3. Speed: usec_per_call (INFO commandstats) of BF.ADD, BF.EXISTS and BF.DEL on a counting
   filter next to BF.ADD and BF.EXISTS on a plain one (and CF.DEL on a Cuckoo filter), through
   redis-benchmark as commandstats.py drives it, at capacity 100,000 and 10,000,000, medians of
   --runs runs.

Usage: counting.py [--bloomrs PATH] [--quick] [--out FILE]
"""

import json
import os
import random
import statistics
import sys

from commandstats import fill, measure
from machine import describe, write_result
from server import RedisServer, module_parser

RATES = (0.01, 0.001, 0.0001)
BUCKET_SIZES = (1, 2, 3, 4)
BATCH = 1000
SPEED_SIZES = {"small": 100_000, "large": 10_000_000}


def batches(items):
    for at in range(0, len(items), BATCH):
        yield items[at:at + BATCH]


def add_all(client, command, key, items, prefix=()):
    """Sends every item in pipelined batches; returns the replies, flattened."""
    replies = []
    pipe = client.pipeline(transaction=False)
    for batch in batches(items):
        pipe.execute_command(command, key, *prefix, *batch)
    for reply in pipe.execute(raise_on_error=False):
        replies.extend(reply if isinstance(reply, list) else [reply])
    return replies


def hits(client, command, key, probes):
    """How many of `probes` the filter answers present."""
    return sum(1 for r in add_all(client, command, key, probes) if r == 1)


def info(client, command, key):
    reply = client.execute_command(command, key)
    return dict(zip(reply[::2], reply[1::2]))


def memory_rows(client, items, probes):
    """Bits per item and measured false-positive rate of each filter at each error rate."""
    rows = []
    members = [f"m:{i}" for i in range(items)]
    strangers = [f"p:{i}" for i in range(probes)]
    for rate in RATES:
        row = {"error_rate": rate}
        for kind, extra in (("plain", ()), ("counting", ("COUNTING",))):
            key = f"{kind}:{rate}"
            client.execute_command("BF.RESERVE", key, rate, items, "NONSCALING", *extra)
            add_all(client, "BF.MADD", key, members)
            size = info(client, "BF.INFO", key)["Size"]
            row[kind] = {"bits_per_item": round(8 * size / items, 2),
                         "fp_rate": hits(client, "BF.MEXISTS", key, strangers) / probes}
            client.delete(key)
        row["cuckoo"] = cuckoo_within(client, rate, members, strangers)
        rows.append(row)
        print(f"  memory at {rate}: {row}", file=sys.stderr, flush=True)
    return rows


def cuckoo_within(client, rate, members, strangers):
    """The smallest Cuckoo filter (over bucket sizes) whose measured rate is within `rate`."""
    best = None
    for bucket in BUCKET_SIZES:
        key = f"cf:{bucket}"
        client.execute_command("CF.RESERVE", key, len(members), "BUCKETSIZE", bucket,
                               "EXPANSION", 1)
        replies = add_all(client, "CF.INSERT", key, members, prefix=("ITEMS",))
        size = info(client, "CF.INFO", key)["Size"]
        fp = hits(client, "CF.MEXISTS", key, strangers) / len(strangers)
        client.delete(key)
        entry = {"bucket_size": bucket, "bits_per_item": round(8 * size / len(members), 2),
                 "fp_rate": fp, "refused": sum(1 for r in replies if r != 1)}
        if fp <= rate and (best is None or entry["bits_per_item"] < best["bits_per_item"]):
            best = entry
    return best


def churn(client, rate, adds, deletes, probes):
    """Adds, then deletes of added items, on a scaling counting filter sized for the adds."""
    key = f"churn:{rate}"
    client.execute_command("BF.RESERVE", key, rate, adds, "COUNTING")
    added = [f"c:{i}" for i in range(adds)]
    add_all(client, "BF.MADD", key, added)
    strangers = [f"q:{i}" for i in range(probes)]
    fp_at_peak = hits(client, "BF.MEXISTS", key, strangers) / probes
    gone = added[:deletes]
    before = ambiguous(client)
    replies = add_all(client, "BF.MDEL", key, gone)
    kept = added[deletes:]
    present = hits(client, "BF.MEXISTS", key, kept)
    filter_info = info(client, "BF.INFO", key)
    result = {
        "error_rate": rate, "adds": adds, "deletes": deletes,
        "deleted": sum(1 for r in replies if r == 1),
        "undone_ambiguous": ambiguous(client) - before,
        "kept_read_present": present, "kept": len(kept),
        "fp_rate_at_peak": fp_at_peak,
        "fp_rate": hits(client, "BF.MEXISTS", key, strangers) / probes,
        "deleted_still_present_rate": hits(client, "BF.MEXISTS", key, gone) / len(gone),
        "links": filter_info["Number of filters"],
        "bits_per_item_held": round(8 * filter_info["Size"] / len(kept), 2),
        "saturated_counters": filter_info["Saturated counters"],
    }
    client.delete(key)
    print(f"  churn at {rate}: {result}", file=sys.stderr, flush=True)
    return result


def ambiguous(client):
    return int(client.info("bf")["bf_counting_ambiguous_deletes"])


def counters(client, key):
    """Counters in the filter: bits, summed over the links of BF.DEBUG."""
    lines = client.execute_command("BF.DEBUG", key)[1:]
    return sum(int(part.split(":")[1]) for line in lines for part in line.split()
               if part.startswith("bits:"))


def zipf_saturation(client, distinct, adds, probes, seed=7):
    """Saturated counters when hot items are added many times (Zipf(1) over `distinct`)."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(distinct)]
    draws = rng.choices(range(distinct), weights=weights, k=adds)
    hottest = draws.count(0)
    out = {}
    for capacity_factor in (1, 10):
        key = f"zipf:{capacity_factor}"
        client.execute_command("BF.RESERVE", key, 0.01, distinct * capacity_factor,
                               "NONSCALING", "COUNTING")
        adds_made = [f"z:{d}" for d in draws]
        add_all(client, "BF.MADD", key, adds_made)
        saturated = info(client, "BF.INFO", key)["Saturated counters"]
        total = counters(client, key)
        # What saturation costs: delete every add again; only stuck counters remain.
        add_all(client, "BF.MDEL", key, adds_made)
        strangers = [f"zq:{i}" for i in range(probes)]
        out[f"capacity {capacity_factor}x distinct"] = {
            "saturated": saturated, "counters": total,
            "saturated_fraction": saturated / total,
            "items_left": info(client, "BF.INFO", key)["Number of items inserted"],
            "distinct_still_present": hits(client, "BF.MEXISTS", key,
                                           [f"z:{d}" for d in range(distinct)]),
            "fp_rate_after_deleting_all": hits(client, "BF.MEXISTS", key, strangers) / probes,
        }
        client.delete(key)
    result = {"distinct": distinct, "adds": adds, "hottest_item_adds": hottest,
              "by_capacity": out}
    print(f"  zipf saturation: {result}", file=sys.stderr, flush=True)
    return result


def speed_cases(size, capacity):
    """(label, command, keyspace): reads draw from twice the items written, as commandstats.py."""
    reads, writes = 2 * capacity, capacity
    return [
        ("plain BF.ADD", ["BF.ADD", f"bf:{size}", "__rand_int__"], writes),
        ("plain BF.EXISTS", ["BF.EXISTS", f"bf:{size}", "__rand_int__"], reads),
        ("counting BF.ADD", ["BF.ADD", f"ct:{size}", "__rand_int__"], writes),
        ("counting BF.EXISTS", ["BF.EXISTS", f"ct:{size}", "__rand_int__"], reads),
        ("counting BF.DEL", ["BF.DEL", f"ct:{size}", "__rand_int__"], writes),
        ("cuckoo CF.DEL", ["CF.DEL", f"cf:{size}", "__rand_int__"], writes),
    ]


def speed_run(server, requests):
    client = server.client
    results = {}
    for size, capacity in SPEED_SIZES.items():
        client.delete(f"bf:{size}", f"ct:{size}", f"cf:{size}")
        client.execute_command("BF.RESERVE", f"bf:{size}", 0.01, capacity)
        client.execute_command("BF.RESERVE", f"ct:{size}", 0.01, capacity, "COUNTING")
        client.execute_command("CF.RESERVE", f"cf:{size}", capacity)
        fill(server, ["BF.MADD", f"bf:{size}"], capacity, capacity // 2)
        fill(server, ["BF.MADD", f"ct:{size}"], capacity, capacity // 2)
        fill(server, ["CF.INSERT", f"cf:{size}", "ITEMS"], capacity, capacity // 2)
        for name, command, keyspace in speed_cases(size, capacity):
            # As in commandstats.py: CF calls capped so the half-full filter never expands.
            calls = min(requests, capacity // 4) if name.startswith("cuckoo") else requests
            results[f"{size} {name}"] = measure(server, command, keyspace, calls)
    return results


def speed(module, runs, requests):
    with RedisServer(module) as server:
        all_runs = []
        for run in range(runs):
            print(f"  speed run {run + 1}/{runs}", file=sys.stderr, flush=True)
            all_runs.append(speed_run(server, requests))
    return {label: statistics.median(r[label]["usec_per_call"] for r in all_runs)
            for label in all_runs[0]}


def parse_args():
    parser = module_parser(__doc__)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--probes", type=int, default=1_000_000)
    parser.add_argument("--churn-adds", type=int, default=1_000_000)
    parser.add_argument("--churn-deletes", type=int, default=500_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true",
                        help="a tenth of the items, probes and churn; 50,000 requests")
    parser.add_argument("--out", default="docs/bench/counting.json")
    args = parser.parse_args()
    if args.quick:
        args.items //= 10
        args.probes //= 10
        args.churn_adds //= 10
        args.churn_deletes //= 10
        args.requests = 50_000
    return args


def main():
    args = parse_args()
    if not os.path.isfile(args.bloomrs):
        sys.exit(f"no module at {args.bloomrs}")
    machine = describe()
    with RedisServer(args.bloomrs) as server:
        client = server.client
        memory = memory_rows(client, args.items, args.probes)
        churns = [churn(client, rate, args.churn_adds, args.churn_deletes, args.probes)
                  for rate in RATES]
        skew = zipf_saturation(client, args.items, args.churn_adds, args.probes)
    usec = speed(args.bloomrs, args.runs, args.requests)
    settings = {key: getattr(args, key) for key in
                ("items", "probes", "churn_adds", "churn_deletes", "runs", "requests")}
    write_result(args.out, {"machine": machine, "settings": settings, "memory": memory,
                            "churn": churns, "zipf_saturation": skew, "usec_per_call": usec})
    print(f"wrote {args.out}")
    print_tables(args.out)


def percent(rate):
    return f"{100 * rate:.4g}%"


def print_tables(path):
    """The Markdown tables of docs/kinds/counting.md from a counting.json."""
    with open(path, encoding="utf-8") as src:
        data = json.load(src)
    print("| error rate | Bloom: bits/item (FP) | counting Bloom: bits/item (FP) "
          "| Cuckoo: bits/item (FP, bucket size) |")
    print("|---:|---:|---:|---:|")
    for row in data["memory"]:
        cuckoo = row["cuckoo"]
        cell = (f"{cuckoo['bits_per_item']} ({percent(cuckoo['fp_rate'])}, "
                f"{cuckoo['bucket_size']})" if cuckoo else "cannot reach it")
        print(f"| {row['error_rate']} | {row['plain']['bits_per_item']} "
              f"({percent(row['plain']['fp_rate'])}) | {row['counting']['bits_per_item']} "
              f"({percent(row['counting']['fp_rate'])}) | {cell} |")
    print()
    print("| error rate | adds | deletes | deleted | left (ambiguous) | false negatives "
          "| FP at peak | FP after deletes | deleted items still present | saturated counters "
          "| links |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in data["churn"]:
        print(f"| {row['error_rate']} | {row['adds']:,} | {row['deletes']:,} "
              f"| {row['deleted']:,} | {row['undone_ambiguous']:,} "
              f"| {row['kept'] - row['kept_read_present']} | {percent(row['fp_rate_at_peak'])} "
              f"| {percent(row['fp_rate'])} "
              f"| {percent(row['deleted_still_present_rate'])} | {row['saturated_counters']} "
              f"| {row['links']} |")
    print()
    skew = data["zipf_saturation"]
    for label, row in skew["by_capacity"].items():
        print(f"Zipf(1), {skew['adds']:,} adds over {skew['distinct']:,} items "
              f"(hottest added {skew['hottest_item_adds']:,} times), {label}: "
              f"{row['saturated']:,} of {row['counters']:,} counters saturated "
              f"({percent(row['saturated_fraction'])}); after deleting every add, "
              f"{row['distinct_still_present']:,} of {skew['distinct']:,} items still read "
              f"present and the false-positive rate is "
              f"{percent(row['fp_rate_after_deleting_all'])}")
    print()
    usec = data["usec_per_call"]
    print("| command | small (100k): usec/call | large (10M): usec/call |")
    print("|---|---:|---:|")
    for name in ("plain BF.ADD", "counting BF.ADD", "plain BF.EXISTS", "counting BF.EXISTS",
                 "counting BF.DEL", "cuckoo CF.DEL"):
        print(f"| {name} | {usec['small ' + name]:.3f} | {usec['large ' + name]:.3f} |")


if __name__ == "__main__":
    main()
