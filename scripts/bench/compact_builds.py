"""The compact kind of two builds side by side: server time per call, and memory.

Two servers run, one per build (--bloomrs, and --before: e.g. the last build with the
doubling table), but only one is ever busy: on each, a COMPACT filter (BF.RESERVE k e 100
COMPACT) is grown to each of --sizes items by BF.MADD of 1000 16-character ids; then for
--rounds rounds, each operation's commands are timed in --chunks pieces, each piece on one
server and right after on the other (the same commands on both; the build that goes first
alternates from piece to piece):
    exists   BF.EXISTS of held ids
    miss     BF.EXISTS of ids never added
    mexists  BF.MEXISTS of 40 held ids
    add      BF.ADD of new ids (the filter grows on: --add-share of its items per round;
             both builds add the same ids, from the same number of items added)
Each is usec / calls of INFO commandstats (the server's time inside the command, wall
clock: a server that loses its core to another process meanwhile counts that time). With
--cores (default on a machine of 2 cores or more) both servers run on one core and this
client on another, so the client's work never takes a measured server's core nor its
caches. Right before each timed piece, the server about to be timed looks up --warm held ids
(untimed), so that its caches hold what its own work leaves there rather than what the
other build's piece left: without it the build whose filter would fit in the core's cache
starts every piece cold from the other's.

Then both filters grow on from there to --grow-to times the size (e.g. from 1,000,000 to
2,000,000 items: a whole cycle of the doubling, which moves its table a step an add while a
doubling is under way, and of the segments' generation) by BF.ADD of new ids, timed in
--grow-pieces pieces that alternate as above: the usec per add over the whole growth of
each build and their ratio (the adds' cost as a filter that grows pays it, every phase of
the growth included), and the ratios of the pieces.

Reported per operation: the ratio this build / before of every pair of pieces (the same
work on both, a fraction of a second apart), their median and spread (lowest, highest, and
the middle half), each round's median, and the median of each build's times; and MEMORY
USAGE at that size. A pair in which another process took the core from one server is an
outlier the median of the pairs passes over. The adds of round r start at n + r * fresh
items: the window is printed with the segments' generation boundaries inside it (a segment
filter's directory reaches 2^L segments at 512 * 2^L entries, about as many items; past
each boundary every segment's first new entry is longer than what it holds and widens the
segment once), so a round whose window crosses one shows in the rounds' medians.

Usage: compact_builds.py --before PATH [--bloomrs PATH] [--sizes N,N] [--rounds R]
                         [--chunks K] [--add-share F] [--warm W] [--cores S,C|none]
                         [--grow-to F] [--grow-pieces P] [--out FILE]
"""

import os
import statistics

from compact import ident
from machine import describe, write_result
from server import RedisServer, module_parser

CALLS = 20_000
SEGMENT_ITEMS = 512
OPS = ("exists", "miss", "mexists", "add")


def preemptions(pid):
    """Times the server's main thread lost its core while it ran (to another process)."""
    with open(f"/proc/{pid}/task/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("nonvoluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


def per_call(server, command, commands):
    """usec_per_call of `command` over `commands`, sent pipelined (stats reset first), and
    whether the server lost its core meanwhile."""
    client = server.client
    client.execute_command("CONFIG", "RESETSTAT")
    switches = preemptions(server.process.pid)
    pipe = client.pipeline(transaction=False)
    for sent in commands:
        pipe.execute_command(*sent)
    pipe.execute()
    preempted = preemptions(server.process.pid) != switches
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}", {})
    # The total over the calls (usec_per_call is rounded to 0.01).
    return stats.get("usec", float("nan")) / max(1, stats.get("calls", 0)), preempted


def grow(client, error, items):
    client.execute_command("BF.RESERVE", "k", error, 100, "COMPACT")
    for s in range(0, items, 1000):
        pipe = client.pipeline(transaction=False)
        pipe.execute_command("BF.MADD", "k", *(ident(1, i) for i in range(s, min(s + 1000, items))))
        pipe.execute()


def workload(items, r, start, fresh):
    """Round r's commands of each operation (the same for both builds)."""
    return {
        "exists": ("BF.EXISTS", [("BF.EXISTS", "k", ident(1, (i * 7919 + r * 104729) % items))
                                 for i in range(CALLS)]),
        "miss": ("BF.EXISTS", [("BF.EXISTS", "k", ident(2, r * CALLS + i)) for i in range(CALLS)]),
        "mexists": ("BF.MEXISTS", [("BF.MEXISTS", "k",
                                    *(ident(1, (b * 40 + j) * 6007 % items) for j in range(40)))
                                   for b in range(CALLS // 40)]),
        "add": ("BF.ADD", [("BF.ADD", "k", ident(3, start + i)) for i in range(fresh)]),
    }


def grow_cycle(servers, items, factor, pieces):
    """Both filters grown from what they hold to `factor` times `items` by BF.ADD of new ids,
    in `pieces` pieces timed on each build in turn: per build the usec per add over the whole
    growth (the pieces are of one size, so their mean), the ratio of those, and each piece's
    ratio."""
    start = servers["this build"].client.execute_command("BF.CARD", "k")
    total = max(0, int(items * factor) - start)
    if total == 0:
        return None
    step = max(1, -(-total // pieces))
    times = {name: [] for name in servers}
    order = list(servers)
    for first in range(0, total, step):
        commands = [("BF.ADD", "k", ident(4, i)) for i in range(first, min(first + step, total))]
        for name in order:
            times[name].append(per_call(servers[name], "BF.ADD", commands)[0])
        order.reverse()
    mean = {name: statistics.fmean(t) if t else float("nan") for name, t in times.items()}
    return {
        "from_items": start, "adds": total,
        "usec_per_add": {name: round(m, 3) for name, m in mean.items()},
        "ratio": round(mean["this build"] / mean["before"], 3),
        "piece_ratios": spread([a / b for a, b in zip(times["this build"], times["before"])]),
        "pieces_usec_per_call": times,
    }


def boundaries(low, high):
    """Entry counts in [low, high) where a segment filter's directory reaches 2^L segments."""
    return [SEGMENT_ITEMS << level for level in range(40) if low <= SEGMENT_ITEMS << level < high]


def spread(values):
    """Median, lowest, highest and the middle half (quartiles) of `values`."""
    ordered = sorted(values)
    quartiles = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 \
        else [ordered[0]] * 3
    return {"median": round(statistics.median(ordered), 3), "low": round(ordered[0], 3),
            "high": round(ordered[-1], 3),
            "middle_half": [round(quartiles[0], 3), round(quartiles[2], 3)]}


def pin(cores, servers):
    """Both servers on the first core given, this client on the second (`None`: none)."""
    if cores is None:
        return
    server_core, client_core = cores
    for server in servers:
        os.sched_setaffinity(server.process.pid, {server_core})
    os.sched_setaffinity(0, {client_core})


def parse_cores(text):
    if text == "none":
        return None
    if text == "auto":
        return (0, 1) if len(os.sched_getaffinity(0)) >= 2 else None
    server_core, client_core = map(int, text.split(","))
    return server_core, client_core


def warm(server, items, seed, count):
    """Lookups of `count` held ids on `server`, untimed: its caches then hold what its own
    work leaves there, not the other build's."""
    pipe = server.client.pipeline(transaction=False)
    for i in range(count):
        pipe.execute_command("BF.EXISTS", "k", ident(1, (seed * count + i) * 4241 % items))
    pipe.execute()


def measure(args, items, cores):
    with RedisServer(args.bloomrs) as now, RedisServer(args.before) as before:
        servers = {"this build": now, "before": before}
        pin(cores, servers.values())
        for server in servers.values():
            grow(server.client, args.error, items)
        memory = {name: server.client.execute_command("MEMORY", "USAGE", "k", "SAMPLES", "0")
                  for name, server in servers.items()}
        fresh = max(1, int(items * args.add_share))
        samples = {name: {op: [] for op in OPS} for name in servers}
        # Per operation, each pair's ratio this build / before and whether neither server
        # lost its core during its piece; each round's first pair index.
        pairs = {op: [] for op in OPS}
        starts = {op: [] for op in OPS}
        cards = {name: [] for name in servers}
        order = list(servers)
        for r in range(args.rounds):
            for name, server in servers.items():
                cards[name].append(server.client.execute_command("BF.CARD", "k"))
            work = workload(items, r, r * fresh, fresh)
            for op in OPS:
                command, commands = work[op]
                starts[op].append(len(pairs[op]))
                step = -(-len(commands) // args.chunks)
                for c in range(0, len(commands), step):
                    timed = {}
                    for name in order:
                        warm(servers[name], items, len(pairs[op]) + 97 * r, args.warm)
                        timed[name] = per_call(servers[name], command, commands[c:c + step])
                    for name, (usec, _) in timed.items():
                        samples[name][op].append(usec)
                    pairs[op].append((timed["this build"][0] / timed["before"][0],
                                      not any(p for _, p in timed.values())))
                    order.reverse()
        clean = {op: [x for x, ok in pairs[op] if ok] or [x for x, _ in pairs[op]] for op in OPS}
        rounds = {op: [statistics.median([x for x, ok in pairs[op][a:b] if ok]
                                         or [x for x, _ in pairs[op][a:b]])
                       for a, b in zip(starts[op], starts[op][1:] + [len(pairs[op])])]
                  for op in OPS}
        window = [items, items + args.rounds * fresh]
        result = {
            "usec_per_call": {name: {op: round(statistics.median(s[op]), 3) for op in OPS}
                              for name, s in samples.items()},
            "ratio": {op: spread(clean[op]) for op in OPS},
            "clean_pairs": {op: [sum(ok for _, ok in pairs[op]), len(pairs[op])] for op in OPS},
            "ratio_all_pairs": {op: spread([x for x, _ in pairs[op]]) for op in OPS},
            "round_ratios": {op: [round(x, 3) for x in rounds[op]] for op in OPS},
            "pairs": {op: [[round(x, 3), ok] for x, ok in pairs[op]] for op in OPS},
            "pieces_usec_per_call": samples,
            "adds": {"ids": f"ident(3, 0..{args.rounds * fresh})", "per_round": fresh,
                     "window_items": window, "card_at_round_start": cards,
                     "segment_generation_boundaries_in_window": boundaries(*window)},
            "memory": memory,
        }
        print(f"{items:>9,} items: memory {memory}; adds from {window[0]:,} to {window[1]:,} "
              f"items ({fresh:,} a round), segment generation boundaries there: "
              f"{boundaries(*window)}", flush=True)
        for op in OPS:
            m = result["usec_per_call"]
            s, a = result["ratio"][op], result["ratio_all_pairs"][op]
            n, total = result["clean_pairs"][op]
            print(f"    {op:8} {m['this build'][op]:7.3f} / {m['before'][op]:7.3f} us  ratio "
                  f"{s['median']:.3f} (middle half {s['middle_half'][0]:.3f}-"
                  f"{s['middle_half'][1]:.3f}, {s['low']:.3f}-{s['high']:.3f}; {n} of {total} "
                  f"pairs clean; all pairs {a['median']:.3f})  rounds "
                  f"{result['round_ratios'][op]}", flush=True)
        cycle = None
        if args.grow_to > 1:
            cycle = grow_cycle(servers, items, args.grow_to, args.grow_pieces)
        if cycle is None and args.grow_to > 1:
            print("    growing  not timed: the rounds' adds already passed --grow-to", flush=True)
        if cycle is not None:
            result["growing"] = cycle
            u, p = cycle["usec_per_add"], cycle["piece_ratios"]
            print(f"    growing  {u['this build']:7.3f} / {u['before']:7.3f} us an add from "
                  f"{cycle['from_items']:,} by {cycle['adds']:,}: ratio {cycle['ratio']:.3f} "
                  f"(pieces: median {p['median']:.3f}, middle half {p['middle_half'][0]:.3f}-"
                  f"{p['middle_half'][1]:.3f}, {p['low']:.3f}-{p['high']:.3f})", flush=True)
        return result


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--before", required=True, help="the other build's module")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--chunks", type=int, default=10,
                        help="pieces each round's commands of an operation are timed in")
    parser.add_argument("--add-share", type=float, default=0.02,
                        help="new ids a round, as a share of the size")
    parser.add_argument("--cores", default="auto",
                        help="SERVERS,CLIENT cores to pin to, 'none', or 'auto' (0,1 if there)")
    parser.add_argument("--warm", type=int, default=2000,
                        help="held ids looked up, untimed, before each timed piece")
    parser.add_argument("--grow-to", type=float, default=2.0,
                        help="grow both filters on to this times the size, timing every add "
                             "(1: not)")
    parser.add_argument("--grow-pieces", type=int, default=40)
    parser.add_argument("--error", default="0.01")
    parser.add_argument("--out", default="docs/bench/compact_builds.json")
    args = parser.parse_args()
    cores = parse_cores(args.cores)
    result = {"machine": describe(), "error": args.error, "rounds": args.rounds,
              "chunks": args.chunks, "warm": args.warm,
              "cores": cores, "sizes": {}}
    for items in map(int, args.sizes.split(",")):
        result["sizes"][items] = measure(args, items, cores)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
