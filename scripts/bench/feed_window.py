"""The feed filter (`COMPACT WINDOW`): memory within one window, and false-positive rates of the
windowed kinds fed above their capacity.

Memory: one `BF.RESERVE k e 100 COMPACT WINDOW 86400` filter is filled step by step with
16-character ids (BF.MADD of up to 1000; a run takes minutes, so the items stay in one or two
of the window's generations); at 12 sizes per decade from 100 to --top items its MEMORY USAGE
(SAMPLES 0) is divided by that of BF.RESERVE f e n NONSCALING, one link sized for exactly the
items the window must remember. Per error rate: the geometric mean, the worst ratio, and the
sizes over 2x.

Rates: `BF.RESERVE w e 100 [COMPACT] WINDOW 8 GENERATIONS 4`, then BF.MADD of --batch new
items every 0.1 s for 12 s (real time: the generations rotate as they do for a client), then
--probes items never added are asked with BF.MEXISTS. The measured rate is printed beside the
requested one and three standard deviations of a rate at the requested one over that many
probes. Items are seeded (fixed) strings.

Speed: a `COMPACT WINDOW 86400` filter and RedisBloom's default chain (`BF.RESERVE k 0.01
100`) grown to --top items; then, per filter, --calls pipelined BF.EXISTS (half of them items
held), BF.ADD of new items and BF.MEXISTS of 40, each timed by the server (INFO commandstats
usec / calls after CONFIG RESETSTAT).

Usage: feed_window.py [--bloomrs PATH] [--top N] [--probes N] [--batch N] [--calls N]
                      [--out FILE]
"""

import math
import time

from growth_memory import ident, sizes, summary, usage
from machine import describe, write_result
from server import RedisServer, module_parser

BATCH = 1000


def memory_curve(client, error, points):
    client.delete("k", "floor")
    client.execute_command("BF.RESERVE", "k", error, 100, "COMPACT", "WINDOW", 86400)
    held, used, floors = 0, [], []
    for n in points:
        pipe = client.pipeline(transaction=False)
        while held < n:
            step = min(BATCH, n - held)
            pipe.execute_command("BF.MADD", "k", *(ident(i) for i in range(held, held + step)))
            held += step
        pipe.execute()
        used.append(usage(client, "k"))
        client.delete("floor")
        client.execute_command("BF.RESERVE", "floor", error, n, "NONSCALING")
        floors.append(usage(client, "floor"))
    return used, floors


def feed_rate(client, kind, error, batch, probes):
    """False positives of `probes` never-added items after a 12-second feed above capacity."""
    client.delete("w")
    compact = ["COMPACT"] if kind == "compact window" else []
    client.execute_command("BF.RESERVE", "w", error, 100, *compact, "WINDOW", 8,
                           "GENERATIONS", 4)
    start, added = time.monotonic(), 0
    while time.monotonic() - start < 12.0:
        tick = time.monotonic()
        client.execute_command("BF.MADD", "w", *(f"feed:{added + i}" for i in range(batch)))
        added += batch
        time.sleep(max(0.0, 0.1 - (time.monotonic() - tick)))
    hits = 0
    for first in range(0, probes, BATCH):
        answers = client.execute_command(
            "BF.MEXISTS", "w", *(f"never:{i}" for i in range(first, min(probes, first + BATCH))))
        hits += sum(answers)
    rate = hits / probes
    bound = float(error) + 3 * math.sqrt(float(error) * (1 - float(error)) / probes)
    return {"kind": kind, "error": float(error), "items_fed": added, "probes": probes,
            "false_positives": hits, "rate": round(rate, 5), "three_sigma_bound": round(bound, 5),
            "within": rate <= bound}


def server_time(client, name, commands):
    """Server microseconds per call of `commands` (all `name`), sent pipelined."""
    client.config_resetstat()
    for first in range(0, len(commands), BATCH):
        pipe = client.pipeline(transaction=False)
        for command in commands[first:first + BATCH]:
            pipe.execute_command(*command)
        pipe.execute()
    stat = client.info("commandstats")[f"cmdstat_{name}"]
    return stat["usec"] / stat["calls"]


def speed(client, top, calls):
    """Server time per call on a COMPACT WINDOW filter and on the default chain at `top`."""
    out = {}
    for kind, args in (("compact window", ["COMPACT", "WINDOW", 86400]), ("chain", [])):
        client.delete("s")
        client.execute_command("BF.RESERVE", "s", "0.01", 100, *args)
        for first in range(0, top, BATCH):
            client.execute_command("BF.MADD", "s", *(ident(i) for i in range(first, first + BATCH)))
        probe = [ident(i if i % 2 else top + i) for i in range(calls)]
        out[kind] = {
            "BF.EXISTS": server_time(client, "bf.exists", [("BF.EXISTS", "s", p) for p in probe]),
            "BF.ADD": server_time(client, "bf.add",
                                  [("BF.ADD", "s", ident(2 * top + i)) for i in range(calls)]),
            "BF.MEXISTS 40": server_time(
                client, "bf.mexists",
                [("BF.MEXISTS", "s", *probe[i:i + 40]) for i in range(0, calls, 40)]),
        }
    return out


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--top", type=int, default=1_000_000)
    parser.add_argument("--probes", type=int, default=60_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--calls", type=int, default=40_000)
    parser.add_argument("--out", default="docs/bench/feed_window.json")
    args = parser.parse_args()
    points = sizes(args.top)
    result = {"machine": describe(), "sizes": points, "memory": {}, "rates": []}
    with RedisServer(args.bloomrs) as server:
        c = server.client
        for error in ("0.01", "0.001"):
            used, floors = memory_curve(c, error, points)
            ratios = [u / f for u, f in zip(used, floors)]
            s = summary(ratios)
            result["memory"][error] = {"bytes": used, "floor": floors,
                                       "ratio": [round(r, 4) for r in ratios], **s}
            print(f"memory at {error}: mean {s['geometric_mean']:.2f}x  worst {s['worst']:.2f}x"
                  f"  over 2x: {s['over_2x']} of {s['sizes']}", flush=True)
            for n, u, f, r in zip(points, used, floors, ratios):
                print(f"  {n:>9,} items  {u:>10,} B  floor {f:>10,} B  {r:.2f}x")
        for kind in ("window", "compact window"):
            r = feed_rate(c, kind, "0.01", args.batch, args.probes)
            result["rates"].append(r)
            print(f"{kind:<15} fed {r['items_fed']:,} in 12 s: {r['false_positives']} of "
                  f"{r['probes']:,} never-added read present = {r['rate']:.4%} "
                  f"(asked 1 %, 3 sigma {r['three_sigma_bound']:.4%})", flush=True)
        result["speed"] = speed(c, args.top, args.calls)
        for kind, times in result["speed"].items():
            print(f"{kind:<15} at {args.top:,} items: " + "  ".join(
                f"{name} {usec:.2f} us" for name, usec in times.items()), flush=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
