"""The PNG plots of the benchmark results, drawn from their JSON files.

Run alone to redraw every plot from the JSON already in docs/bench/:
    plots.py [docs/bench]
"""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

YARDSTICKS = ("GETBIT", "GETBIT random", "SISMEMBER")
COLORS = ("#1f77b4", "#ff7f0e")
YARDSTICK_COLOR = "#9e9e9e"


def _load(path):
    with open(path, encoding="utf-8") as src:
        return json.load(src)


def _png(json_path, suffix=""):
    return os.path.splitext(json_path)[0] + suffix + ".png"


def _caption(machine):
    return f"{machine['cpu']}, {machine['cores']} cores, {machine['redis_server'].split(' sha')[0]}"


def _per_item(label, value, batch):
    """Batch commands are drawn per item so that every bar shares one scale."""
    return value / batch if label.startswith(("BF.MADD", "BF.MEXISTS")) else value


def _commandstats_panel(axis, data, size):
    results, batch = data["results"], data["settings"]["batch"]
    names = list(results)
    labels = [label.split(" ", 1)[1] for label in results[names[0]]["median"]
              if label.startswith(size + " ")]
    height = 0.8 / len(names)
    for index, name in enumerate(names):
        median = results[name]["median"]
        values = [_per_item(label, median[f"{size} {label}"]["usec_per_call"], batch)
                  for label in labels]
        positions = [i + index * height for i in range(len(labels))]
        bars = axis.barh(positions, values, height=height, color=COLORS[index], label=name)
        axis.bar_label(bars, fmt="%.2f", padding=2, fontsize=8)
    for row, label in enumerate(labels):
        if label in YARDSTICKS:
            axis.axhspan(row - height / 2 - 0.08, row + 0.8 - height / 2 + 0.08,
                         color=YARDSTICK_COLOR, alpha=0.2, linewidth=0)
    ticks = [f"{label} (per item)" if label in ("BF.MADD", "BF.MEXISTS") else label
             for label in labels]
    axis.set_yticks([i + 0.4 - height / 2 for i in range(len(labels))], ticks)
    axis.invert_yaxis()
    axis.set_xlabel("usec per call (median of runs, INFO commandstats)")
    capacity = data["settings"]["sizes"][size]
    axis.set_title(f"{size} filter ({capacity:,} items, error rate 0.01)")
    axis.margins(x=0.18)
    axis.legend(loc="lower right", fontsize=8)


def plot_commandstats(json_path):
    """Two panels (small, large filter): usec_per_call of each command, yardsticks shaded;
    and the cost against the number of links when the grown cases ran."""
    data = _load(json_path)
    first = next(iter(data["results"].values()))["median"]
    drawn = plot_links(json_path) if "links 1 BF.EXISTS" in first else None
    if "small GETBIT" not in first:
        return drawn
    figure, axes = plt.subplots(1, 2, figsize=(11, 5))
    for axis, size in zip(axes, ("small", "large")):
        _commandstats_panel(axis, data, size)
    figure.suptitle("Server time per call; shaded rows are the yardsticks (GETBIT, SISMEMBER)")
    figure.text(0.01, 0.01, _caption(data["machine"]), fontsize=7, color="#555555")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    path = _png(json_path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_links(json_path):
    """usec per call of BF.EXISTS and BF.ADD against the number of links of a filter holding
    the same items, one line per module build."""
    data = _load(json_path)
    settings = data["settings"]
    links = sorted(int(n) for n in settings["grown_links"])
    figure, axis = plt.subplots(figsize=(7.5, 4.8))
    for index, (name, entry) in enumerate(data["results"].items()):
        median = entry["median"]
        for command, style in (("BF.EXISTS", "-"), ("BF.ADD", "--")):
            values = [median[f"links {n} {command}"]["usec_per_call"] for n in links]
            axis.plot(links, values, style, marker="o", color=COLORS[index % len(COLORS)],
                      label=f"{name}: {command}")
            axis.annotate(f"{values[-1]:.2f}", (links[-1], values[-1]), xytext=(4, 0),
                          textcoords="offset points", fontsize=8)
    axis.set_xticks(links)
    axis.set_ylim(bottom=0)
    axis.set_xlabel("links in the filter (the same items, error rate 0.01, expansion 2)")
    axis.set_ylabel("usec per call (median of runs, INFO commandstats)")
    axis.set_title(f"Cost per call against links: {settings['grown_items']:,} items, "
                   "lookups half misses")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=8)
    return _save_with_caption(figure, data, json_path, "-links")


def _save_with_caption(figure, data, json_path, suffix):
    """Writes the figure, captioned with the machine, next to its JSON; returns the PNG path."""
    figure.text(0.01, 0.01, _caption(data["machine"]), fontsize=7, color="#555555")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    path = _png(json_path, suffix)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _memory_axis(axis, samples, heavy):
    for name, color, marker in (("set", COLORS[1], "o"), ("bloomrs", COLORS[0], "s"),
                                ("compact", "#d62728", "^")):
        if name not in samples:
            continue
        points = samples[name]
        axis.scatter([p[0] for p in points], [p[1] for p in points], s=6, alpha=0.5,
                     color=color, marker=marker, label=f"{name}: sampled users")
        trace = heavy[name]
        axis.plot([p[0] for p in trace], [p[1] for p in trace], color=color, linewidth=1.5,
                  label=f"{name}: heaviest user over time")
    target = heavy["set"]
    axis.plot([p[0] for p in target], [p[1] / 10 for p in target], color=COLORS[1],
              linestyle=":", linewidth=1, label="set / 10 (the target for bloomrs)")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("items seen by the user")
    axis.set_ylabel("MEMORY USAGE of the user's key (bytes)")
    axis.grid(True, which="major", alpha=0.3)
    axis.legend(fontsize=8, loc="upper left")


def plot_feed_memory(json_path):
    """Memory of one user's key against the items that user has seen, SET against bloomrs (and
    compact filters when the run had --compact)."""
    data = _load(json_path)
    figure, axis = plt.subplots(figsize=(7.5, 5))
    _memory_axis(axis, data["samples"], data["heavy_user"])
    settings = data["settings"]
    axis.set_title(f"Feed de-duplication, {settings['users']:,} users: memory per user\n"
                   f"({settings['item_ids']} item ids; bloomrs: 0.01, 1000, EXPANSION 10)")
    return _save_with_caption(figure, data, json_path, "-memory")


def _plateaus(trace):
    """(first items seen, bytes) of every step of a step trace."""
    steps = [trace[0]]
    for items, size in trace[1:]:
        if size != steps[-1][1]:
            steps.append((items, size))
    return steps


def plot_feed_tiers(json_path):
    """The heaviest user's Bloom filter growing in tiers (EXPANSION 10) as it sees more items."""
    data = _load(json_path)
    trace = data["heavy_user"]["bloomrs"]
    figure, axis = plt.subplots(figsize=(7.5, 4.5))
    axis.step([p[0] for p in trace], [p[1] for p in trace], where="post", color=COLORS[0],
              label="bloomrs: MEMORY USAGE of the heaviest user's filter")
    for items, size in _plateaus(trace):
        axis.annotate(f"{size / 1024:,.1f} KiB", (items, size), xytext=(4, 4),
                      textcoords="offset points", fontsize=8)
    boundary = 0
    for tier in data["heavy_user"]["tiers"]:
        boundary += tier
        if boundary <= trace[-1][0]:
            axis.axvline(boundary, color=YARDSTICK_COLOR, linestyle="--", linewidth=0.8)
    axis.plot([], [], color=YARDSTICK_COLOR, linestyle="--", linewidth=0.8,
              label="capacity of the tiers so far (1,000; 11,000; 111,000)")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("items seen by the heaviest user")
    axis.set_ylabel("bytes")
    axis.margins(y=0.12)
    axis.set_title("Tier growth of the heaviest user\nBF.RESERVE seen:{user} 0.01 1000 EXPANSION 10")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    path = _png(json_path, "-tiers")
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_forget_memory(json_path):
    """Memory per user by simulated day: growing filters, windowed filters, sorted sets (and
    compact filters, compact windowed filters when the run had --compact, --compact-window)."""
    data = _load(json_path)
    settings = data["settings"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    styles = (("growing", COLORS[0], "--"), ("windowed", COLORS[0], "-"),
              ("zset", COLORS[1], "-"), ("compact", "#d62728", "-."),
              ("compact_window", "#2ca02c", "-"))
    for name, color, line in styles:
        entry = data["approaches"].get(name)
        if entry is None:
            continue
        days = range(1, len(entry["memory_per_user_by_day"]) + 1)
        left.plot(days, entry["memory_per_user_by_day"], color=color, linestyle=line, label=name)
        right.plot(days, entry["heavy_user_bytes_by_day"], color=color, linestyle=line,
                   label=name)
    for axis in (left, right):
        axis.axvline(settings["window_days"], color=YARDSTICK_COLOR, linestyle=":",
                     linewidth=1, label="end of the first window")
        axis.set_yscale("log")
        axis.set_xlabel("simulated day")
        axis.grid(True, which="major", alpha=0.3)
        axis.legend(fontsize=8, loc="upper left")
    left.set_ylabel("used_memory per user (bytes)")
    left.set_title(f"All {settings['users']:,} users")
    right.set_ylabel("MEMORY USAGE of the key (bytes)")
    right.set_title("The heaviest user")
    figure.suptitle(f"Remembering a {settings['window_days']}-day window "
                    f"(windowed: {settings['generations']} generations, 0.01)")
    return _save_with_caption(figure, data, json_path, "-memory")


def plot_sparse_memory(json_path):
    """MEMORY USAGE by items held: a SET of the ids, the dense filter, the sparse filter."""
    data = _load(json_path)
    rows = data["memory"]
    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    for axis, limit in zip(axes, (2000, 120)):
        shown = [r for r in rows if r["n"] <= limit]
        n = [r["n"] for r in shown]
        axis.plot(n, [r["set"] for r in shown], color=COLORS[1], label="SET of the ids")
        axis.plot(n, [r["dense"] for r in shown], color=COLORS[0],
                  label="dense filter (RESERVE 0.01 1000 EXPANSION 10)")
        axis.plot(n, [r["sparse"] for r in shown], color="#2ca02c", linestyle="--",
                  label="sparse filter (bf-sparse-max-bytes "
                        f"{data['settings']['sparse_max_bytes']})")
        axis.set_xlabel("items held (16-character ids)")
        axis.set_ylabel("MEMORY USAGE (bytes)")
        axis.set_yscale("log")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_title("n = 0 ... 2,000")
    axes[1].set_title("n = 0 ... 120: the sparse form, then promotion")
    axes[1].legend(fontsize=8)
    figure.suptitle(_caption(data["machine"]), fontsize=8)
    figure.tight_layout()
    out = _png(json_path, "-memory")
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "docs/bench"
    drawn = []
    if os.path.exists(os.path.join(folder, "sparse.json")):
        drawn.append(plot_sparse_memory(os.path.join(folder, "sparse.json")))
    for name in ("commandstats.json", "commandstats-grown.json"):
        if os.path.exists(os.path.join(folder, name)):
            drawn.append(plot_commandstats(os.path.join(folder, name)))
    for name in sorted(os.listdir(folder)):
        if name.startswith("feed_forget") and name.endswith(".json"):
            drawn.append(plot_forget_memory(os.path.join(folder, name)))
        elif name.startswith("feed") and name.endswith(".json"):
            path = os.path.join(folder, name)
            drawn += [plot_feed_memory(path), plot_feed_tiers(path)]
    print("\n".join(drawn))


if __name__ == "__main__":
    main()
