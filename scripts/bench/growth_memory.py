"""Memory at every size of every growing Bloom kind, against a filter sized for exactly n.

One filter of each kind is filled step by step with 16-character ids (BF.MADD of up to 1000);
at 12 sizes per decade from 100 to --top items its MEMORY USAGE (SAMPLES 0) is read and
divided by that of the floor, BF.RESERVE f e n NONSCALING (one link sized for exactly n, as if
the filter knew its future). Kinds:
    chain            BF.RESERVE k e 100 (RedisBloom's growth: links doubling)
    tiers            BF.RESERVE k e 1000 EXPANSION 10 (the feed's per-user tiers)
    compact          BF.RESERVE k e 100 COMPACT (a capacity hint is not reserved: a start
                     of 1,000 is the same filter)
    compact counting BF.RESERVE k e 100 COMPACT COUNTING
    windowed         BF.RESERVE k e 100 WINDOW 86400 (nothing expires during the run)
at error rates 0.01 and 0.001. Per kind and rate: the geometric mean of the ratio over the
sizes, the worst ratio, and how many sizes are over 2x. A plot of every ratio goes beside the
JSON.

Usage: growth_memory.py [--bloomrs PATH] [--top N] [--out FILE]
"""

import math

from machine import describe, write_result
from server import RedisServer, module_parser

MIX = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1
BATCH = 1000
KINDS = {
    "chain": ["100"],
    "tiers": ["1000", "EXPANSION", "10"],
    "compact": ["100", "COMPACT"],
    "compact counting": ["100", "COMPACT", "COUNTING"],
    "windowed": ["100", "WINDOW", "86400"],
}


def ident(index):
    return f"{(index * MIX) & MASK64:016x}"


def sizes(top):
    points, k = [], 0
    while True:
        n = round(100 * 10 ** (k / 12))
        if n > top:
            return points
        points.append(n)
        k += 1


def usage(client, key):
    return client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0")


def floor(client, error, n):
    client.delete("floor")
    client.execute_command("BF.RESERVE", "floor", error, n, "NONSCALING")
    return usage(client, "floor")


def curve(client, error, args, points):
    """MEMORY USAGE of one filter of this kind at every size in `points` (increasing)."""
    client.delete("k")
    client.execute_command("BF.RESERVE", "k", error, *args)
    held, out = 0, []
    for n in points:
        pipe = client.pipeline(transaction=False)
        while held < n:
            step = min(BATCH, n - held)
            pipe.execute_command("BF.MADD", "k", *(ident(i) for i in range(held, held + step)))
            held += step
        pipe.execute()
        out.append(usage(client, "k"))
    return out


def summary(ratios):
    return {
        "geometric_mean": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3),
        "worst": round(max(ratios), 3),
        "over_2x": sum(r > 2 for r in ratios),
        "sizes": len(ratios),
    }


def plot(result, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for axis, (error, kinds) in zip(axes, result["rates"].items()):
        for kind, data in kinds.items():
            axis.plot(result["sizes"], data["ratio"], label=kind)
        axis.axhline(1.4, color="#9e9e9e", linestyle="--", linewidth=0.8)
        axis.axhline(1.75, color="#9e9e9e", linestyle=":", linewidth=0.8)
        axis.set_xscale("log")
        axis.set_title(f"error rate {error}")
        axis.set_xlabel("items held")
    axes[0].set_ylabel("MEMORY USAGE / one link sized for n")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--top", type=int, default=1_000_000)
    parser.add_argument("--out", default="docs/bench/growth_memory.json")
    args = parser.parse_args()
    points = sizes(args.top)
    result = {"machine": describe(), "sizes": points, "rates": {}}
    with RedisServer(args.bloomrs) as server:
        c = server.client
        for error in ("0.01", "0.001"):
            floors = [floor(c, error, n) for n in points]
            kinds = {}
            for kind, kind_args in KINDS.items():
                used = curve(c, error, kind_args, points)
                ratios = [u / f for u, f in zip(used, floors)]
                kinds[kind] = {"bytes": used, "ratio": [round(r, 4) for r in ratios],
                               **summary(ratios)}
                s = kinds[kind]
                print(f"{error:>6} {kind:<17} mean {s['geometric_mean']:.2f}x  worst "
                      f"{s['worst']:.2f}x  over 2x: {s['over_2x']} of {s['sizes']}  "
                      f"at {points[-1]:,}: {used[-1]:,} B", flush=True)
            result["rates"][error] = kinds
            result.setdefault("floors", {})[error] = floors
    write_result(args.out, result)
    plot(result, args.out.rsplit(".", 1)[0] + ".png")


if __name__ == "__main__":
    main()
