"""Feed de-duplication over simulated days (`feed_dedup.py --days 90 --window-days 30`):
memory per user when the dedup only has to remember a window.

Every simulated day, --users users with Zipf activity refresh: the user of rank r refreshes
max(1, --top-daily / r**--zipf) times a day. A refresh offers --fresh items never offered
before and --repeats items offered in the last 1.5 windows, checks them with one call, shows
the rest and records them with one write. Three approaches, each on its own server, in
lock-step on the same candidates:

    (a) growing:  BF.RESERVE seen:{u} 0.01 1000 EXPANSION 10; BF.MEXISTS; BF.MADD
    (b) windowed: BF.RESERVE seen:{u} 0.01 <items per window> EXPANSION 2 WINDOW w
                  GENERATIONS g; BF.MEXISTS; BF.MADD
    (c) zset:     ZMSCORE seen:{u}; ZADD seen:{u} <time> ...; ZREMRANGEBYSCORE seen:{u}
                  -inf <time - window> (what a Redis user builds without a module)
    (d) compact:  with --compact, BF.RESERVE seen:{u} 0.01 1000 COMPACT; BF.MEXISTS; BF.MADD
                  (grows like (a) and forgets nothing, next to the windowed filters)
    (e) compact_window: with --compact-window, BF.RESERVE seen:{u} 0.01 100 COMPACT WINDOW w
                  GENERATIONS g; BF.MEXISTS; BF.MADD (the feed filter: generations grown by
                  segments, each starting at one); --compact-window-error E gives them
                  another rate, to compare memory at the windowed filters' measured rate

The windowed filters' servers run the `fault-injection` build, whose `BF.__FAULT CLOCK` sets
the simulated time (the other two need no clock: the sorted set is scored by the simulated
time). At the end of each day, used_memory per user of each server. The script knows what each
approach showed and when, so it counts false positives (an item not shown within the window,
or never shown for the growing filter, answered as seen) and items shown again although they
were shown less than window * (g-1)/g ago (must be zero for the windowed filters and the
sorted sets).
"""

import contextlib
import random
import statistics
import time
from array import array

from tqdm import tqdm

from server import RedisServer

DAY_MS = 86_400_000
ERROR_RATE = 0.01
GROWING_CAPACITY = 1000
EXPANSION = 10
COMPACT_WINDOW_CAPACITY = 100
NEVER = -1


def key(user):
    return f"seen:{user}"


class Approach:
    """One way to remember what each user has seen. `window_ms` is what it must forget after
    (None: never), `remember_ms` how long it must remember."""

    def __init__(self, name, server, users, window_ms, remember_ms):
        self.name, self.server = name, server
        self.window_ms, self.remember_ms = window_ms, remember_ms
        # Per user: the simulated minute each item index was last shown, or NEVER.
        self.shown_at = [array("i") for _ in range(users)]
        self.unseen_checks = self.false_positives = self.shown_too_soon = self.shown = 0
        self.memory_per_user = []
        self.keys_per_user = []
        self.heavy_usage = []

    def judge(self, user, indexes, flags, now_ms):
        """Compares the answers with the truth; returns the indexes to show."""
        shown_at = self.shown_at[user]
        shown = []
        for index, flag in zip(indexes, flags):
            last = shown_at[index] if index < len(shown_at) else NEVER
            age = None if last == NEVER else now_ms - last * 60_000
            must_forget = age is None or (self.window_ms is not None and age >= self.window_ms)
            if must_forget:
                self.unseen_checks += 1
                self.false_positives += bool(flag)
            if not flag:
                if age is not None and (self.remember_ms is None or age < self.remember_ms):
                    self.shown_too_soon += 1
                shown.append(index)
        minute = now_ms // 60_000
        for index in shown:
            while len(shown_at) <= index:
                shown_at.append(NEVER)
            shown_at[index] = minute
        self.shown += len(shown)
        return shown

    def summary(self, users):
        return {
            "memory_per_user_by_day": self.memory_per_user,
            "key_bytes_per_user_by_day": self.keys_per_user,
            "heavy_user_bytes_by_day": self.heavy_usage,
            "unseen_items_checked": self.unseen_checks,
            "false_positives": self.false_positives,
            "false_positive_rate": self.false_positives / max(1, self.unseen_checks),
            "shown_within_memory": self.shown_too_soon,
            "items_shown": self.shown,
        }


class Commands:
    """The membership call, the write, and the creation of one approach."""

    @staticmethod
    def growing(pipe, user, ids, now_ms, first, args):
        if first:
            pipe.execute_command("BF.RESERVE", key(user), ERROR_RATE, GROWING_CAPACITY,
                                 "EXPANSION", EXPANSION)
        pipe.execute_command("BF.MEXISTS", key(user), *ids)

    @staticmethod
    def windowed(pipe, user, ids, now_ms, first, args):
        if first:
            pipe.execute_command("BF.RESERVE", key(user), ERROR_RATE, args.window_capacity,
                                 "EXPANSION", args.window_expansion,
                                 "WINDOW", args.window_days * 86400,
                                 "GENERATIONS", args.generations)
        pipe.execute_command("BF.MEXISTS", key(user), *ids)

    @staticmethod
    def compact(pipe, user, ids, now_ms, first, args):
        if first:
            pipe.execute_command("BF.RESERVE", key(user), ERROR_RATE, GROWING_CAPACITY,
                                 "COMPACT")
        pipe.execute_command("BF.MEXISTS", key(user), *ids)

    @staticmethod
    def compact_window(pipe, user, ids, now_ms, first, args):
        if first:
            pipe.execute_command("BF.RESERVE", key(user), args.compact_window_error,
                                 COMPACT_WINDOW_CAPACITY, "COMPACT", "WINDOW", args.window_days * 86400,
                                 "GENERATIONS", args.generations)
        pipe.execute_command("BF.MEXISTS", key(user), *ids)

    @staticmethod
    def zset(pipe, user, ids, now_ms, first, args):
        pipe.execute_command("ZREMRANGEBYSCORE", key(user), "-inf",
                             now_ms - args.window_days * DAY_MS)
        pipe.execute_command("ZMSCORE", key(user), *ids)


def record(pipe, approach, user, ids, now_ms):
    if not ids:
        return
    if approach.name == "zset":
        pairs = [part for item in ids for part in (now_ms, item)]
        pipe.execute_command("ZADD", key(user), *pairs)
    else:
        pipe.execute_command("BF.MADD", key(user), *ids)


class Feed:
    """Every user's candidates: fresh indexes in order, repeats from the last 1.5 windows."""

    def __init__(self, args):
        self.rng = random.Random(args.seed)
        self.args = args
        self.offered = [0] * args.users
        self.day_start = [[] for _ in range(args.users)]

    def start_day(self, day):
        for user, offered in enumerate(self.offered):
            self.day_start[user].append(offered)

    def candidates(self, user, day):
        args = self.args
        starts = self.day_start[user]
        oldest = starts[max(0, day - int(1.5 * args.window_days))]
        start = self.offered[user]
        old = self.rng.sample(range(oldest, start), min(args.repeats, start - oldest))
        self.offered[user] = start + args.fresh
        return list(range(start, start + args.fresh)) + old


def item_id(user, index):
    return f"{user:x}:{index:x}"


def daily_refreshes(args):
    return [max(1, round(args.top_daily / rank**args.zipf)) for rank in range(1, args.users + 1)]


def set_clock(server, target_ms):
    """Moves the fault-injection build's clock to `target_ms`."""
    secs, micros = server.client.time()
    server.client.execute_command("BF.__FAULT", "CLOCK", target_ms - (secs * 1000 + micros // 1000))


def refresh_round(feed, approaches, users, day, now_ms, first, args):
    """One refresh of each user in `users` on every approach, pipelined."""
    batch = {u: feed.candidates(u, day) for u in users}
    ids = {u: [item_id(u, i) for i in indexes] for u, indexes in batch.items()}
    for approach in approaches:
        command = getattr(Commands, approach.name)
        pipe = approach.server.client.pipeline(transaction=False)
        for user in users:
            command(pipe, user, ids[user], now_ms, first, args)
        replies = [r for r in pipe.execute() if isinstance(r, list)]
        pipe = approach.server.client.pipeline(transaction=False)
        for user, flags in zip(users, replies):
            flags = [f is not None and f != 0 for f in flags]
            shown = approach.judge(user, batch[user], flags, now_ms)
            record(pipe, approach, user, [item_id(user, i) for i in shown], now_ms)
        pipe.execute()


def end_of_day(approaches, baselines, args):
    """used_memory per user, MEMORY USAGE of the keys per user, and the heaviest user's key."""
    for approach, baseline in zip(approaches, baselines):
        used = approach.server.used_memory() - baseline
        approach.memory_per_user.append(round(used / args.users, 1))
        pipe = approach.server.client.pipeline(transaction=False)
        for user in range(args.users):
            pipe.execute_command("MEMORY", "USAGE", key(user), "SAMPLES", "0")
        usages = [u or 0 for u in pipe.execute()]
        approach.keys_per_user.append(round(sum(usages) / args.users, 1))
        approach.heavy_usage.append(usages[0])


def simulate(args, start_ms):
    counts = daily_refreshes(args)
    window_ms = args.window_days * DAY_MS
    remember_ms = window_ms * (args.generations - 1) // args.generations
    feed = Feed(args)
    with contextlib.ExitStack() as servers:
        growing_server = servers.enter_context(RedisServer(args.bloomrs_fault))
        windowed_server = servers.enter_context(RedisServer(args.bloomrs_fault))
        zset_server = servers.enter_context(RedisServer())
        approaches = [
            Approach("growing", growing_server, args.users, None, None),
            Approach("windowed", windowed_server, args.users, window_ms, remember_ms),
            Approach("zset", zset_server, args.users, window_ms, window_ms),
        ]
        if args.compact:
            compact_server = servers.enter_context(RedisServer(args.bloomrs_fault))
            approaches.append(Approach("compact", compact_server, args.users, None, None))
        if args.compact_window:
            server = servers.enter_context(RedisServer(args.bloomrs_fault))
            approaches.append(Approach("compact_window", server, args.users, window_ms,
                                       remember_ms))
        clocked = [a.server for a in approaches if a.name in ("windowed", "compact_window")]
        baselines = [a.server.used_memory() for a in approaches]
        started = time.perf_counter()
        rounds = counts[0]
        with tqdm(total=args.days * sum(counts), unit="refresh", disable=args.no_progress,
                  mininterval=1.0) as progress:
            for day in range(args.days):
                feed.start_day(day)
                for round_no in range(rounds):
                    now_ms = start_ms + day * DAY_MS + round_no * DAY_MS // rounds
                    for server in clocked:
                        set_clock(server, now_ms)
                    active = sum(1 for c in counts if c > round_no)
                    for first in range(0, active, args.batch):
                        users = range(first, min(active, first + args.batch))
                        refresh_round(feed, approaches, users, day, now_ms,
                                      day == 0 and round_no == 0, args)
                        progress.update(len(users))
                end_of_day(approaches, baselines, args)
        elapsed = time.perf_counter() - started
        heavy = windowed_server.client.execute_command("BF.INFO", key(0))
        return {a.name: a.summary(args.users) for a in approaches}, elapsed, heavy


def run(args):
    """The time-stepped simulation; returns its JSON-ready result."""
    start_ms = (int(time.time()) // 86400 + 1) * DAY_MS  # a midnight (UTC), slot-aligned
    results, elapsed, heavy = simulate(args, start_ms)
    window = args.window_days
    after_first = {name: r["memory_per_user_by_day"][window:] for name, r in results.items()}
    steady = {name: statistics.fmean(v) for name, v in after_first.items() if v}
    extra = {}
    if "compact" in results:
        final = {name: r["memory_per_user_by_day"][-1] for name, r in results.items()}
        extra["final_memory_per_user"] = final
        extra["compact_over_growing_final"] = final["compact"] / final["growing"]
        extra["windowed_over_compact_final"] = final["windowed"] / final["compact"]
    if "compact_window" in steady:
        extra["compact_window_over_windowed"] = steady["compact_window"] / steady["windowed"]
        extra["compact_window_over_windowed_keys"] = statistics.fmean(
            c / w for c, w in zip(results["compact_window"]["key_bytes_per_user_by_day"][window:],
                                  results["windowed"]["key_bytes_per_user_by_day"][window:]))
    return extra | {
        "wall_seconds": round(elapsed, 1),
        "refreshes_per_day": sum(daily_refreshes(args)),
        "approaches": results,
        "steady_memory_per_user": {k: round(v, 1) for k, v in steady.items()},
        "windowed_over_zset": steady["windowed"] / steady["zset"] if steady else None,
        "heavy_user_info": dict(zip(heavy[::2], heavy[1::2])),
    }


def print_summary(result, args):
    print(f"{args.days} days, window {args.window_days} days in {args.generations} generations, "
          f"{args.users:,} users, {result['refreshes_per_day']:,} refreshes a day")
    for name, entry in result["approaches"].items():
        memory = entry["memory_per_user_by_day"]
        marks = ", ".join(f"day {d}: {memory[d - 1]:,.0f}"
                          for d in (args.window_days, 2 * args.window_days, args.days)
                          if d <= len(memory))
        print(f"{name:>9}: B/user {marks}; false positives {entry['false_positives']:,}/"
              f"{entry['unseen_items_checked']:,} = {100 * entry['false_positive_rate']:.3f}%; "
              f"shown again within memory {entry['shown_within_memory']}")
    print(f"windowed / zset memory per user after the first window: "
          f"{result['windowed_over_zset']:.3f}")
    if "compact_window_over_windowed" in result:
        print(f"compact_window / windowed memory per user after the first window: "
              f"{result['compact_window_over_windowed']:.3f} (used_memory), "
              f"{result['compact_window_over_windowed_keys']:.3f} (MEMORY USAGE of the keys)")
    if "compact_over_growing_final" in result:
        print(f"on the last day, compact / growing {result['compact_over_growing_final']:.3f}, "
              f"windowed / compact {result['windowed_over_compact_final']:.3f}")
