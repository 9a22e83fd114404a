"""The feed filter in a steady feed: memory of `COMPACT WINDOW` filters fed for several windows.

For each error rate, feed rate (items per second) and generation count, one filter
`BF.RESERVE k e 100 COMPACT WINDOW --window GENERATIONS g` is fed new 16-character ids at that
rate for --windows windows of simulated time: the `fault-injection` build's `BF.__FAULT CLOCK`
sets the time before every tick (--ticks per generation), so an hour of feed takes seconds.
At every tick after the first window, its MEMORY USAGE (SAMPLES 0) is divided by that of
`BF.RESERVE f e n NONSCALING`, one link sized for exactly the n items the window answers for
at that moment: every item fed since the oldest live generation began (between
window·(g−1)/g and one window of feed). A second ratio uses one whole window of feed
(rate × window) for n. Per case: the geometric mean and the worst of each, with the targets
(at 1 %: mean ≤ 1.7, every sample ≤ 2.0; at 0.1 %: ≤ 1.5 and ≤ 1.75).

Usage: feed_steady.py [--bloomrs PATH] [--window S] [--windows N] [--ticks N]
                      [--rates R ...] [--generations G ...] [--out FILE] [--plot PNG]
"""

import math
import os

from growth_memory import ident, usage
from machine import describe, write_result
from server import RedisServer, module_parser

BATCH = 1000
TARGETS = {0.01: (1.7, 2.0), 0.001: (1.5, 1.75)}
FAULT_MODULE = os.path.join(os.path.dirname(__file__), "..", "..",
                            "target/fault-injection/release/libbloomrs.so")


def set_clock(client, target_ms):
    """Moves the fault-injection build's clock so that it reads `target_ms` now."""
    secs, micros = client.time()
    client.execute_command("BF.__FAULT", "CLOCK", target_ms - (secs * 1000 + micros // 1000))


def feed(client, first, count):
    pipe = client.pipeline(transaction=False)
    for start in range(first, first + count, BATCH):
        stop = min(first + count, start + BATCH)
        pipe.execute_command("BF.MADD", "k", *(ident(i) for i in range(start, stop)))
    pipe.execute()


def floor_usage(client, error, n):
    client.delete("floor")
    client.execute_command("BF.RESERVE", "floor", error, max(1, n), "NONSCALING")
    return usage(client, "floor")


def start_ms(client, args):
    """A window boundary (so every slot boundary too) a couple of windows from now."""
    return (client.time()[0] // args.window + 2) * args.window * 1000


def geometric(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def steady_case(client, error, rate, generations, args):
    """Feeds one filter; returns its samples after the first window and their summary."""
    window_ms = args.window * 1000
    slot_ms = window_ms // generations
    ticks = args.windows * generations * args.ticks
    first = start_ms(client, args)
    moments = [first + tick * slot_ms // args.ticks for tick in range(ticks + 1)]
    start = moments[0]
    client.delete("k")
    client.execute_command("BF.RESERVE", "k", error, 100, "COMPACT", "WINDOW", args.window,
                           "GENERATIONS", generations)
    fed, history, samples = 0, [], []
    for now, end in zip(moments, moments[1:]):
        set_clock(client, now)
        count = round(rate * (end - start) / 1000) - fed
        feed(client, fed, count)
        history.append((now, fed))
        fed += count
        if end - start <= window_ms:
            continue
        oldest = (now // slot_ms - (generations - 1)) * slot_ms
        held = fed - next(before for t, before in history if t >= oldest)
        used = usage(client, "k")
        samples.append({
            "seconds": (now - start) / 1000,
            "items_held": held,
            "usage": used,
            "ratio_held": used / floor_usage(client, error, held),
            "ratio_window": used / floor_usage(client, error, round(rate * args.window)),
        })
    held_ratios = [s["ratio_held"] for s in samples]
    window_ratios = [s["ratio_window"] for s in samples]
    mean_target, worst_target = TARGETS.get(error, (None, None))
    summary = {
        "error": error,
        "rate": rate,
        "generations": generations,
        "items_fed": fed,
        "samples": len(samples),
        "geometric_mean": round(geometric(held_ratios), 3),
        "worst": round(max(held_ratios), 3),
        "geometric_mean_window": round(geometric(window_ratios), 3),
        "worst_window": round(max(window_ratios), 3),
        "target_mean": mean_target,
        "target_worst": worst_target,
        "met": (mean_target is not None and geometric(held_ratios) <= mean_target
                and max(held_ratios) <= worst_target),
    }
    return summary, samples


def plot(cases, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    errors = sorted({c["summary"]["error"] for c in cases}, reverse=True)
    fig, axes = plt.subplots(1, len(errors), figsize=(5.5 * len(errors), 3.6), squeeze=False)
    for ax, error in zip(axes[0], errors):
        for case in (c for c in cases if c["summary"]["error"] == error):
            s = case["summary"]
            ax.plot([p["seconds"] for p in case["samples"]],
                    [p["ratio_held"] for p in case["samples"]], lw=1,
                    label=f"{s['rate']:,}/s, g={s['generations']}")
        mean_target, worst_target = TARGETS.get(error, (None, None))
        if worst_target:
            ax.axhline(worst_target, color="red", lw=0.8, ls="--", label="every-sample bound")
            ax.axhline(mean_target, color="grey", lw=0.8, ls=":", label="mean bound")
        ax.set_title(f"error {error:g}")
        ax.set_xlabel("simulated seconds (after the first window)")
        ax.set_ylabel("MEMORY USAGE / NONSCALING link")
        ax.set_ylim(bottom=1.0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=80)


def main():
    parser = module_parser(__doc__)
    parser.set_defaults(bloomrs=FAULT_MODULE)
    parser.add_argument("--window", type=int, default=60, help="window in seconds")
    parser.add_argument("--windows", type=int, default=4, help="windows of feed")
    parser.add_argument("--ticks", type=int, default=16, help="samples per generation")
    parser.add_argument("--rates", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--generations", type=int, nargs="+", default=[4])
    parser.add_argument("--errors", type=float, nargs="+", default=[0.01, 0.001])
    parser.add_argument("--out", default="docs/bench/feed_steady.json")
    parser.add_argument("--plot", default="docs/bench/feed_steady.png")
    args = parser.parse_args()
    cases = []
    with RedisServer(args.bloomrs) as server:
        for error in args.errors:
            for generations in args.generations:
                for rate in args.rates:
                    summary, samples = steady_case(server.client, error, rate, generations, args)
                    print(summary, flush=True)
                    cases.append({"summary": summary, "samples": samples})
    write_result(args.out, {
        "machine": describe(),
        "command": "feed_steady.py " + " ".join(
            f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in vars(args).items() if k not in ("bloomrs", "out", "plot")),
        "cases": [c["summary"] for c in cases],
    })
    if args.plot:
        plot(cases, args.plot)


if __name__ == "__main__":
    main()
