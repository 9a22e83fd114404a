"""Blocked Bloom filters against RedisBloom's one-link filter: server time per call and memory.

In one run, three servers hold a filter of the same capacity and error rate (--items items at
0.01, with 10 % spare capacity so the adds of the run never grow it) and a filter grown from
the default size (BF.RESERVE 0.01 100) to --grown items (14 links at 1M):
  redisbloom       RedisBloom's module (--redisbloom PATH), its own scalable filter
  bloomrs-plain    bloomrs's plain kind, byte-identical to RedisBloom's layout (the second
                   yardstick, and the only one when no RedisBloom build is given)
  bloomrs-blocked  bloomrs's BLOCKED kind
Each case is driven by redis-benchmark (pipelined, random items from twice the items held, so
half the lookups miss) after a CONFIG RESETSTAT, and usec_per_call comes from INFO
commandstats (server time inside the command). The servers alternate within every case of
every round, and the medians over --rounds rounds are compared: BF.EXISTS, BF.ADD and
BF.MEXISTS of 40 items on the large filter, BF.EXISTS and BF.MEXISTS of 40 on the grown one.
usec_per_call is wall-clock time, so on a shared machine a command the scheduler interrupts
counts the interruption too: many short rounds are run, and the least disturbed round (the
minimum) is reported next to the median.

Yardsticks measured in the same run, on every server, to show what bounds a single-item
command, by splitting its time into three parts:
  fixed cost   BF.CARD of the same filter: a command of the module that opens the same key
               and replies, touching no filter bit (dispatch, module context, key, reply)
  lookup work  BF.EXISTS / BF.ADD on a small filter of the same kind (--small items, in the
               caches) less BF.CARD: hashing and probing with no miss
  misses       BF.EXISTS / BF.ADD on the large (or grown) filter less the small filter's
The blocked kind's floor is its fixed cost plus its misses with no lookup work at all,
    floor = (BF.CARD + (large - small)) / RedisBloom's command on the large filter,
shown next to the ratio achieved: what no cheaper hashing or probing could go below. A
built-in command gives the same parts for comparison: GETBIT at a fixed offset (fixed cost),
and at random offsets of a bitmap as large as the blocked filter (plus one random access).
redis-benchmark's __rand_int__ is zero-padded, which GETBIT refuses, so the random GETBIT goes
through a Lua wrapper; commandstats times the GETBIT inside the script with its call from the
script, and the interpreter's work between calls shares the caches with the bitmap: its miss
("GETBIT random" less "GETBIT via Lua", the same wrapper at a fixed offset) moves more between
runs than the commands' own, which is why the floor takes the latter.

Memory at the same measured false-positive rate: every large filter is probed with
--probes items never added; the blocked kind's MEMORY USAGE is compared with RedisBloom's both
at the same requested rate and for a non-scaling blocked filter sized for the false-positive
rate RedisBloom's filter measured (which the blocked sizing meets, measured too).

Usage: blocked.py [--redisbloom PATH] [--items N] [--grown N] [--rounds N] [--requests N]
                  [--probes N] [--quick] [--out FILE]
       blocked.py --plot docs/bench/blocked-10M.json docs/bench/blocked-100M.json
"""

import os
import statistics
import subprocess
import sys

from commandstats import CLIENTS, GETBIT_LUA, PIPELINE, load_items, measure
from machine import describe, write_result
from server import RedisServer, module_parser

ERROR_RATE = 0.01
BATCH = 40
LOAD_BATCH = 2_000
TARGETS = {"BF.EXISTS": 0.6, "BF.ADD": 0.7, "BF.MEXISTS 40": 0.25, "grown BF.EXISTS": 0.6,
           "memory": 1.15}


def build(server, kind, items, grown, small):
    """The large and the grown filter of one server (kind: plain or blocked)."""
    extra = ["BLOCKED"] if kind == "blocked" else []
    client = server.client
    client.execute_command("BF.RESERVE", "big", ERROR_RATE, items + items // 10, *extra)
    load_items(server, ["BF.MADD", "big"], 0, items)
    client.execute_command("BF.RESERVE", "grown", ERROR_RATE, 100, *extra)
    load_items(server, ["BF.MADD", "grown"], 0, grown)
    # The small filter: half full, room for every add of the run (its items are drawn from
    # twice the items held), so it keeps one link.
    client.execute_command("BF.RESERVE", "small", ERROR_RATE, 2 * small, *extra)
    load_items(server, ["BF.MADD", "small"], 0, small)


def bitmap_bits(servers):
    """Bits of the yardstick bitmaps: as many as the blocked server's large and grown filters
    have bytes (MEMORY USAGE), so a random GETBIT misses the caches as a block does."""
    client = servers["bloomrs-blocked"].client
    return {key: 8 * int(client.memory_usage(key, samples=0)) for key in ("big", "grown")}


def build_bitmaps(server, bits):
    """The yardstick bitmaps, written whole (SETBIT of the last bit zero-fills the string)
    and read once so every page is resident."""
    for key, size in bits.items():
        server.client.setbit(f"bits:{key}", size - 1, 1)
        server.client.strlen(f"bits:{key}")
        server.client.bitcount(f"bits:{key}")


def cases(items, grown, requests, bits, small):
    rand = "__rand_int__"
    return [
        # Yardsticks (see the module's docstring). redis-benchmark pads __rand_int__ to 12
        # digits, which GETBIT refuses: the random offset goes through a Lua wrapper, and
        # commandstats times the GETBIT inside it on its own.
        ("GETBIT", ["GETBIT", "bits:big", str(bits["big"] // 2)], None, requests),
        ("GETBIT via Lua", ["EVAL", GETBIT_LUA, "1", "bits:big", str(bits["big"] // 2)], None,
         requests),
        ("GETBIT random", ["EVAL", GETBIT_LUA, "1", "bits:big", rand], bits["big"], requests),
        ("BF.CARD", ["BF.CARD", "big"], None, requests),
        ("grown GETBIT random", ["EVAL", GETBIT_LUA, "1", "bits:grown", rand], bits["grown"],
         requests),
        ("grown BF.CARD", ["BF.CARD", "grown"], None, requests),
        ("small BF.EXISTS", ["BF.EXISTS", "small", rand], 2 * small, requests),
        ("small BF.ADD", ["BF.ADD", "small", rand], 2 * small, requests),
        ("BF.EXISTS", ["BF.EXISTS", "big", rand], 2 * items, requests),
        ("BF.ADD", ["BF.ADD", "big", rand], 2 * items, requests),
        ("BF.MEXISTS 40", ["BF.MEXISTS", "big", *[rand] * BATCH], 2 * items, requests // 10),
        ("grown BF.EXISTS", ["BF.EXISTS", "grown", rand], 2 * grown, requests),
        ("grown BF.MEXISTS 40", ["BF.MEXISTS", "grown", *[rand] * BATCH], 2 * grown,
         requests // 10),
    ]


def false_positive_rate(client, key, probes):
    """The share of `probes` items never added that the filter reports present."""
    hits = 0
    pipe = client.pipeline(transaction=False)
    for start in range(0, probes, LOAD_BATCH):
        end = min(start + LOAD_BATCH, probes)
        pipe.execute_command("BF.MEXISTS", key, *(f"absent:{i}" for i in range(start, end)))
    for reply in pipe.execute():
        hits += sum(int(r) for r in reply)
    return hits / probes


def filter_facts(server, key, probes):
    client = server.client
    info = client.execute_command("BF.INFO", key)
    fields = dict(zip(info[::2], info[1::2]))
    return {"memory_usage": int(client.memory_usage(key, samples=0)),
            "links": int(fields["Number of filters"]),
            "false_positive_rate": false_positive_rate(client, key, probes)}


def memory(servers, yardstick, items, probes):
    """MEMORY USAGE and measured false-positive rates of the large filters, and a non-scaling
    blocked filter sized for the rate the yardstick measured."""
    facts = {name: filter_facts(server, "big", probes) for name, server in servers.items()}
    for name, server in servers.items():
        facts[f"{name} grown"] = filter_facts(server, "grown", probes)
    measured = facts[yardstick]["false_positive_rate"]
    blocked = servers["bloomrs-blocked"]
    blocked.client.execute_command("BF.RESERVE", "matched", measured, items, "NONSCALING",
                                   "BLOCKED")
    load_items(blocked, ["BF.MADD", "matched"], 0, items)
    facts["bloomrs-blocked at the yardstick's measured rate"] = filter_facts(blocked, "matched",
                                                                             probes)
    blocked.client.delete("matched")
    return facts


def run(modules, items, grown, small, rounds, requests, probes):
    servers = {name: RedisServer(path) for name, path in modules.items()}
    runs = {name: [] for name in servers}
    try:
        for name, server in servers.items():
            server.__enter__()
            print(f"building the filters on {name}", file=sys.stderr, flush=True)
            build(server, "blocked" if name == "bloomrs-blocked" else "plain", items, grown,
                  small)
        bits = bitmap_bits(servers)
        for server in servers.values():
            build_bitmaps(server, bits)
        order = list(servers)
        for r in range(rounds):
            results = {name: {} for name in servers}
            for label, command, keyspace, calls in cases(items, grown, requests, bits,
                                                         small):
                for name in order if r % 2 == 0 else reversed(order):
                    results[name][label] = measure(servers[name], command, keyspace, calls)
            for name in servers:
                runs[name].append(results[name])
            print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
        yardstick = "redisbloom" if "redisbloom" in servers else "bloomrs-plain"
        facts = memory(servers, yardstick, items, probes)
        links = {name: int(s.client.execute_command("BF.INFO", "grown", "FILTERS")[0])
                 for name, s in servers.items()}
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    median = {name: {label: statistics.median(run[label]["usec_per_call"] for run in r)
                     for label in r[0]} for name, r in runs.items()}
    least = {name: {label: min(run[label]["usec_per_call"] for run in r)
                    for label in r[0]} for name, r in runs.items()}
    return runs, {"median": median, "min": least}, facts, links, yardstick


def ratios(stats, facts, yardstick):
    """Blocked against each other server, by the medians (judged against the targets) and
    by the least disturbed rounds."""
    median, least = stats["median"], stats["min"]
    rows = []
    for label in median["bloomrs-blocked"]:
        for against in median:
            if against == "bloomrs-blocked":
                continue
            ratio = median["bloomrs-blocked"][label] / median[against][label]
            row = {"case": label, "against": against, "ratio": round(ratio, 3),
                   "ratio_of_min": round(least["bloomrs-blocked"][label] / least[against][label],
                                         3)}
            if label in TARGETS and against == yardstick:
                row["target"] = TARGETS[label]
                row["met"] = ratio <= TARGETS[label]
            rows.append(row)
    rows += floors(median, yardstick)
    base = facts[yardstick]["memory_usage"]
    for name in ("bloomrs-blocked", "bloomrs-blocked at the yardstick's measured rate"):
        ratio = facts[name]["memory_usage"] / base
        rows.append({"case": f"memory ({name})", "against": yardstick,
                     "ratio": round(ratio, 3), "target": TARGETS["memory"],
                     "met": ratio <= TARGETS["memory"]})
    # The grown chains at the same request (their tight links cost a blocked layout more).
    ratio = facts["bloomrs-blocked grown"]["memory_usage"] / facts[f"{yardstick} grown"][
        "memory_usage"]
    rows.append({"case": "memory (grown, same request)", "against": yardstick,
                 "ratio": round(ratio, 3)})
    return rows


# A single-item case and its yardsticks: the module's fixed cost on the same key (BF.CARD)
# and the same command on the small filter (no miss).
FLOOR_OF = {"BF.EXISTS": ("BF.CARD", "small BF.EXISTS"),
            "BF.ADD": ("BF.CARD", "small BF.ADD"),
            "grown BF.EXISTS": ("grown BF.CARD", "small BF.EXISTS")}


def parts(costs, label):
    """`label`'s time on one server split into fixed cost, lookup work and misses (µs)."""
    card, cached = FLOOR_OF[label]
    return {"fixed": costs[card], "lookup": costs[cached] - costs[card],
            "misses": costs[label] - costs[cached]}


def floor_usec(costs, label):
    """The blocked kind's least time for `label` with no lookup work at all: its fixed cost
    plus its misses."""
    split = parts(costs, label)
    return split["fixed"] + max(0.0, split["misses"])


def floors(median, yardstick):
    """For each single-item case: every server's time split into its parts, and the blocked
    kind's floor against the yardstick's time next to the ratio achieved (medians)."""
    blocked, against = median["bloomrs-blocked"], median[yardstick]
    rows = []
    for label in FLOOR_OF:
        floor = floor_usec(blocked, label)
        rows.append({"case": f"{label} floor", "against": yardstick,
                     "floor_usec": round(floor, 4), "floor_ratio": round(floor / against[label], 3),
                     "ratio": round(blocked[label] / against[label], 3),
                     "parts_usec": {name: {part: round(value, 4)
                                           for part, value in parts(costs, label).items()}
                                    for name, costs in median.items()}})
    return rows


def plot(json_paths, out_png):
    """Per result file (10M, 100M items), one column: above, bars of usec per call (median of
    the rounds, per item for the batches) of each server, the blocked kind's floor marked on
    its single-item bars; below, each single-item case split into fixed cost, lookup work and
    misses per server (see the module's docstring)."""
    import json

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = {"redisbloom": "#7f7f7f", "bloomrs-plain": "#1f77b4", "bloomrs-blocked": "#d62728"}
    figure, axes = plt.subplots(2, len(json_paths), figsize=(7 * len(json_paths), 11),
                                squeeze=False, gridspec_kw={"height_ratios": [3, 1.4]})
    for column, path in enumerate(json_paths):
        with open(path, encoding="utf-8") as src:
            data = json.load(src)
        median = data["median_usec_per_call"]
        plot_cases(axes[0][column], median, colors)
        title = (f"{data['settings']['items'] // 1_000_000}M items at 1 %; grown: "
                 f"{data['settings']['grown'] // 1_000_000}M in 14 links")
        axes[0][column].set_title(title, fontsize=10)
        if "small BF.ADD" in median["bloomrs-blocked"]:
            plot_parts(axes[1][column], median)
        else:
            axes[1][column].set_visible(False)
    m = data["machine"]
    server = (m.get("redis_server") or "").split(" sha")[0]
    figure.suptitle(f"Blocked against RedisBloom's layout\n{m.get('cpu')}, {m.get('cores')} "
                    f"cores; {server}", fontsize=9)
    figure.tight_layout()
    figure.savefig(out_png, dpi=110)
    plt.close(figure)


def plot_cases(axis, median, colors):
    labels = list(median["bloomrs-blocked"])
    per_item = [BATCH if "MEXISTS" in label else 1 for label in labels]
    height = 0.8 / len(median)
    for index, (name, cases) in enumerate(median.items()):
        values = [cases[label] / n for label, n in zip(labels, per_item)]
        bars = axis.barh([i + index * height for i in range(len(labels))], values,
                         height=height, color=colors.get(name), label=name)
        axis.bar_label(bars, fmt="%.2f", padding=2, fontsize=7)
    # The blocked kind's floor (fixed cost + misses) on its bar of each single-item case.
    blocked_row = list(median).index("bloomrs-blocked")
    for i, label in enumerate(labels):
        if label in FLOOR_OF and "small BF.ADD" in median["bloomrs-blocked"]:
            y = i + blocked_row * height
            axis.plot([floor_usec(median["bloomrs-blocked"], label)] * 2,
                      [y - height / 2, y + height / 2], color="black", linewidth=2,
                      label="blocked floor: fixed cost + misses" if label == "BF.EXISTS"
                      else None)
    axis.set_yticks([i + 0.4 - height / 2 for i in range(len(labels))],
                    [f"{label} (per item)" if n > 1 else label
                     for label, n in zip(labels, per_item)])
    axis.invert_yaxis()
    axis.set_xlabel("usec per call (median of rounds, INFO commandstats)")
    axis.grid(True, axis="x", alpha=0.3)
    axis.legend(fontsize=8, loc="upper right")


def plot_parts(axis, median):
    """Stacked bars: fixed cost, lookup work and misses of each single-item case per server."""
    shades = {"fixed": "#bbbbbb", "lookup": "#6baed6", "misses": "#d62728"}
    rows = [(label, name) for label in FLOOR_OF for name in median]
    order = list(shades)
    for part, color in shades.items():
        before = order[:order.index(part)]
        left = [sum(max(0.0, parts(median[name], label)[p]) for p in before)
                for label, name in rows]
        values = [max(0.0, parts(median[name], label)[part]) for label, name in rows]
        axis.barh(range(len(rows)), values, left=left, color=color, label=part)
    axis.set_yticks(range(len(rows)), [f"{label}: {name}" for label, name in rows], fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel("usec per call: fixed (BF.CARD), lookup (small filter - BF.CARD), "
                    "misses (large - small)", fontsize=8)
    axis.grid(True, axis="x", alpha=0.3)
    axis.legend(fontsize=8, loc="lower right")


def uptime():
    """`uptime` as printed: how long the machine is up, and its load averages."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--redisbloom", help="RedisBloom's redisbloom.so, the yardstick")
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--grown", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=50_000,
                        help="items of the small filter (in the caches)")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--probes", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="1M items, 5 rounds of 20,000")
    parser.add_argument("--out", default=None, help="default docs/bench/blocked-<items>.json")
    parser.add_argument("--plot", nargs="+", metavar="JSON",
                        help="only draw docs/bench/blocked.png from these result files")
    args = parser.parse_args()
    if args.plot:
        plot(args.plot, "docs/bench/blocked.png")
        return
    if args.quick:
        args.items, args.rounds, args.requests, args.probes = 1_000_000, 5, 20_000, 200_000
    modules = {}
    if args.redisbloom:
        modules["redisbloom"] = args.redisbloom
    modules["bloomrs-plain"] = args.bloomrs
    modules["bloomrs-blocked"] = args.bloomrs
    for path in modules.values():
        if not os.path.isfile(path):
            sys.exit(f"no module at {path}")
    out = args.out or f"docs/bench/blocked-{args.items // 1_000_000}M.json"
    machine = describe()
    machine["uptime_at_start"] = uptime()
    runs, stats, facts, links, yardstick = run(modules, args.items, args.grown, args.small,
                                               args.rounds, args.requests, args.probes)
    machine["uptime_at_end"] = uptime()
    rows = ratios(stats, facts, yardstick)
    for kind, table in stats.items():
        print(f"usec_per_call, {kind} of {args.rounds} rounds")
        print(f"{'case':<24}" + "".join(f"{name:>18}" for name in table))
        for label in table["bloomrs-blocked"]:
            print(f"{label:<24}" + "".join(f"{table[n][label]:>18.3f}" for n in table))
    for name, fact in facts.items():
        print(f"{name}: {fact}")
    print(f"grown links: {links}")
    for row in rows:
        verdict = "" if "met" not in row else ("  met" if row["met"] else "  MISSED")
        target = f" (target <= {row['target']}x)" if "target" in row else ""
        least = f", least disturbed rounds {row['ratio_of_min']}x" if "ratio_of_min" in row else ""
        floor = f", floor {row['floor_ratio']}x ({row['parts_usec']})" if "floor_ratio" in row \
            else ""
        print(f"  {row['case']} vs {row['against']}: {row['ratio']}x{target}{verdict}{least}"
              f"{floor}")
    settings = {"items": args.items, "capacity": args.items + args.items // 10,
                "grown": args.grown, "error_rate": ERROR_RATE, "rounds": args.rounds,
                "requests": args.requests, "probes": args.probes, "pipeline": PIPELINE,
                "clients": CLIENTS, "batch": BATCH, "yardstick": yardstick,
                "modules": {name: os.path.basename(path) for name, path in modules.items()}}
    write_result(out, {"machine": machine, "settings": settings,
                       "median_usec_per_call": stats["median"], "min_usec_per_call": stats["min"],
                       "runs": runs, "filters": facts, "grown_links": links, "ratios": rows})
    plot([out], os.path.splitext(out)[0] + ".png")
    print(f"wrote {out} and its plot")


if __name__ == "__main__":
    main()
