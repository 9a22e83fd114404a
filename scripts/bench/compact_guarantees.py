"""Compact filters' guarantees of issue 26: what duplicates cost, and the longest command.

Duplicate cost: a COMPACT COUNTING filter holding --dups adds of one item ("dup") against a
filter of the same kind holding as many distinct items ("distinct", so the same number of
entries and the same table), on one server. On each, in turns for --rounds rounds, the server
time (usec_per_call of INFO commandstats, one 1000-item command at a time) of
    madd     BF.MADD of 1000 new items (new ones every round)
    mexists  BF.MEXISTS of 1000 absent items
    held     BF.MEXISTS of 1000 held items (dup: the duplicated item 1000 times)
    mdel     BF.MDEL of 1000 held items (dup: the duplicated item 1000 times, so each round
             takes 1000 of its adds back; distinct: 1000 items not deleted before)
and each ratio dup / distinct (the issue asks at most 1.5 at 1M adds of one item).

Longest command: a COMPACT filter (BF.RESERVE k 0.01 100 COMPACT) and the default chain
(BF.RESERVE k 0.01 100 EXPANSION 2, what BF.ADD creates) grow to --items items each by BF.MADD
of 10 new items, in turns of --chunk items on the same server; the longest single command of
each (SLOWLOG with slowlog-log-slower-than 0, read after every chunk), overall and per chunk,
and the ratio compact / chain (the issue asks at most 2 at 10M items).

The machine is shared and has 2 cores: the ratios, taken within one run, are what to read.

Usage: compact_guarantees.py [--bloomrs PATH] [--quick] [--dups N] [--items N] [--out FILE]
       [--only dups|longest]
"""

import json
import statistics
import sys
import time

from machine import describe, write_result
from server import RedisServer, module_parser

MIX = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1
BATCH = 1000
SLOWLOG_READ = 20_000


def ident(space, index):
    """A 16-character id, distinct for every (space, index)."""
    return f"{(((space << 40) | index) * MIX) & MASK64:016x}"


def ids(space, start, stop):
    return [ident(space, i) for i in range(start, stop)]


def pipelined(client, commands):
    """Sends the commands in pipelines of 1000, returns every reply."""
    replies = []
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
        if len(pipe) >= 1000:
            replies += pipe.execute()
    return replies + pipe.execute()


def per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}")
    return stats["usec_per_call"] if stats else None


def timed(client, command, key, items):
    """usec_per_call of one `command key items...`."""
    client.execute_command("CONFIG", "RESETSTAT")
    client.execute_command(command, key, *items)
    return per_call(client, command)


def fill(client, key, dups):
    """`dups` adds of one item to a new COMPACT COUNTING filter (key "dup"), or `dups`
    distinct items (any other key)."""
    client.execute_command("BF.RESERVE", key, "0.01", 1000, "COMPACT", "COUNTING")
    hot = ident(0, 0)
    started = time.monotonic()
    for begin in range(0, dups, BATCH * 100):
        stop = min(dups, begin + BATCH * 100)
        pipelined(client, (
            ("BF.MADD", key, *([hot] * (min(stop, b + BATCH) - b)
                               if key == "dup" else ids(1, b, min(stop, b + BATCH))))
            for b in range(begin, stop, BATCH)))
        print(f"  {key}: {stop} adds, {time.monotonic() - started:.0f} s", file=sys.stderr)
    return time.monotonic() - started


def duplicate_cost(module, dups, rounds):
    with RedisServer(module) as server:
        c = server.client
        fill_s = {key: fill(c, key, dups) for key in ("dup", "distinct")}
        hot = ident(0, 0)
        cases = {
            "madd": lambda key, r: ("BF.MADD", ids(2 if key == "dup" else 3, r * BATCH,
                                                   (r + 1) * BATCH)),
            "mexists": lambda key, r: ("BF.MEXISTS", ids(4, r * BATCH, (r + 1) * BATCH)),
            "held": lambda key, r: ("BF.MEXISTS", [hot] * BATCH if key == "dup"
                                    else ids(1, 0, BATCH)),
            "mdel": lambda key, r: ("BF.MDEL", [hot] * BATCH if key == "dup"
                                    else ids(1, r * BATCH, (r + 1) * BATCH)),
        }
        seen = {case: {"dup": [], "distinct": []} for case in cases}
        for r in range(rounds):
            for case, make in cases.items():
                # Which filter goes first alternates, so neither always follows the other.
                for key in (("dup", "distinct") if r % 2 == 0 else ("distinct", "dup")):
                    command, items = make(key, r)
                    seen[case][key].append(timed(c, command, key, items))
        info = {key: dict(zip(*[iter(c.execute_command("BF.INFO", key))] * 2))
                for key in ("dup", "distinct")}
    out = {"dups": dups, "rounds": rounds, "fill_s": fill_s,
           "size": {key: info[key]["Size"] for key in info}}
    for case, runs in seen.items():
        dup, distinct = statistics.median(runs["dup"]), statistics.median(runs["distinct"])
        out[case] = {"dup_us": dup, "distinct_us": distinct, "ratio": dup / distinct,
                     "dup_runs_us": runs["dup"], "distinct_runs_us": runs["distinct"]}
    return out


def slowest(client, command):
    """The durations of `command` in the slowlog (microseconds), and empties it."""
    durations = [e["duration"] for e in client.slowlog_get(SLOWLOG_READ)
                 if command in str(e["command"]).upper()]
    client.execute_command("SLOWLOG", "RESET")
    return durations


def longest(module, items, chunk):
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("BF.RESERVE", "compact", "0.01", 100, "COMPACT")
        c.execute_command("BF.RESERVE", "chain", "0.01", 100, "EXPANSION", 2)
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 0)
        c.execute_command("CONFIG", "SET", "slowlog-max-len", SLOWLOG_READ)
        worst = {"compact": 0, "chain": 0}
        # The ten longest commands of each, and how many took over 10 and 100 ms: on a shared
        # machine a command can be descheduled mid-way, which SLOWLOG counts as its time.
        top = {"compact": [], "chain": []}
        over = {key: {"10ms": 0, "100ms": 0} for key in worst}
        steps = []
        started = time.monotonic()
        for begin in range(0, items, chunk):
            stop = min(items, begin + chunk)
            step = {"held": stop}
            for space, key in ((5, "compact"), (6, "chain")):
                c.execute_command("SLOWLOG", "RESET")
                for part in range(begin, stop, SLOWLOG_READ * 10 // 2):
                    end = min(stop, part + SLOWLOG_READ * 10 // 2)
                    pipelined(c, (("BF.MADD", key, *ids(space, b, min(end, b + 10)))
                                  for b in range(part, end, 10)))
                    durations = slowest(c, "BF.MADD")
                    step[f"{key}_longest_us"] = max(step.get(f"{key}_longest_us", 0),
                                                    max(durations, default=0))
                    top[key] = sorted(top[key] + durations, reverse=True)[:10]
                    over[key]["10ms"] += sum(d > 10_000 for d in durations)
                    over[key]["100ms"] += sum(d > 100_000 for d in durations)
                worst[key] = max(worst[key], step[f"{key}_longest_us"])
            steps.append(step)
            print(f"  {stop} items: longest compact {step['compact_longest_us']} us, chain "
                  f"{step['chain_longest_us']} us ({time.monotonic() - started:.0f} s)",
                  file=sys.stderr)
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
        sizes = {key: c.execute_command("BF.INFO", key, "SIZE")[0] for key in worst}
        counts = {key: c.execute_command("BF.CARD", key) for key in worst}
    return {"items": items, "chunk": chunk, "compact_longest_us": worst["compact"],
            "chain_longest_us": worst["chain"], "ratio": worst["compact"] / max(worst["chain"], 1),
            "top_us": top, "over": over, "size": sizes, "card": counts, "steps": steps}


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--dups", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--only", choices=("dups", "longest"))
    parser.add_argument("--quick", action="store_true",
                        help="100,000 adds of one item, 3 rounds, 1M items grown")
    parser.add_argument("--out", default="docs/bench/compact_guarantees.json")
    args = parser.parse_args()
    if args.quick:
        args.dups, args.rounds, args.items, args.chunk = 100_000, 3, 1_000_000, 100_000
    data = {"machine": describe(), "module": args.bloomrs.rsplit("/", 1)[-1]}
    if args.only:
        # One section measured again: the other one is kept from the file.
        try:
            with open(args.out, encoding="utf-8") as kept:
                data = {**json.load(kept), **data}
        except (OSError, ValueError):
            pass
    if args.only != "longest":
        print("== duplicate cost", file=sys.stderr)
        data["duplicates"] = duplicate_cost(args.bloomrs, args.dups, args.rounds)
        d = data["duplicates"]
        for case in ("madd", "mexists", "held", "mdel"):
            print(f"{case:8} dup {d[case]['dup_us']:12.1f} us  distinct "
                  f"{d[case]['distinct_us']:10.1f} us  ratio {d[case]['ratio']:8.2f}")
    if args.only != "dups":
        print("== longest command while growing", file=sys.stderr)
        data["longest"] = longest(args.bloomrs, args.items, args.chunk)
        l = data["longest"]
        print(f"longest BF.MADD of 10 to {l['items']} items: compact {l['compact_longest_us']} us,"
              f" chain {l['chain_longest_us']} us, ratio {l['ratio']:.2f}")
    write_result(args.out, data)


if __name__ == "__main__":
    main()
