"""Server-side cost per call of the filter commands, with GETBIT and SISMEMBER as the yardstick.

For BF.ADD, BF.EXISTS, BF.MADD and BF.MEXISTS (batches of 100), CF.ADD, CF.EXISTS and CF.DEL,
each on a small (100k capacity, fits in cache) and a large (10M capacity) filter at error rate
0.01, this drives the command with redis-benchmark (pipelined, random items, loopback), after a
CONFIG RESETSTAT, and reads usec_per_call from INFO commandstats: the time the server spent
inside the command, without networking or parsing. GETBIT and SISMEMBER are measured on the
same server in the same run. Every run starts from freshly created filters, half filled with
random items; the suite is repeated --runs times and medians are reported, together with the
pipelined throughput redis-benchmark saw.

--module PATH measures a second module build (e.g. RedisBloom's redisbloom.so, or an older
bloomrs) on a second server, alternating runs between the two, and prints the ratios.

Usage: commandstats.py [--runs N] [--requests N] [--quick] [--module PATH] [--out FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

from machine import describe
from plots import plot_commandstats
from server import RedisServer

ERROR_RATE = 0.01
BATCH = 100
SIZES = {"small": 100_000, "large": 10_000_000}
PIPELINE = 16
CLIENTS = 50
BENCH_TIMEOUT_S = 300
GETBIT_LUA = "return redis.call('GETBIT', KEYS[1], tonumber(ARGV[1]))"


def rand_items(n):
    """n placeholders; redis-benchmark draws each one independently."""
    return ["__rand_int__"] * n


def cases(size, capacity, bitmap_bits, requests):
    """(label, command, keyspace, calls) for one filter size, yardsticks first.

    Reads draw items from twice the range that was written, so at least half of the lookups
    are misses, as in the feed workload. CF.ADD is capped at a quarter of the capacity so a
    half-filled cuckoo filter never reaches its load limit and expands during the run.
    """
    reads, writes = 2 * capacity, capacity
    batch_calls = max(1, requests // 10)
    cf_calls = min(requests, capacity // 4)
    bitmap = f"bits:{size}"
    return [
        # redis-benchmark pads __rand_int__ to 12 digits and GETBIT rejects a zero-padded offset.
        # So GETBIT runs twice: at a fixed offset in the middle of a bitmap as large as the
        # filter (always cached: dispatch + key lookup + one cached read, the floor any
        # single-key command pays), and at a random offset through a Lua wrapper that turns the
        # padded number into an integer. commandstats counts the GETBIT inside the script on
        # its own, so both rows are the server time of GETBIT alone; the random one adds the
        # cache miss that a filter probe also pays.
        ("GETBIT", ["GETBIT", bitmap, str(bitmap_bits // 2)], None, requests),
        ("GETBIT random", ["EVAL", GETBIT_LUA, "1", bitmap, "__rand_int__"], bitmap_bits,
         requests),
        ("SISMEMBER", ["SISMEMBER", f"set:{size}", "__rand_int__"], capacity, requests),
        ("BF.EXISTS", ["BF.EXISTS", f"bf:{size}", "__rand_int__"], reads, requests),
        ("BF.MEXISTS", ["BF.MEXISTS", f"bf:{size}", *rand_items(BATCH)], reads, batch_calls),
        ("CF.EXISTS", ["CF.EXISTS", f"cf:{size}", "__rand_int__"], reads, requests),
        ("BF.ADD", ["BF.ADD", f"bf:{size}", "__rand_int__"], writes, requests),
        ("BF.MADD", ["BF.MADD", f"bf:{size}", *rand_items(BATCH)], writes, batch_calls),
        ("CF.ADD", ["CF.ADD", f"cf:{size}", "__rand_int__"], writes, cf_calls),
        ("CF.DEL", ["CF.DEL", f"cf:{size}", "__rand_int__"], writes, cf_calls),
    ]


def stat_name(command):
    """The INFO commandstats entry of a case: the inner command for the Lua wrapper."""
    return "getbit" if command[0] == "EVAL" else command[0].lower()


def redis_benchmark(port, command, keyspace, calls):
    """Runs redis-benchmark pipelined on loopback; returns its requests per second."""
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(CLIENTS),
           "-P", str(PIPELINE), "-n", str(calls), "--csv"]
    if keyspace:
        cmd += ["-r", str(keyspace)]
    out = subprocess.run(cmd + command, capture_output=True, text=True, check=True,
                         timeout=BENCH_TIMEOUT_S).stdout
    last = out.strip().splitlines()[-1]
    return float(last.split('","')[1])


def fill(server, command, keyspace, items):
    """Adds `items` random items in batches of BATCH (not measured)."""
    redis_benchmark(server.port, command + rand_items(BATCH), keyspace, max(1, items // BATCH))


def create_filters(server, size, capacity):
    """Fresh Bloom and Cuckoo filters for one size, half filled with random items."""
    client = server.client
    client.delete(f"bf:{size}", f"cf:{size}")
    client.execute_command("BF.RESERVE", f"bf:{size}", ERROR_RATE, capacity)
    client.execute_command("CF.RESERVE", f"cf:{size}", capacity)
    fill(server, ["BF.MADD", f"bf:{size}"], capacity, capacity // 2)
    fill(server, ["CF.INSERT", f"cf:{size}", "ITEMS"], capacity, capacity // 2)


def create_yardsticks(server, size, capacity):
    """A bitmap as large as the Bloom filter and a set filled like it; returns the bitmap's bits."""
    client = server.client
    client.execute_command("BF.RESERVE", "bf:probe", ERROR_RATE, capacity)
    bits = 8 * int(client.execute_command("BF.INFO", "bf:probe", "SIZE")[0])
    client.delete("bf:probe")
    client.setbit(f"bits:{size}", bits - 1, 1)
    fill(server, ["SADD", f"set:{size}"], capacity, capacity // 2)
    return bits


def measure(server, command, keyspace, calls):
    """usec_per_call from INFO commandstats after a reset, and the pipelined throughput."""
    server.client.config_resetstat()
    rps = redis_benchmark(server.port, command, keyspace, calls)
    stat = server.client.info("commandstats").get(f"cmdstat_{stat_name(command)}")
    if not stat or stat["failed_calls"] or stat["rejected_calls"] or stat["calls"] < calls:
        raise RuntimeError(f"{command[0]}: unexpected commandstats {stat}")
    # usec / calls rather than the rounded usec_per_call field: two decimals are too coarse
    # for GETBIT.
    return {"usec_per_call": stat["usec"] / stat["calls"], "calls": stat["calls"], "rps": rps}


def one_run(server, bitmaps, requests):
    """Every case on both sizes, each on freshly created filters."""
    results = {}
    for size, capacity in SIZES.items():
        create_filters(server, size, capacity)
        for name, command, keyspace, calls in cases(size, capacity, bitmaps[size], requests):
            results[f"{size} {name}"] = measure(server, command, keyspace, calls)
    return results


def medians(runs):
    """The median usec_per_call and rps of every case over the runs."""
    return {label: {key: statistics.median(run[label][key] for run in runs)
                    for key in ("usec_per_call", "rps")}
            for label in runs[0]}


def targets(median):
    """The issue's performance targets with the measured ratios and whether each is met.

    The GETBIT targets are judged against both GETBIT rows: the fixed offset (cached) and the
    random offset (a cache miss in a bitmap as large as the filter).
    """
    rows = []
    for size, limit in (("small", 2.0), ("large", 3.0)):
        for command in ("BF.EXISTS", "BF.ADD"):
            cost = median[f"{size} {command}"]["usec_per_call"]
            for yardstick in ("GETBIT", "GETBIT random"):
                ratio = cost / median[f"{size} {yardstick}"]["usec_per_call"]
                rows.append({"target": f"{size} {command} <= {limit:g}x {yardstick}",
                             "ratio": round(ratio, 2), "met": ratio <= limit})
        per_item = median[f"{size} BF.MEXISTS"]["usec_per_call"] / BATCH
        ratio = per_item / median[f"{size} BF.EXISTS"]["usec_per_call"]
        rows.append({"target": f"{size} BF.MEXISTS per item <= 0.5x BF.EXISTS",
                     "ratio": round(ratio, 3), "met": ratio <= 0.5})
    return rows


def print_table(results):
    """The median table, with the other module and the ratio when there is one."""
    names = list(results)
    header = f"{'case':<18}" + "".join(f"{n[:14] + ' us/call':>22}{'calls/s':>12}" for n in names)
    print(header + (f"{'ratio':>8}" if len(names) == 2 else ""))
    for label in results[names[0]]["median"]:
        row = [results[n]["median"][label] for n in names]
        line = f"{label:<18}" + "".join(f"{r['usec_per_call']:>22.3f}{r['rps']:>12.0f}" for r in row)
        if len(row) == 2:
            line += f"{row[1]['usec_per_call'] / row[0]['usec_per_call']:>8.2f}"
        print(line)


def print_targets(rows):
    for row in rows:
        print(f"  {'met   ' if row['met'] else 'MISSED'} {row['target']}: {row['ratio']}")


def run_suite(modules, runs, requests):
    """Starts one server per module, alternates the runs between them, returns all results."""
    results = {name: {"module": os.path.basename(path), "runs": []}
               for name, path in modules.items()}
    servers = {name: RedisServer(path) for name, path in modules.items()}
    try:
        bitmaps = {}
        for name, server in servers.items():
            server.__enter__()
            bitmaps[name] = {s: create_yardsticks(server, s, c) for s, c in SIZES.items()}
        order = list(servers)
        for run in range(runs):
            for name in order if run % 2 == 0 else reversed(order):
                print(f"run {run + 1}/{runs} on {name}", file=sys.stderr, flush=True)
                results[name]["runs"].append(one_run(servers[name], bitmaps[name], requests))
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    for entry in results.values():
        entry["median"] = medians(entry["runs"])
        entry["targets"] = targets(entry["median"])
    return results


def parse_args():
    default_so = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"),
                              "release", "libbloomrs.so")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bloomrs", default=default_so, help="the bloomrs build to measure")
    parser.add_argument("--module", help="another module build to measure side by side")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200_000,
                        help="calls per single-item case (batch cases make a tenth)")
    parser.add_argument("--quick", action="store_true", help="3 runs of 50,000 requests")
    parser.add_argument("--out", default="docs/bench/commandstats.json")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.requests = 3, 50_000
    return args


def main():
    args = parse_args()
    modules = {"bloomrs": args.bloomrs}
    if args.module:
        modules[os.path.basename(args.module)] = args.module
    for path in modules.values():
        if not os.path.isfile(path):
            sys.exit(f"no module at {path}")
    settings = {"runs": args.runs, "requests": args.requests, "pipeline": PIPELINE,
                "clients": CLIENTS, "batch": BATCH, "error_rate": ERROR_RATE, "sizes": SIZES}
    machine = describe()
    results = run_suite(modules, args.runs, args.requests)
    print_table(results)
    for name, entry in results.items():
        print(f"targets ({name}):")
        print_targets(entry["targets"])
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump({"machine": machine, "settings": settings, "results": results}, out, indent=1)
    png = plot_commandstats(args.out)
    print(f"wrote {args.out} and {png}")


if __name__ == "__main__":
    main()
