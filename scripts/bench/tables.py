"""Prints the benchmark results in docs/bench/ as the Markdown tables of the README and docs/.

Usage: tables.py [docs/bench]
"""

import json
import os
import sys

BATCH_COMMANDS = ("BF.MADD", "BF.MEXISTS")


def _load(path):
    with open(path, encoding="utf-8") as src:
        return json.load(src)


def machine_line(machine):
    return (f"{machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, "
            f"{machine['os']}, {machine['redis_server'].split(' sha')[0]}, {machine['rustc']}; "
            f"load average at start {machine['load_average_at_start'][0]}")


def grown_table(data):
    """Grown filters against one link of the same items, for each module build measured."""
    names = list(data["results"])
    first = data["results"][names[0]]["median"]
    links = [label.split()[1] for label in first if label.endswith(" BF.EXISTS")
             and label.startswith("links ")]
    header = "| case |" + "".join(f" {name}: usec/call | × one link |" for name in names)
    lines = [header, "|---|" + "---:|---:|" * len(names)]

    def row(label, one):
        cells = []
        for name in names:
            median = data["results"][name]["median"]
            cost = median[label]["usec_per_call"]
            cells += [f"{cost:.3f}", f"{cost / median[one]['usec_per_call']:.2f}"]
        return f"| {label} | " + " | ".join(cells) + " |"

    for command in ("BF.EXISTS", "BF.ADD"):
        lines += [row(f"links {n} {command}", f"links 1 {command}") for n in links]
    lines += [row(f"feed {n} BF.MEXISTS", "feed 1 link BF.MEXISTS") for n in ("3 links", "1 link")]
    filters = data["settings"]["cf_grown_filters"]
    for command in ("CF.EXISTS", "CF.ADD", "CF.DEL"):
        lines += [row(f"cuckoo {filters} sub-filters {command}", f"cuckoo 1 sub-filter {command}"),
                  row(f"cuckoo 1 sub-filter {command}", f"cuckoo 1 sub-filter {command}")]
    return "\n".join(lines)


def commandstats_table(data):
    """One row per command: usec per call on both sizes, the GETBIT ratios and calls/s."""
    median = data["results"]["bloomrs"]["median"]
    lines = ["| command | small: usec/call | × GETBIT | × GETBIT random | calls/s "
             "| large: usec/call | × GETBIT | × GETBIT random | calls/s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    commands = [label.split(" ", 1)[1] for label in median if label.startswith("small ")]
    for command in commands:
        cells = [f"`{command}`" + (" (100 items)" if command in BATCH_COMMANDS else "")]
        for size in ("small", "large"):
            row = median[f"{size} {command}"]
            cost = row["usec_per_call"]
            cells += [f"{cost:.3f}",
                      f"{cost / median[f'{size} GETBIT']['usec_per_call']:.1f}",
                      f"{cost / median[f'{size} GETBIT random']['usec_per_call']:.1f}",
                      f"{row['rps']:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets_table(data):
    lines = ["| target | measured | |", "|---|---:|---|"]
    for row in next(iter(data["results"].values()))["targets"]:
        lines.append(f"| {row['target']} | {row['ratio']} | {'met' if row['met'] else 'missed'} |")
    return "\n".join(lines)


def comparison_table(data):
    """Ratios other / bloomrs when commandstats.py ran with --module."""
    names = list(data["results"])
    if len(names) < 2:
        return None
    mine, other = (data["results"][n]["median"] for n in names[:2])
    lines = [f"| case | bloomrs usec/call | {names[1]} usec/call | ratio |", "|---|---:|---:|---:|"]
    for label in mine:
        a, b = mine[label]["usec_per_call"], other[label]["usec_per_call"]
        lines.append(f"| {label} | {a:.3f} | {b:.3f} | {b / a:.2f} |")
    return "\n".join(lines)


FEED_NAMES = {"set": "per-user SET", "bloomrs": "bloomrs (tiers)",
              "sparse": "tiers, sparse start", "compact": "compact"}


def feed_table(data):
    """Every approach of the run: memory, items seen, false positives, refreshes per second."""
    names = list(data["approaches"])
    rows = [
        ("used_memory per user", lambda e: f"{e['used_memory_per_user']:,.0f} B"),
        ("bytes per item seen", lambda e: f"{e['bytes_per_item_seen']:.2f}"),
        ("items seen per user: median / mean / p99 / max",
         lambda e: "{median:,} / {mean:,.0f} / {p99:,} / {max:,}".format(**e["items_seen_per_user"])),
        ("false positives (items wrongly hidden)",
         lambda e: f"{e['wrongly_hidden']:,} of {e['unseen_items_checked']:,} "
                   f"= {100 * e['false_positive_rate']:.3f}%"),
        ("items shown twice", lambda e: f"{e['shown_twice']}"),
        ("refreshes per second", lambda e: f"{e['refreshes_per_second']:,}"),
    ]
    lines = ["| | " + " | ".join(FEED_NAMES.get(n, n) for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    lines += [f"| {name} | " + " | ".join(cell(data["approaches"][n]) for n in names) + " |"
              for name, cell in rows]
    return "\n".join(lines)


BINS = (0, 300, 1_000, 1_500, 3_000, 11_000, 30_000, 10**9)


def equal_items_table(data):
    """bloomrs / SET memory of the same sampled users, grouped by the items they have seen."""
    pairs = zip(data["samples"]["set"], data["samples"]["bloomrs"])
    groups = {}
    for (items, set_bytes), (_, bloom_bytes) in pairs:
        low = max(b for b in BINS if b <= items)
        groups.setdefault(low, []).append((set_bytes, bloom_bytes))
    lines = ["| items seen | users sampled | SET bytes (median) | bloomrs bytes (median) "
             "| bloomrs / SET |", "|---|---:|---:|---:|---:|"]
    for low in sorted(groups):
        rows = groups[low]
        high = BINS[BINS.index(low) + 1]
        set_median = sorted(r[0] for r in rows)[len(rows) // 2]
        bloom_median = sorted(r[1] for r in rows)[len(rows) // 2]
        span = f"{low:,}–{high - 1:,}" if high < BINS[-1] else f"{low:,} and more"
        lines.append(f"| {span} | {len(rows)} | {set_median:,} | {bloom_median:,} "
                     f"| {bloom_median / set_median:.3f} |")
    return "\n".join(lines)


def forget_table(data):
    """used_memory per user on chosen simulated days, then false positives and repeats."""
    settings, approaches = data["settings"], data["approaches"]
    window, days = settings["window_days"], settings["days"]
    marks = sorted({1, window // 2, window, window + window // 2, 2 * window, days} - {0})
    marks = [d for d in marks if d <= days]
    lines = ["| used_memory per user (bytes) | " + " | ".join(f"day {d}" for d in marks)
             + " | false positives | shown again within memory |",
             "|---|" + "---:|" * (len(marks) + 2)]
    for name, entry in approaches.items():
        memory = entry["memory_per_user_by_day"]
        cells = [f"{memory[d - 1]:,.0f}" for d in marks]
        cells += [f"{entry['false_positives']:,} / {entry['unseen_items_checked']:,} "
                  f"({100 * entry['false_positive_rate']:.3f}%)", f"{entry['shown_within_memory']}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


N_TARGETS = (100, 200, 500, 1000, 1500, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000)


def _ranges(ranges):
    return ", ".join(f"{a:,}–{b:,}" for a, b in ranges) or "none"


def compact_tables(data):
    """The compact kind's tables from a compact.json (scripts/bench/compact.py's results)."""
    out = []
    memory = data["memory"]
    by = {(r["error"], r["n"]): r for r in memory}
    lines = ["| n | SET | tiers 0.01 | sparse 0.01 | compact 0.01 | floor 0.01 | compact / floor "
             "| compact / tiers | compact 0.001 | floor 0.001 | compact / floor |",
             "|---:|" + "---:|" * 10]
    for n in sorted({r["n"] for r in memory}):
        a, b = by[(0.01, n)], by.get((0.001, n))
        cells = [f"{n:,}", f"{a['set']:,}", f"{a['tiers']:,}", f"{a['sparse']:,}",
                 f"{a['compact']:,}", f"{a['floor']:,}", f"{a['compact'] / a['floor']:.2f}",
                 f"{a['compact'] / a['tiers']:.2f}"]
        if b:
            cells += [f"{b['compact']:,}", f"{b['floor']:,}", f"{b['compact'] / b['floor']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    out.append("\n".join(lines))

    summary, sweep = data["summary"], data["sweep"]
    rows = [
        ("compact / floor, geometric mean (target ≤ 1.6)",
         lambda s, w: f"**{s['geomean_compact_over_floor']:.2f}**"),
        ("compact / floor, worst (target ≤ 2.5)",
         lambda s, w: f"**{s['max_compact_over_floor']:.2f}** (n = {s['max_at']:,})"),
        ("tiers / floor, geometric mean", lambda s, w: f"{s['geomean_tiers_over_floor']:.2f}"),
        ("n of the list where compact > tiers",
         lambda s, w: ", ".join(f"{n:,}" for n in s["n_where_compact_above_tiers"]) or "none"),
        (f"every n from 1 to {sweep['0.01']['limit']:,} where compact > tiers (target: none)",
         lambda s, w: _ranges(w["compact_above_tiers"])),
        ("compact / tiers at worst over the sweep",
         lambda s, w: f"{w['max_compact_over_tiers']:.2f}"),
        ("starting hint 100 gives the same bytes as 1000",
         lambda s, w: "yes" if s["hint100_equals_hint1000"] else "no"),
        ("what bounds the mean: 1 / load (items over slots), geometric mean",
         lambda s, w: f"{s['bound']['geomean_one_over_load']:.2f}" if "bound" in s else "—"),
        ("× bits per slot / the floor's bits per item, geometric mean",
         lambda s, w: (f"{s['bound']['geomean_bits_per_slot']:.2f} / "
                       f"{s['bound']['geomean_floor_bits_per_item']:.2f} = "
                       f"{s['bound']['geomean_slot_over_floor_bits']:.2f}")
         if "bound" in s else "—"),
    ]
    listed = sorted({r["n"] for r in memory} & set(N_TARGETS))
    lines = [f"| over n = {listed[0]:,} ... {listed[-1]:,} | ε = 0.01 | ε = 0.001 |",
             "|---|---:|---:|"]
    for name, cell in rows:
        lines.append(f"| {name} | " + " | ".join(cell(summary[e], sweep[e])
                                                 for e in ("0.01", "0.001")) + " |")
    out.append("\n".join(lines))

    fp = data["false_positives"]
    lines = ["| ε | probes | 3σ margin | worst measured (n) | worst right after a doubling (n) "
             "| within ε at every n | false negatives |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for e, f in fp.items():
        after = max((r for r in f["rows"] if r["where"] == "after doubling"),
                    key=lambda r: r["fp_rate"], default=None)
        after_cell = f"{100 * after['fp_rate']:.3f}% ({after['n']:,})" if after else "—"
        lines.append(f"| {e} | {f['probes']:,} | ±{100 * f['margin']:.3f}% "
                     f"| {100 * f['max_fp_rate']:.3f}% ({f['max_at']:,}) | {after_cell} "
                     f"| {'yes' if f['all_within'] else 'no'} ({len(f['rows'])} sizes) "
                     f"| {f['false_negatives']} |")
    out.append("\n".join(lines))

    m = data["speed"]["median"]
    big = data["speed"]["big"]
    lines = ["| case | compact | yardstick | ratio | target |", "|---|---:|---:|---:|---:|",
             f"| `BF.EXISTS`, grown from capacity 100 to {big:,}, vs one link reserved for them "
             f"| {m['exists_compact']:.2f} | {m['exists_link']:.2f} | **{m['ratio_exists']:.2f}** "
             "| ≤ 1.2 |",
             f"| `BF.MEXISTS` ×40, grown 1,000 → 111,000, vs the {m['tiers_links']}-tier filter "
             f"| {m['mexists40_compact']:.2f} | {m['mexists40_tiers']:.2f} "
             f"| **{m['ratio_mexists40']:.2f}** | ≤ 0.6 |",
             f"| same, vs one link reserved for 111,000 | {m['mexists40_compact']:.2f} "
             f"| {m['mexists40_link']:.2f} | {m['ratio_mexists40_link']:.2f} | — |",
             f"| same, absent ids only, vs the tiers | {m['mexists40_absent_compact']:.2f} "
             f"| {m['mexists40_absent_tiers']:.2f} | {m['ratio_mexists40_absent']:.2f} | — |",
             f"| same, present ids only, vs the tiers | {m['mexists40_present_compact']:.2f} "
             f"| {m['mexists40_present_tiers']:.2f} | {m['ratio_mexists40_present']:.2f} | — |",
             f"| `BF.MEXISTS` ×40 on a missing key (the command's own cost) "
             f"| {m['mexists40_missing']:.2f} | | | |",
             f"| `BF.ADD` while growing to {big:,}, vs adding to the one link "
             f"| {m['add_compact']:.2f} | {m['add_link']:.2f} | **{m['ratio_add']:.2f}** "
             "| ≤ 1.5 |",
             f"| same, without the {m['add_compact_slow_calls']:.0f} calls over 200 µs "
             f"(the doublings) | {m['add_compact_without_slow']:.2f} | {m['add_link']:.2f} "
             f"| {m['ratio_add_without_slow']:.2f} | — |",
             f"| `BF.EXISTS` on a missing key (the command's own cost) "
             f"| {m['exists_missing']:.2f} | | | |"]
    out.append("\n".join(lines))

    lg = data["longest"]
    lines = [f"Longest single command while growing to {lg['items']:,} items: "
             f"{lg['longest_madd_us'] / 1000:,.1f} ms (`BF.MADD` of 1,000 ids) against "
             f"{lg['reserve_us'] / 1000:,.2f} ms for `BF.RESERVE k 0.01 {lg['items']:,}` "
             f"(median of {len(lg.get('reserve_runs_us', [1]))}); table {lg['compact_bytes']:,} B"
             + (f"; `COPY` of the final table (one pass over its bytes) "
                f"{lg['copy_us'] / 1000:,.1f} ms" if "copy_us" in lg else ""),
             "", "| held after | longest `BF.MADD` (ms) | table bytes | ns per byte |",
             "|---:|---:|---:|---:|"]
    previous = None
    for step in lg.get("steps", []):
        if step["bytes"] != previous:
            per_byte = 1000 * step["longest_madd_us"] / step["bytes"]
            lines.append(f"| {step['held']:,} | {step['longest_madd_us'] / 1000:,.1f} "
                         f"| {step['bytes']:,} | {per_byte:.1f} |")
        previous = step["bytes"]
    out.append("\n".join(lines))

    d = data["deletes"]
    lines = ["| ε | COMPACT COUNTING bits/item (FP) | counting kind bits/item (FP) "
             "| Cuckoo bits/item (FP, bucket size) |", "|---:|---:|---:|---:|"]
    for row in d["bits"]:
        cc, ct, cf = row["compact_counting"], row["counting"], row["cuckoo"]
        cf_cell = (f"{cf['bits_per_item']} ({100 * cf['fp_rate']:.3f}%, {cf['bucket_size']})"
                   if cf else "cannot reach it")
        lines.append(f"| {row['error']} | {cc['memory_usage']} ({100 * cc['fp_rate']:.3f}%) "
                     f"| {ct['memory_usage']} ({100 * ct['fp_rate']:.3f}%) | {cf_cell} |")
    out.append("\n".join(lines))
    lines = ["| ε | adds | deletes | deleted | false negatives | FP at peak | FP after deletes "
             "| deleted items still present | bits per item held |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in d["churn"]:
        lines.append(f"| {row['error']} | {row['adds']:,} | {row['deletes']:,} "
                     f"| {row['deleted']:,} | {row['false_negatives']} "
                     f"| {100 * row['fp_rate_at_peak']:.3f}% | {100 * row['fp_rate']:.3f}% "
                     f"| {100 * row['deleted_still_present_rate']:.3f}% "
                     f"| {row['bits_per_item_held']} |")
    out.append("\n".join(lines))
    return "\n\n".join(out)


BIG_COMMANDS = ["create", "grow", "scandump", "dump", "copy", "unlink", "del-lazy", "del-sync"]


def bigvalues_table(data):
    """bigvalues.py: one row per filter, the server time (ms) of each command on it."""
    lines = ["| filter (MEMORY USAGE) | " + " | ".join(BIG_COMMANDS) + " | longest fill MADD |",
             "|---|" + "---:|" * (len(BIG_COMMANDS) + 1)]
    for name, figures in data["filters"].items():
        cells = []
        for command in BIG_COMMANDS:
            us = figures.get(command, {}).get("us")
            cells.append("n/a" if us is None else f"{us / 1000:,.3f}")
        madd = figures.get("filled", {}).get("longest_madd_us")
        cells.append("—" if madd is None else f"{madd / 1000:,.1f}")
        size = f"{figures['memory_usage'] / 2**20:.0f} MiB"
        lines.append(f"| {name} ({size}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def migration_table(data):
    """migration.py: the longest pause a client saw while the filter moved, per layout."""
    lines = ["| layout | key size | longest client pause | longest MIGRATE | median MIGRATE "
             "| all slots moved in |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in data["layouts"].items():
        moves = sorted(m for m in r["migrate_us"] if m is not None)
        median = moves[len(moves) // 2] / 1000 if moves else float("nan")
        lines.append(f"| {name} | {r['key_bytes'] / 2**20:.1f} MiB "
                     f"| {r['client']['longest_ms']:,.1f} ms "
                     f"| {r['longest_migrate_us'] / 1000:,.1f} ms | {median:,.1f} ms "
                     f"| {r['total_s']:.1f} s |")
    return "\n".join(lines)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "docs/bench"
    for name in ("commandstats.json", "commandstats-grown.json"):
        stats = os.path.join(folder, name)
        if not os.path.exists(stats):
            continue
        data = _load(stats)
        median = next(iter(data["results"].values()))["median"]
        print(f"{name}: server time per call — {machine_line(data['machine'])}\n")
        if "small GETBIT" in median:
            print(commandstats_table(data), "\n")
        if "links 1 BF.EXISTS" in median:
            print(grown_table(data), "\n")
        print(targets_table(data), "\n")
        comparison = comparison_table(data)
        if comparison:
            print(comparison, "\n")
    compact = os.path.join(folder, "compact.json")
    if os.path.exists(compact):
        data = _load(compact)
        print(f"compact.json: compact Bloom filters — {machine_line(data['machine'])}\n")
        print(compact_tables(data), "\n")
    for name, title, table in [("bigvalues.json", "the longest single command", bigvalues_table),
                               ("migration.json", "moving a filter between cluster nodes",
                                migration_table)]:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            data = _load(path)
            print(f"{name}: {title}, {data['items']:,} items — {machine_line(data['machine'])}\n")
            print(table(data), "\n")
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("feed") and name.endswith(".json")):
            continue
        data = _load(os.path.join(folder, name))
        settings = data["settings"]
        if name.startswith("feed_forget"):
            print(f"{name} — {settings['users']:,} users, {settings['days']} days, "
                  f"window {settings['window_days']} days, windowed / zset after the "
                  f"first window {data['windowed_over_zset']:.3f}"
                  + (f", last day: compact / growing {data['compact_over_growing_final']:.3f}, "
                     f"windowed / compact {data['windowed_over_compact_final']:.3f}"
                     if "compact_over_growing_final" in data else "") + "\n")
            print(forget_table(data), "\n")
        else:
            print(f"{name} — {settings['users']:,} users, {data['refreshes']:,} refreshes, "
                  f"{settings['item_ids']} item ids, memory bloomrs / set "
                  f"{data['memory_ratio']:.3f}"
                  + (f", compact / tiers {data['compact_vs_tiers_memory']:.3f}"
                     if "compact_vs_tiers_memory" in data else "") + "\n")
            print(feed_table(data), "\n")
            print(equal_items_table(data), "\n")


if __name__ == "__main__":
    main()
