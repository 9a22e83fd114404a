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
import sys

from commandstats import CLIENTS, PIPELINE, load_items, measure
from machine import describe, write_result
from server import RedisServer, module_parser

ERROR_RATE = 0.01
BATCH = 40
LOAD_BATCH = 2_000
TARGETS = {"BF.EXISTS": 0.6, "BF.ADD": 0.7, "BF.MEXISTS 40": 0.25, "grown BF.EXISTS": 0.6,
           "memory": 1.15}


def build(server, kind, items, grown):
    """The large and the grown filter of one server (kind: plain or blocked)."""
    extra = ["BLOCKED"] if kind == "blocked" else []
    client = server.client
    client.execute_command("BF.RESERVE", "big", ERROR_RATE, items + items // 10, *extra)
    load_items(server, ["BF.MADD", "big"], 0, items)
    client.execute_command("BF.RESERVE", "grown", ERROR_RATE, 100, *extra)
    load_items(server, ["BF.MADD", "grown"], 0, grown)


def cases(items, grown, requests):
    rand = "__rand_int__"
    return [
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


def run(modules, items, grown, rounds, requests, probes):
    servers = {name: RedisServer(path) for name, path in modules.items()}
    runs = {name: [] for name in servers}
    try:
        for name, server in servers.items():
            server.__enter__()
            print(f"building the filters on {name}", file=sys.stderr, flush=True)
            build(server, "blocked" if name == "bloomrs-blocked" else "plain", items, grown)
        order = list(servers)
        for r in range(rounds):
            results = {name: {} for name in servers}
            for label, command, keyspace, calls in cases(items, grown, requests):
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


def plot(json_paths, out_png):
    """Bars of usec per call (median of the rounds, per item for the batches) of each server,
    one panel per result file (10M, 100M items)."""
    import json

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = {"redisbloom": "#7f7f7f", "bloomrs-plain": "#1f77b4", "bloomrs-blocked": "#d62728"}
    figure, axes = plt.subplots(1, len(json_paths), figsize=(6 * len(json_paths), 4.5),
                                squeeze=False)
    for axis, path in zip(axes[0], json_paths):
        with open(path, encoding="utf-8") as src:
            data = json.load(src)
        median = data["median_usec_per_call"]
        labels = list(median["bloomrs-blocked"])
        per_item = [BATCH if "MEXISTS" in label else 1 for label in labels]
        height = 0.8 / len(median)
        for index, (name, cases) in enumerate(median.items()):
            values = [cases[label] / n for label, n in zip(labels, per_item)]
            bars = axis.barh([i + index * height for i in range(len(labels))], values,
                             height=height, color=colors.get(name), label=name)
            axis.bar_label(bars, fmt="%.2f", padding=2, fontsize=7)
        axis.set_yticks([i + 0.4 - height / 2 for i in range(len(labels))],
                        [f"{label} (per item)" if n > 1 else label
                         for label, n in zip(labels, per_item)])
        axis.invert_yaxis()
        axis.set_xlabel("usec per call (median of rounds, INFO commandstats)")
        axis.set_title(f"{data['settings']['items'] // 1_000_000}M items at 1 %; grown: "
                       f"{data['settings']['grown'] // 1_000_000}M in 14 links", fontsize=10)
        axis.grid(True, axis="x", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    m = data["machine"]
    server = (m.get("redis_server") or "").split(" sha")[0]
    figure.suptitle(f"Blocked against RedisBloom's layout — {m.get('cpu')}, {m.get('cores')} "
                    f"cores; {server}", fontsize=9)
    figure.tight_layout()
    figure.savefig(out_png, dpi=110)
    plt.close(figure)


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--redisbloom", help="RedisBloom's redisbloom.so, the yardstick")
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--grown", type=int, default=1_000_000)
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
    runs, stats, facts, links, yardstick = run(modules, args.items, args.grown, args.rounds,
                                               args.requests, args.probes)
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
        print(f"  {row['case']} vs {row['against']}: {row['ratio']}x{target}{verdict}{least}")
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
