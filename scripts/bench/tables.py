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


def feed_table(data):
    """SETs against bloomrs: memory, items seen, false positives, refreshes per second."""
    sets, bloom = data["approaches"]["set"], data["approaches"]["bloomrs"]
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
    lines = ["| | per-user SET | bloomrs |", "|---|---:|---:|"]
    lines += [f"| {name} | {cell(sets)} | {cell(bloom)} |" for name, cell in rows]
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
    for name in sorted(os.listdir(folder)):
        if name.startswith("feed_forget") and name.endswith(".json"):
            data = _load(os.path.join(folder, name))
            print(f"{name} — {data['settings']['users']:,} users, {data['settings']['days']} days, "
                  f"window {data['settings']['window_days']} days, windowed / zset after the "
                  f"first window {data['windowed_over_zset']:.3f}\n")
            print(forget_table(data), "\n")
        elif name.startswith("feed") and name.endswith(".json"):
            data = _load(os.path.join(folder, name))
            print(f"{name} — {data['settings']['users']:,} users, {data['refreshes']:,} refreshes, "
                  f"{data['settings']['item_ids']} item ids, memory bloomrs / set "
                  f"{data['memory_ratio']:.3f}\n")
            print(feed_table(data), "\n")
            print(equal_items_table(data), "\n")


if __name__ == "__main__":
    main()
