"""Refused adds against accepted ones: a 1000-item add on a filter that can no longer grow, next
to the same command adding 1000 new items to a filter of the same kind with room.

For every kind that can stop growing (the default chain as yardstick, blocked, counting,
windowed, sparse, cuckoo), one server holds two filters of the kind, created with capacity
4000 at 0.01:
  roomy     reserved with room for every add of the run (capacity --rounds * 2000): each call
            adds 1000 items never added before
  refused   filled until its adds are refused: bf.max-filter-bytes is set to its minimum
            (1024), below what any of these filters' growth needs, and items are added until
            the replies carry errors; each call then adds the same 1000 items never added,
            which are refused (a false positive answers 0 instead) and change nothing (a cuckoo
            filter, filled until 90 % of a batch is refused, still places a few of them by
            its kick walks)
A sparse filter (bf.bf-sparse-max-bytes 2048) is refused its promotion to the dense chain, a
cuckoo filter (CF.INSERT ... ITEMS) its next sub-filter. Each case is called --calls times
after a CONFIG RESETSTAT and usec_per_call comes from INFO commandstats (server time inside
the command); the median over --rounds rounds is reported, the rounds alternating the cases.

--before PATH measures a second build of the module the same way on a second server in the
same run (the builds alternate within every round), for before/after figures.

Usage: refusals.py [--bloomrs PATH] [--before PATH] [--rounds N] [--calls N] [--out FILE]
"""

import statistics
import sys

import redis

from machine import describe, write_result
from server import RedisServer, module_parser

BATCH = 1000
CAPACITY = 4000
LIMIT = 1024
KINDS = {
    "plain": ("BF.MADD", ["BF.RESERVE", "{key}", "0.01", "{capacity}"]),
    "blocked": ("BF.MADD", ["BF.RESERVE", "{key}", "0.01", "{capacity}", "BLOCKED"]),
    "counting": ("BF.MADD", ["BF.RESERVE", "{key}", "0.01", "{capacity}", "COUNTING"]),
    "windowed": ("BF.MADD", ["BF.RESERVE", "{key}", "0.01", "{capacity}", "WINDOW", "3600"]),
    "sparse": ("BF.MADD", None),
    "cuckoo": ("CF.INSERT", ["CF.RESERVE", "{key}", "{capacity}"]),
}


def create(client, kind, key, capacity):
    _, reserve = KINDS[kind]
    if reserve is None:
        # A sparse filter is what a creating add makes under bf.bf-sparse-max-bytes.
        client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "2048")
        client.execute_command("BF.INSERT", key, "CAPACITY", capacity, "ITEMS", "first")
        client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "0")
        return
    client.execute_command(*[part.format(key=key, capacity=capacity) for part in reserve])


def add(client, kind, key, items):
    command, _ = KINDS[kind]
    args = [key, "ITEMS", *items] if command == "CF.INSERT" else [key, *items]
    return client.execute_command(command, *args)


def items(prefix, start, count=BATCH):
    return [f"{prefix}:{i}" for i in range(start, start + count)]


def refused(reply):
    """How many of an add's replies are refusals (an error; -1 from CF.INSERT)."""
    return sum(isinstance(r, redis.ResponseError) or r == -1 for r in reply)


def prepare(client, rounds, calls):
    """Both filters of every kind; the refused ones filled until their adds are refused."""
    for kind in KINDS:
        create(client, kind, f"roomy:{kind}", rounds * calls * BATCH * 2)
        create(client, kind, f"refused:{kind}", CAPACITY)
    client.execute_command("CONFIG", "SET", "bf.max-filter-bytes", LIMIT)
    for kind in KINDS:
        for start in range(0, 100 * CAPACITY, BATCH):
            reply = add(client, kind, f"refused:{kind}", items("fill", start))
            if refused(reply) >= BATCH * 9 // 10:
                break
        else:
            sys.exit(f"{kind}: never refused")
        probe = add(client, kind, f"refused:{kind}", items("refused", 0))
        errors = refused(probe)
        if errors < BATCH * 9 // 10:
            sys.exit(f"{kind}: only {errors} of {BATCH} refused")


def usec_per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}", {})
    return float(stats.get("usec_per_call", 0.0))


def one_case(client, kind, case, round_no, calls):
    command, _ = KINDS[kind]
    client.execute_command("CONFIG", "RESETSTAT")
    for call in range(calls):
        if case == "roomy":
            batch = items(f"new{round_no}", call * BATCH)
        else:
            batch = items("refused", 0)
        add(client, kind, f"{case}:{kind}", batch)
    return usec_per_call(client, command)


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--before", help="a second build, measured the same way")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--out", default="docs/bench/refusals.json")
    args = parser.parse_args()
    builds = {"after": args.bloomrs}
    if args.before:
        builds["before"] = args.before
    servers = {name: RedisServer(module=path) for name, path in builds.items()}
    samples = {(b, k, c): [] for b in builds for k in KINDS for c in ("roomy", "refused")}
    try:
        for server in servers.values():
            server.__enter__()
            prepare(server.client, args.rounds, args.calls)
        for round_no in range(args.rounds):
            for kind in KINDS:
                for case in ("roomy", "refused"):
                    for name, server in servers.items():
                        usec = one_case(server.client, kind, case, round_no, args.calls)
                        samples[(name, kind, case)].append(usec)
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    rows = []
    print(f"{BATCH}-item adds, median usec_per_call over {args.rounds} rounds "
          f"of {args.calls} calls (commandstats)")
    print(f"{'build':8} {'kind':10} {'accepted':>10} {'refused':>10} {'refused/accepted':>17}")
    for name in builds:
        for kind in KINDS:
            roomy = statistics.median(samples[(name, kind, "roomy")])
            refused = statistics.median(samples[(name, kind, "refused")])
            ratio = refused / roomy if roomy else float("nan")
            rows.append({"build": name, "kind": kind, "accepted_usec": roomy,
                         "refused_usec": refused, "ratio": ratio})
            print(f"{name:8} {kind:10} {roomy:10.0f} {refused:10.0f} {ratio:17.2f}")
    write_result(args.out, {"machine": describe(), "batch": BATCH, "rounds": args.rounds,
                            "calls": args.calls, "builds": list(builds), "rows": rows})


if __name__ == "__main__":
    main()
