"""Static sets (BF.RESERVE ... STATIC, then BF.FREEZE: a binary fuse filter) against
RedisBloom's filter: memory, measured false-positive rate, lookup speed, and the freeze itself.

Memory: for every --memory-items n and rate (1 %, 0.1 %, 0.01 %), the yardstick holds a
one-link filter sized for n at that rate (BF.RESERVE key rate n NONSCALING) and bloomrs a
static set of the same n items, frozen; MEMORY USAGE of both, the builder's bytes per item
before the freeze, and the false-positive rate each measured over --probes items never added.

Memory at scale (--scale-items n, e.g. 100000000): one builder of n items is loaded once at 1 %
and copied at each rate through SCANDUMP/LOADCHUNK with the header's rate and fingerprint width
changed (the same hashes: loading n items three times would take most of an hour here), then
frozen; the yardstick's bytes are MEMORY USAGE of an empty BF.RESERVE key rate n NONSCALING (a
one-link filter allocates its whole array at creation, so its usage does not change as items
are added; its rate is not measured at this size), the static set's rate is measured as above.

Speed: --speed-items items at 1 % in the yardstick's BF.RESERVE key 0.01 n (one link) and in a
frozen static set, both probed by redis-benchmark (pipelined, random items from twice the items
held, so half the lookups miss) after a CONFIG RESETSTAT: usec_per_call of BF.EXISTS and of
BF.MEXISTS of 40 from INFO commandstats, the medians of --rounds rounds with the servers
alternating within each.

Freeze: a primary with a replica (both bloomrs) holds a builder of --freeze-items items; while
BF.FREEZE runs, one client on the primary and one on the replica send PING and BF.EXISTS of a
small filter back to back, and the longest any of them waited is reported with the freeze's time
(until its reply) and the time until the replica holds the frozen value. With --profile DIR,
`perf record` samples each server's main thread (where a client waits) for the length of the
freeze, and the top symbols of each are printed (DIR/primary-N.data, DIR/replica-N.data).

The yardstick is RedisBloom's module with --redisbloom PATH, else bloomrs's plain kind, whose
layout and MEMORY USAGE are RedisBloom's byte for byte.

Usage: static.py [--redisbloom PATH] [--memory-items 10000,1000000] [--speed-items N]
                 [--freeze-items N,...] [--rounds N] [--requests N] [--probes N] [--out FILE]
                 [--scale-items N] [--profile DIR]
"""

import math
import os
import statistics
import struct
import subprocess
import sys
import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from commandstats import load_items, measure
from machine import describe, write_result
from server import RedisServer, module_parser

RATES = [0.01, 0.001, 0.0001]
BATCH = 40


def false_positive_rate(client, key, probes):
    """The share of `probes` items never added that the filter reports present."""
    hits = 0
    pipe = client.pipeline(transaction=False)
    for start in range(0, probes, 2_000):
        end = min(start + 2_000, probes)
        pipe.execute_command("BF.MEXISTS", key, *(f"absent:{i}" for i in range(start, end)))
    for reply in pipe.execute():
        hits += sum(int(r) for r in reply)
    return hits / probes


def unhurried(server):
    """A connection with no timeout that never retries, for BF.FREEZE of many items (redis-py
    times out after 5 s and retries, and a retried BF.FREEZE finds the freeze running)."""
    return redis.Redis(port=server.port, protocol=2, socket_timeout=None,
                       retry=Retry(NoBackoff(), 0))


def frozen_row(yardstick, bloomrs, items, rate, builder, probes, yardstick_rate=True):
    """Freezes the builder `s`, then measures it against the yardstick `y` (both deleted)."""
    started = time.monotonic()
    unhurried(bloomrs).execute_command("BF.FREEZE", "s")
    freeze_s = time.monotonic() - started
    y_bytes = int(yardstick.client.memory_usage("y", samples=0))
    s_bytes = int(bloomrs.client.memory_usage("s", samples=0))
    row = {"items": items, "error_rate": rate, "yardstick_bytes": y_bytes,
           "static_bytes": s_bytes, "ratio": round(s_bytes / y_bytes, 3),
           "static_bits_per_item": round(8 * s_bytes / items, 2),
           "builder_bytes_per_item": round(builder / items, 2),
           "freeze_seconds": round(freeze_s, 3),
           "yardstick_fpr": (false_positive_rate(yardstick.client, "y", probes)
                             if yardstick_rate else None),
           "static_fpr": false_positive_rate(bloomrs.client, "s", probes)}
    print(row, file=sys.stderr, flush=True)
    yardstick.client.delete("y")
    bloomrs.client.delete("s")
    return row


def memory(yardstick, bloomrs, items, probes):
    rows = []
    for rate in RATES:
        yardstick.client.execute_command("BF.RESERVE", "y", rate, items, "NONSCALING")
        load_items(yardstick, ["BF.MADD", "y"], 0, items)
        bloomrs.client.execute_command("BF.RESERVE", "s", rate, items, "STATIC")
        load_items(bloomrs, ["BF.MADD", "s"], 0, items)
        builder = int(bloomrs.client.memory_usage("s", samples=0))
        rows.append(frozen_row(yardstick, bloomrs, items, rate, builder, probes))
    return rows


def copy_at_rate(client, source, target, rate):
    """A builder of `source`'s hashes at another rate: its SCANDUMP, the header's rate (bytes
    16..24) and fingerprint width (bytes 40..44) changed, loaded under `target`."""
    it, header = client.execute_command("BF.SCANDUMP", source, 0)
    header = bytearray(header)
    header[16:24] = struct.pack("<d", rate)
    header[40:44] = struct.pack("<I", math.ceil(-math.log2(rate)))
    client.execute_command("BF.LOADCHUNK", target, it, bytes(header))
    while True:
        it, chunk = client.execute_command("BF.SCANDUMP", source, it)
        if it == 0:
            return
        client.execute_command("BF.LOADCHUNK", target, it, chunk)


def memory_at_scale(yardstick, bloomrs, items, probes):
    bloomrs.client.execute_command("BF.RESERVE", "source", 0.01, items, "STATIC")
    loading = time.monotonic()
    load_items(bloomrs, ["BF.MADD", "source"], 0, items)
    print(f"{items} items loaded in {time.monotonic() - loading:.0f} s", file=sys.stderr,
          flush=True)
    builder = int(bloomrs.client.memory_usage("source", samples=0))
    rows = []
    for rate in RATES:
        yardstick.client.execute_command("BF.RESERVE", "y", rate, items, "NONSCALING")
        copy_at_rate(unhurried(bloomrs), "source", "s", rate)
        rows.append(frozen_row(yardstick, bloomrs, items, rate, builder, probes,
                               yardstick_rate=False))
    bloomrs.client.delete("source")
    return rows


def speed(yardstick, bloomrs, items, rounds, requests):
    yardstick.client.execute_command("BF.RESERVE", "big", 0.01, items)
    load_items(yardstick, ["BF.MADD", "big"], 0, items)
    bloomrs.client.execute_command("BF.RESERVE", "big", 0.01, items, "STATIC")
    load_items(bloomrs, ["BF.MADD", "big"], 0, items)
    bloomrs.client.execute_command("BF.FREEZE", "big")
    rand = "__rand_int__"
    cases = [("BF.EXISTS", ["BF.EXISTS", "big", rand], requests),
             ("BF.MEXISTS 40", ["BF.MEXISTS", "big", *[rand] * BATCH], requests // 10)]
    servers = {"yardstick": yardstick, "static": bloomrs}
    runs = {name: {label: [] for label, _, _ in cases} for name in servers}
    for r in range(rounds):
        for label, command, calls in cases:
            for name in servers if r % 2 == 0 else reversed(list(servers)):
                result = measure(servers[name], command, 2 * items, calls)
                runs[name][label].append(result["usec_per_call"])
        print(f"speed round {r + 1}/{rounds}", file=sys.stderr, flush=True)
    median = {name: {label: statistics.median(v) for label, v in r.items()}
              for name, r in runs.items()}
    ratios = {label: round(median["static"][label] / median["yardstick"][label], 3)
              for label, _, _ in cases}
    for server in servers.values():
        server.client.delete("big")
    return {"median_usec_per_call": median, "ratios": ratios, "runs": runs}


class Prober(threading.Thread):
    """Sends PING and BF.EXISTS back to back and keeps the longest wait."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.client = server.client.__class__(port=server.port, protocol=2)
        self.stop = threading.Event()
        self.longest = 0.0
        self.calls = 0

    def run(self):
        while not self.stop.is_set():
            for command in (["PING"], ["BF.EXISTS", "probe", "x"]):
                started = time.monotonic()
                self.client.execute_command(*command)
                self.longest = max(self.longest, time.monotonic() - started)
                self.calls += 1


def wait_synced(primary, replica, timeout_s=600):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        p = primary.client.info("replication")
        r = replica.client.info("replication")
        if r.get("master_link_status") == "up" and \
                r.get("master_repl_offset") == p.get("master_repl_offset"):
            return
        time.sleep(0.01)
    raise RuntimeError("the replica did not catch up")


def main_thread_profile(server, path):
    """`perf record` of a server's main thread (its pid is its main thread's id)."""
    return subprocess.Popen(["perf", "record", "-q", "-g", "-o", path, "-t",
                             str(server.process.pid)], stderr=subprocess.DEVNULL)


def report(path, top=25):
    """The top symbols of a perf.data file, self time."""
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--stdio",
                          "--sort", "symbol", "-g", "none", "--percent-limit", "0.5"],
                         capture_output=True, text=True).stdout
    lines = [line for line in out.splitlines() if line.strip() and not line.startswith("#")]
    return "\n".join(lines[:top])


def freeze(module, items, profile=None):
    debug = ["--enable-debug-command", "yes"]
    with RedisServer(module, config=debug) as primary, \
            RedisServer(module, config=debug) as replica:
        replica.client.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        primary.client.execute_command("BF.ADD", "probe", "x")
        primary.client.execute_command("BF.RESERVE", "f", 0.01, items, "STATIC")
        loading = time.monotonic()
        load_items(primary, ["BF.MADD", "f"], 0, items)
        print(f"{items} items loaded in {time.monotonic() - loading:.0f} s", file=sys.stderr,
              flush=True)
        wait_synced(primary, replica)
        probers = [Prober(primary), Prober(replica)]
        for prober in probers:
            prober.start()
        time.sleep(0.2)
        freezer = unhurried(primary)
        perfs = []
        if profile:
            os.makedirs(profile, exist_ok=True)
            paths = [os.path.join(profile, f"{side}-{items}.data") for side in ("primary", "replica")]
            perfs = [main_thread_profile(server, path)
                     for server, path in zip((primary, replica), paths)]
            time.sleep(0.5)
        started = time.monotonic()
        freezer.execute_command("BF.FREEZE", "f")
        frozen_s = time.monotonic() - started
        wait_synced(primary, replica)
        replicated_s = time.monotonic() - started
        for perf in perfs:
            perf.send_signal(subprocess.signal.SIGINT)
            perf.wait()
        if profile:
            for side, path in zip(("primary", "replica"), paths):
                print(f"{side} main thread during the freeze of {items}:\n{report(path)}",
                      file=sys.stderr, flush=True)
        time.sleep(0.2)
        for prober in probers:
            prober.stop.set()
            prober.join()
        same = primary.client.execute_command("DEBUG", "DIGEST-VALUE", "f") == \
            replica.client.execute_command("DEBUG", "DIGEST-VALUE", "f")
        row = {"items": items, "freeze_seconds": round(frozen_s, 3),
               "replica_holds_it_after_seconds": round(replicated_s, 3),
               "longest_wait_ms_primary": round(1000 * probers[0].longest, 2),
               "longest_wait_ms_replica": round(1000 * probers[1].longest, 2),
               "calls_primary": probers[0].calls, "calls_replica": probers[1].calls,
               "replica_identical": same}
        print(row, file=sys.stderr, flush=True)
        return row


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--redisbloom", help="RedisBloom's redisbloom.so, the yardstick")
    parser.add_argument("--memory-items", default="10000,1000000")
    parser.add_argument("--scale-items", type=int, default=0)
    parser.add_argument("--speed-items", type=int, default=10_000_000)
    parser.add_argument("--freeze-items", default="10000000")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--probes", type=int, default=1_000_000)
    parser.add_argument("--out", default="docs/bench/static.json")
    parser.add_argument("--profile", help="a directory for perf samples of the freeze")
    args = parser.parse_args()
    yardstick_module = args.redisbloom or args.bloomrs
    result = {"machine": describe(),
              "settings": {"yardstick": "redisbloom" if args.redisbloom else "bloomrs-plain",
                           "rounds": args.rounds, "requests": args.requests,
                           "probes": args.probes}}
    with RedisServer(yardstick_module) as yardstick, RedisServer(args.bloomrs) as bloomrs:
        result["memory"] = [row for n in args.memory_items.split(",") if n
                            for row in memory(yardstick, bloomrs, int(n), args.probes)]
        if args.scale_items:
            result["memory_at_scale"] = memory_at_scale(yardstick, bloomrs, args.scale_items,
                                                        args.probes)
        if args.speed_items:
            result["speed"] = speed(yardstick, bloomrs, args.speed_items, args.rounds,
                                    args.requests)
            result["speed"]["items"] = args.speed_items
            print(f"speed: {result['speed']['ratios']}", file=sys.stderr, flush=True)
    result["freeze"] = [freeze(args.bloomrs, int(n), args.profile)
                        for n in args.freeze_items.split(",") if n]
    write_result(args.out, result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
