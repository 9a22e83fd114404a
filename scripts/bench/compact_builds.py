"""The compact kind of two builds side by side: server time per call, and memory.

Two servers run at once, one per build (--bloomrs, and --before: e.g. the last build with the
doubling table). On each, a COMPACT filter (BF.RESERVE k e 100 COMPACT) is grown to each of
--sizes items by BF.MADD of 1000 16-character ids; then, in turns on the two servers for
--rounds rounds, usec_per_call (INFO commandstats: the server's time inside the command) of
    exists   BF.EXISTS of held ids
    miss     BF.EXISTS of ids never added
    mexists  BF.MEXISTS of 40 held ids
    add      BF.ADD of new ids (the filter grows on: 2 % of its items per round)
with the median of each and the ratio this build / before, the same for the best round of
each (on a busy machine noise only adds time, so the best rounds are the steadier ratio); and
MEMORY USAGE at that size. The machine is shared and has 2 cores: the ratios, taken in turns
within one run, are what to read.

Usage: compact_builds.py --before PATH [--bloomrs PATH] [--sizes N,N] [--rounds R] [--out FILE]
"""

import statistics

from compact import ident
from machine import describe, write_result
from server import RedisServer, module_parser

CALLS = 20_000


def per_call(client, command, run):
    """usec_per_call of `command` over what `run` sends (stats reset first)."""
    client.execute_command("CONFIG", "RESETSTAT")
    run()
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}", {})
    return stats.get("usec_per_call", float("nan"))


def pipelined(client, commands):
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    pipe.execute()


def grow(client, error, items):
    client.execute_command("BF.RESERVE", "k", error, 100, "COMPACT")
    pipelined(client, [("BF.MADD", "k", *(ident(1, i) for i in range(s, min(s + 1000, items))))
                       for s in range(0, items, 1000)])


def round_of(client, items, r, added):
    held = [("BF.EXISTS", "k", ident(1, (i * 7919 + r * 104729) % items)) for i in range(CALLS)]
    miss = [("BF.EXISTS", "k", ident(2, r * CALLS + i)) for i in range(CALLS)]
    batches = [("BF.MEXISTS", "k", *(ident(1, (b * 40 + j) * 6007 % items) for j in range(40)))
               for b in range(CALLS // 40)]
    fresh = max(1, items // 50)
    adds = [("BF.ADD", "k", ident(3, added + i)) for i in range(fresh)]
    return {
        "exists": per_call(client, "BF.EXISTS", lambda: pipelined(client, held)),
        "miss": per_call(client, "BF.EXISTS", lambda: pipelined(client, miss)),
        "mexists": per_call(client, "BF.MEXISTS", lambda: pipelined(client, batches)),
        "add": per_call(client, "BF.ADD", lambda: pipelined(client, adds)),
    }, fresh


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--before", required=True, help="the other build's module")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--error", default="0.01")
    parser.add_argument("--out", default="docs/bench/compact_builds.json")
    args = parser.parse_args()
    result = {"machine": describe(), "error": args.error, "sizes": {}}
    for items in map(int, args.sizes.split(",")):
        with RedisServer(args.bloomrs) as now, RedisServer(args.before) as before:
            servers = {"this build": now.client, "before": before.client}
            for client in servers.values():
                grow(client, args.error, items)
            memory = {name: c.execute_command("MEMORY", "USAGE", "k", "SAMPLES", "0")
                      for name, c in servers.items()}
            samples = {name: [] for name in servers}
            added = 0
            for r in range(args.rounds):
                for name, client in servers.items():
                    times, fresh = round_of(client, items, r, added)
                    samples[name].append(times)
                added += fresh
            medians = {name: {op: round(statistics.median(s[op] for s in rows), 3)
                              for op in rows[0]} for name, rows in samples.items()}
            bests = {name: {op: min(s[op] for s in rows) for op in rows[0]}
                     for name, rows in samples.items()}
            ratios, best_ratios = ({op: round(m["this build"][op] / m["before"][op], 3)
                                    for op in m["before"]} for m in (medians, bests))
            result["sizes"][items] = {"usec_per_call": medians, "ratio": ratios,
                                      "best_usec_per_call": bests, "best_ratio": best_ratios,
                                      "memory": memory}
            print(f"{items:>9,} items: this build {medians['this build']}  before "
                  f"{medians['before']}  ratio {ratios}  best rounds' ratio {best_ratios}  "
                  f"memory {memory}", flush=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
