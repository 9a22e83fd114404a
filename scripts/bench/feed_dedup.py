"""Feed de-duplication: per-user Redis SETs against per-user bloomrs filters, on one workload.

A news feed must never show a user the same item twice. --users users (default 100,000) have
Zipf-distributed activity: the user of rank r refreshes max(--min-refreshes, --top / r**--zipf)
times. Each refresh fetches --fresh items the user was never offered plus --repeats items that
were offered before, filters them with one membership call, shows the rest and records them with
one write, pipelined across up to --batch users:

    (a) SETs:    SMISMEMBER seen:{user} items...   SADD seen:{user} shown...
    (b) bloomrs: BF.MEXISTS seen:{user} items...   BF.MADD seen:{user} shown...
                 (each filter created by BF.RESERVE seen:{user} 0.01 1000 EXPANSION 10)

Both run on their own server, in lock-step on the same candidates. The script knows which items
each approach really showed, so it counts items wrongly hidden (false positives) and items shown
twice (must be zero). It reports used_memory per user, items seen per user, the measured
false-positive rate, refreshes per second (time spent in each approach's pipelines), MEMORY USAGE
of sampled users' keys against their items seen, and the tier growth of the heaviest user.

--idle-share F makes that share of the users (the least active) refresh only once or twice,
as most registered users of a feed do. --sparse-max-bytes N adds a third approach on its own
server: bloomrs with bf-sparse-max-bytes N, where each user's filter starts sparse (the items'
hashes) and becomes the same dense filter once that would be smaller. --compact adds compact
filters (BF.RESERVE seen:{user} 0.01 1000 COMPACT: one filter grown by segments, no tiers) on a
server of their own, reported against the tiers (compact_vs_tiers_memory); --compact-error E
gives them another rate, to compare memory at the tiers' measured false-positive rate.

Usage: feed_dedup.py [--users N] [--top N] [--quick] [--item-ids hex|int] [--out FILE]
                     [--idle-share F] [--sparse-max-bytes N] [--compact [--compact-error E]]

With --days N it runs the time-stepped simulation of `forgetting.py` instead: growing filters,
windowed filters and trimmed sorted sets over N simulated days (e.g. --days 90 --window-days 30).
"""

import contextlib
import os
import random
import statistics
import sys
import time

from tqdm import tqdm

from machine import describe, write_result
import forgetting
from plots import plot_feed_memory, plot_feed_tiers, plot_forget_memory
from server import RedisServer, module_parser

ERROR_RATE = 0.01
INITIAL_CAPACITY = 1000
EXPANSION = 10
MIX = 0x9E3779B97F4A7C15  # odd, so (user, index) -> id stays one-to-one modulo 2**64
MASK64 = 2**64 - 1


class Feed:
    """The candidate items of every user, and how many fresh items each has been offered."""

    def __init__(self, args):
        self.rng = random.Random(args.seed)
        self.fresh = args.fresh
        self.repeats = args.repeats
        self.offered = [0] * args.users
        self.item_id = hex_id if args.item_ids == "hex" else int_id

    def candidates(self, user):
        """Item indexes for one refresh: the next fresh ones, then some offered before."""
        start = self.offered[user]
        old = self.rng.sample(range(start), min(self.repeats, start))
        self.offered[user] = start + self.fresh
        return start, list(range(start, start + self.fresh)) + old


def hex_id(user, index):
    """A 64-bit item id as 16 hex characters, e.g. '3c6ef372fe94f82b'."""
    return f"{(((user << 32) | index) * MIX) & MASK64:016x}"


def int_id(user, index):
    """A 63-bit item id in decimal, which Redis keeps in a compact intset up to 512 members."""
    return str(((((user << 32) | index) * MIX) & MASK64) >> 1)


def refreshes_of(rank, args):
    """Zipf activity: refreshes of the user of rank `rank` (1 = the most active); the idle
    share at the tail refreshes twice, then once (ranks stay in non-increasing activity)."""
    idle = round(args.users * args.idle_share)
    first_idle = args.users - idle + 1
    if rank >= first_idle:
        return 2 if rank < first_idle + idle // 2 else 1
    return max(args.min_refreshes, round(args.top / rank**args.zipf))


class Approach:
    """One way to remember what each user has seen, on its own server."""

    def __init__(self, name, server, check, record, create=None):
        self.name, self.server = name, server
        self.check, self.record, self.create = check, record, create
        self.hidden = {}  # user -> indexes wrongly hidden (never shown, answered as seen)
        self.seconds = 0.0
        self.unseen_checks = self.wrongly_hidden = self.shown_twice = 0
        self.trace = []  # the heaviest user's (items seen, MEMORY USAGE)

    def seen(self, user, offered):
        return offered - len(self.hidden.get(user, ()))

    def execute(self, pipe):
        start = time.perf_counter()
        replies = pipe.execute()
        self.seconds += time.perf_counter() - start
        return replies

    def filter(self, batch, first):
        """One membership call per user; returns each user's items to show."""
        pipe = self.server.client.pipeline(transaction=False)
        for user, (_, _, ids) in batch.items():
            if first and self.create:
                pipe.execute_command(*self.create(user))
            pipe.execute_command(self.check, key(user), *ids)
        replies = [r for r in self.execute(pipe) if isinstance(r, list)]
        return {user: self.judge(user, cand, flags)
                for (user, cand), flags in zip(batch.items(), replies)}

    def judge(self, user, candidate, flags):
        """Compares the answers with the truth; returns the ids to show."""
        start, indexes, ids = candidate
        hidden = self.hidden.get(user, ())
        shown = []
        for index, item, flag in zip(indexes, ids, flags):
            unseen = index >= start or index in hidden
            self.unseen_checks += unseen
            if flag and unseen:
                self.wrongly_hidden += 1
                self.hidden.setdefault(user, set()).add(index)
            elif not flag:
                self.shown_twice += not unseen
                shown.append(item)
        return shown

    def remember(self, shown, heavy_due):
        """One write per user of what was shown; MEMORY USAGE of the heaviest user when due."""
        pipe = self.server.client.pipeline(transaction=False)
        for user, ids in shown.items():
            if ids:
                pipe.execute_command(self.record, key(user), *ids)
        if heavy_due:
            pipe.execute_command("MEMORY", "USAGE", key(0), "SAMPLES", "0")
        replies = self.execute(pipe)
        return replies[-1] if heavy_due else None


def key(user):
    return f"seen:{user}"


def approaches(set_server, bloom_server, sparse_server=None, compact_server=None,
               compact_error=ERROR_RATE):
    reserve = lambda user: ("BF.RESERVE", key(user), ERROR_RATE, INITIAL_CAPACITY,  # noqa: E731
                            "EXPANSION", EXPANSION)
    compact = lambda user: ("BF.RESERVE", key(user), compact_error, INITIAL_CAPACITY,  # noqa: E731
                            "COMPACT")
    pair = [Approach("set", set_server, "SMISMEMBER", "SADD"),
            Approach("bloomrs", bloom_server, "BF.MEXISTS", "BF.MADD", reserve)]
    if sparse_server:
        pair.append(Approach("sparse", sparse_server, "BF.MEXISTS", "BF.MADD", reserve))
    if compact_server:
        pair.append(Approach("compact", compact_server, "BF.MEXISTS", "BF.MADD", compact))
    return pair


def geometric(limit, factor=1.1):
    """Refresh numbers at which the SET's (O(n)) MEMORY USAGE of the heaviest user is taken."""
    points, n = set(), 1.0
    while n <= limit:
        points.add(int(n))
        n = max(n * factor, n + 1)
    return points | {limit}


def simulate(feed, pair, args):
    """Rounds of refreshes: in round k every user with more than k refreshes refreshes once."""
    counts = [refreshes_of(rank, args) for rank in range(1, args.users + 1)]
    set_trace_points = geometric(counts[0])
    with tqdm(total=sum(counts), unit="refresh", disable=args.no_progress,
              mininterval=1.0, smoothing=0.05) as progress:
        for round_no in range(counts[0]):
            active = sum(1 for _ in _active(counts, round_no))
            for first in range(0, active, args.batch):
                users = range(first, min(active, first + args.batch))
                refresh_batch(feed, pair, users, round_no, set_trace_points)
                progress.update(len(users))
    return sum(counts)


def _active(counts, round_no):
    """Users are in rank order, so those active in a round are a prefix."""
    for count in counts:
        if count <= round_no:
            return
        yield count


def refresh_batch(feed, pair, users, round_no, set_trace_points):
    """One refresh for each user of the batch, on both approaches."""
    batch = {}
    for user in users:
        start, indexes = feed.candidates(user)
        batch[user] = (start, indexes, [feed.item_id(user, i) for i in indexes])
    heavy = users[0] == 0
    for approach in pair:
        shown = approach.filter(batch, first=round_no == 0)
        due = heavy and (approach.name != "set" or round_no + 1 in set_trace_points)
        usage = approach.remember(shown, due)
        if due:
            approach.trace.append((approach.seen(0, feed.offered[0]), usage))


def distribution(values):
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"mean": round(statistics.fmean(ordered), 1), "median": pick(0.5),
            "p90": pick(0.9), "p99": pick(0.99), "max": ordered[-1]}


def sample_users(args):
    """The 300 most active users and a random sample of the others."""
    rng = random.Random(args.seed + 1)
    head = list(range(min(300, args.users)))
    tail = range(len(head), args.users)
    return head + rng.sample(tail, min(args.sample, len(tail)))


def memory_samples(approach, feed, users):
    """(items seen, MEMORY USAGE bytes) of the sampled users' keys."""
    pipe = approach.server.client.pipeline(transaction=False)
    for user in users:
        pipe.execute_command("MEMORY", "USAGE", key(user), "SAMPLES", "0")
    sizes = pipe.execute()
    return [(approach.seen(u, feed.offered[u]), size) for u, size in zip(users, sizes)]


def report(approach, feed, args, baseline, refreshes, users):
    """The summary of one approach after the run."""
    used = approach.server.used_memory() - baseline
    seen = [approach.seen(u, feed.offered[u]) for u in range(args.users)]
    return {
        "used_memory_bytes": used,
        "used_memory_per_user": round(used / args.users, 1),
        "bytes_per_item_seen": round(used / sum(seen), 2),
        "items_seen_per_user": distribution(seen),
        "unseen_items_checked": approach.unseen_checks,
        "wrongly_hidden": approach.wrongly_hidden,
        "false_positive_rate": approach.wrongly_hidden / max(1, approach.unseen_checks),
        "shown_twice": approach.shown_twice,
        "seconds_in_pipelines": round(approach.seconds, 2),
        "refreshes_per_second": round(refreshes / approach.seconds),
        "samples": memory_samples(approach, feed, users),
    }


def heaviest(bloom_server):
    info = bloom_server.client.execute_command("BF.INFO", key(0))
    return dict(zip(info[::2], info[1::2]))


def print_summary(result):
    for name, entry in result["approaches"].items():
        items = entry["items_seen_per_user"]
        print(f"{name:>8}: {entry['used_memory_per_user']:>10,.0f} B/user "
              f"({entry['bytes_per_item_seen']:.2f} B/item seen), items seen per user "
              f"median {items['median']:,} mean {items['mean']:,} max {items['max']:,}; "
              f"false positives {entry['wrongly_hidden']:,}/{entry['unseen_items_checked']:,} "
              f"= {100 * entry['false_positive_rate']:.3f}%, shown twice {entry['shown_twice']}, "
              f"{entry['refreshes_per_second']:,} refreshes/s")
    print(f"memory per user, bloomrs / set: {result['memory_ratio']:.3f}")
    if "sparse_memory_ratio" in result:
        print(f"memory per user, sparse / set: {result['sparse_memory_ratio']:.3f}")
    if "compact_vs_tiers_memory" in result:
        print(f"memory, compact / tiers: {result['compact_vs_tiers_memory']:.3f}")
    print(f"heaviest user: {result['heavy_user']['info']}")


def run(args):
    feed = Feed(args)
    with contextlib.ExitStack() as servers:
        set_server = servers.enter_context(RedisServer())
        bloom_server = servers.enter_context(RedisServer(args.bloomrs))
        sparse_server = None
        if args.sparse_max_bytes:
            setting = ["--bf.bf-sparse-max-bytes", str(args.sparse_max_bytes)]
            sparse_server = servers.enter_context(RedisServer(args.bloomrs, setting))
        compact_server = None
        if args.compact:
            compact_server = servers.enter_context(RedisServer(args.bloomrs))
        pair = approaches(set_server, bloom_server, sparse_server, compact_server,
                          args.compact_error)
        baselines = [a.server.used_memory() for a in pair]
        started = time.perf_counter()
        refreshes = simulate(feed, pair, args)
        elapsed = time.perf_counter() - started
        users = sample_users(args)
        summary = {a.name: report(a, feed, args, b, refreshes, users)
                   for a, b in zip(pair, baselines)}
        info = heaviest(bloom_server)
    samples = {name: entry.pop("samples") for name, entry in summary.items()}
    extra = {}
    if "sparse" in summary:
        extra["sparse_memory_ratio"] = (summary["sparse"]["used_memory_bytes"]
                                        / summary["set"]["used_memory_bytes"])
    if "compact" in summary:
        extra["compact_vs_tiers_memory"] = (summary["compact"]["used_memory_bytes"]
                                            / summary["bloomrs"]["used_memory_bytes"])
    return extra | {
        "refreshes": refreshes,
        "wall_seconds": round(elapsed, 1),
        "approaches": summary,
        "memory_ratio": summary["bloomrs"]["used_memory_bytes"] / summary["set"]["used_memory_bytes"],
        "samples": samples,
        "heavy_user": {a.name: a.trace for a in pair} | {"tiers": [
            INITIAL_CAPACITY * EXPANSION**i for i in range(4)], "info": info},
    }


def parse_args():
    parser = module_parser(__doc__)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=8000, help="refreshes of the most active user")
    parser.add_argument("--min-refreshes", type=int, default=8)
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of activity")
    parser.add_argument("--fresh", type=int, default=25, help="never-offered items per refresh")
    parser.add_argument("--repeats", type=int, default=15, help="re-offered items per refresh")
    parser.add_argument("--batch", type=int, default=1000, help="users per pipeline")
    parser.add_argument("--item-ids", choices=("hex", "int"), default="hex")
    parser.add_argument("--sample", type=int, default=2000, help="users sampled for the plot")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--idle-share", type=float, default=0.0,
                        help="share of users (the least active) refreshing once or twice")
    parser.add_argument("--sparse-max-bytes", type=int, default=0,
                        help="also run bloomrs with this bf-sparse-max-bytes (0: do not)")
    parser.add_argument("--compact", action="store_true",
                        help="add compact filters (BF.RESERVE ... 0.01 1000 COMPACT) as another "
                             "approach, on its own server (in the time-stepped mode too)")
    parser.add_argument("--compact-error", type=float, default=ERROR_RATE,
                        help="the compact filters' error rate (issue 32 compares memory at the "
                             "tiers' measured false-positive rate: compact filters stay well "
                             "below the rate they are given at a few hundred items)")
    parser.add_argument("--quick", action="store_true", help="10,000 users, --top 1000")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--out", default=None, help="default docs/bench/feed_dedup[-int].json")
    time_stepped = parser.add_argument_group("time-stepped mode (forgetting.py)")
    time_stepped.add_argument("--days", type=int, default=0, help="simulated days (0: off)")
    time_stepped.add_argument("--window-days", type=int, default=30)
    time_stepped.add_argument("--generations", type=int, default=4)
    time_stepped.add_argument("--top-daily", type=int, default=20,
                              help="refreshes a day of the most active user")
    time_stepped.add_argument("--window-capacity", type=int, default=None,
                              help="windowed filters' items per window (default: 1.5 times "
                                   "what a user with one refresh a day is offered)")
    time_stepped.add_argument("--window-expansion", type=int, default=2,
                              help="expansion of a windowed filter's generations")
    time_stepped.add_argument("--compact-window", action="store_true",
                              help="add compact windowed filters (BF.RESERVE ... 100 COMPACT "
                                   "WINDOW w GENERATIONS g) on a server of their own")
    time_stepped.add_argument("--compact-window-error", type=float, default=ERROR_RATE,
                              help="error rate of the compact windowed filters")
    time_stepped.add_argument("--bloomrs-fault", default=os.path.join(
        "target", "fault-injection", "release", "libbloomrs.so"),
        help="the fault-injection build, whose clock the simulation moves")
    args = parser.parse_args()
    if args.days:
        args.users = args.users if args.users != 100_000 else 2000
        if args.quick:
            args.users, args.days, args.window_days = 500, 30, 10
        if args.window_capacity is None:
            # A user with one refresh a day, plus half again for forgotten items shown again.
            args.window_capacity = args.fresh * args.window_days * 3 // 2
        args.out = args.out or "docs/bench/feed_forget.json"
        return args
    if args.quick:
        args.users, args.top = 10_000, 1000
    if args.out is None:
        suffix = "" if args.item_ids == "hex" else "-int"
        args.out = f"docs/bench/feed_dedup{suffix}.json"
    return args


def main_time_stepped(args):
    if not os.path.isfile(args.bloomrs_fault):
        sys.exit(f"no fault-injection build at {args.bloomrs_fault} (make test builds it)")
    machine = describe()
    result = forgetting.run(args)
    settings = vars(args) | {"bloomrs_fault": os.path.basename(args.bloomrs_fault)}
    result = {"machine": machine, "settings": settings} | result
    forgetting.print_summary(result, args)
    write_result(args.out, result)
    print(f"wrote {args.out} and {plot_forget_memory(args.out)}")


def main():
    args = parse_args()
    if args.days:
        return main_time_stepped(args)
    if not os.path.isfile(args.bloomrs):
        sys.exit(f"no module at {args.bloomrs}")
    machine = describe()
    result = run(args)
    settings = vars(args) | {"bloomrs": os.path.basename(args.bloomrs)}
    result = {"machine": machine, "settings": settings | {
        "error_rate": ERROR_RATE, "initial_capacity": INITIAL_CAPACITY,
        "expansion": EXPANSION}} | result
    print_summary(result)
    write_result(args.out, result)
    print(f"wrote {args.out}, {plot_feed_memory(args.out)} and {plot_feed_tiers(args.out)}")


if __name__ == "__main__":
    main()
