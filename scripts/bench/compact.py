"""Compact Bloom filters (COMPACT): memory against the one-link floor, false positives, speed.

Memory: MEMORY USAGE (SAMPLES 0) of filters holding n 16-character ids, for n in N_SMALL and
N_TARGETS and error rates 0.01 and 0.001, of
    set      a SET of the ids (the same at both rates)
    tiers    BF.RESERVE k e 1000 EXPANSION 10 (the feed's per-user tiers), then the ids
    sparse   the same on a server with bf-sparse-max-bytes 2048
    compact  BF.RESERVE k e 1000 COMPACT, then the ids (and with a starting hint of 100)
    floor    BF.RESERVE k e n NONSCALING: one link sized for exactly n, as if the filter knew
             its future
with compact/floor at each n, its geometric mean over N_TARGETS and its maximum. Compact against
the tiers at every n from 1 to --sweep: both grown one id at a time in a server-side script that
returns every n where either one's MEMORY USAGE changed, hence the exact ranges of n where the
compact filter is the larger.

False positives: a compact filter grown one id at a time is probed with --probes absent ids at
every n of N_TARGETS and right before and right after every doubling; the margin given is three
standard deviations of a binomial count at the error rate. Every added id is then looked up
(false negatives must be 0).

Speed: usec_per_call (INFO commandstats: server time inside the command) of
    BF.EXISTS on a compact filter grown from capacity 100 to --big items against a one-link
              filter reserved for them (BF.RESERVE k 0.01 <big>) holding the same items
    BF.MEXISTS of 40 ids on a compact filter grown 1,000 -> 111,000 against the 3-tier filter,
              a one link reserved for 111,000 and a missing key (the command's own cost)
    BF.ADD    while growing the compact filter against adding the same ids to the one link
and the longest single command while a compact filter grows to --longest items (SLOWLOG), with
the longest of every fiftieth of the run next to the table's bytes, against BF.RESERVE of a
one-link filter of that size. Each speed case runs --runs times on a fresh server, the lookups
--rounds times in turns on each (mixed, absent-only and present-only ids); medians are reported.
The machine is shared and has 2 cores: the ratios, taken within one run, are what to read.
BF.ADD is also given without its calls over 200 us (the doublings), to show what they weigh.

Deletes (COMPACT COUNTING): bits per item at 0.01 and 0.001 against the counting kind (one link
sized for the items) and the smallest cuckoo filter within the rate (counting.py's choice), and
the churn of counting.py: --churn adds, then half of them deleted, with the false-positive rate
at the peak and after, deleted items still present, and the false negatives (must be 0).

Usage: compact.py [--bloomrs PATH] [--quick] [--out FILE] [--plot-only]
"""

import json
import math
import os
import statistics
import sys

from machine import describe, write_result
from server import RedisServer, module_parser

N_TARGETS = [100, 200, 500, 1000, 1500, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
N_SMALL = [1, 2, 5, 10, 20, 50]
MIX = 0x9E3779B97F4A7C15
MASK64 = 2**64 - 1
BATCH = 1000


def ident(space, index):
    """A 16-character id, distinct for every (space, index)."""
    return f"{(((space << 40) | index) * MIX) & MASK64:016x}"


def ids(space, start, stop):
    return [ident(space, i) for i in range(start, stop)]


def add(client, key, space, start, stop, command="BF.MADD"):
    pipe = client.pipeline(transaction=False)
    for begin in range(start, stop, BATCH):
        pipe.execute_command(command, key, *ids(space, begin, min(stop, begin + BATCH)))
    return pipe.execute()


def present(client, key, space, start, stop):
    pipe = client.pipeline(transaction=False)
    for begin in range(start, stop, BATCH):
        pipe.execute_command("BF.MEXISTS", key, *ids(space, begin, min(stop, begin + BATCH)))
    return sum(sum(reply) for reply in pipe.execute())


def usage(client, key):
    return client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0") or 0


def memory(module, points):
    """One row per (error, n): the bytes of every kind of value holding n ids. Keys have names
    of equal length, so the key's own bytes weigh the same in every column."""
    rows = []
    with RedisServer(module) as plain, RedisServer(module) as sparse:
        sparse.client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "2048")
        for error in (0.01, 0.001):
            e = str(error)
            for server in (plain, sparse):
                server.client.execute_command("BF.RESERVE", "k:t", e, 1000, "EXPANSION", 10)
            plain.client.execute_command("BF.RESERVE", "k:c", e, 1000, "COMPACT")
            plain.client.execute_command("BF.RESERVE", "k:h", e, 100, "COMPACT")
            held = 0
            space = 1 if error == 0.01 else 2
            for n in points:
                for server in (plain, sparse):
                    add(server.client, "k:t", space, held, n)
                add(plain.client, "k:c", space, held, n)
                add(plain.client, "k:h", space, held, n)
                if error == 0.01:
                    add(plain.client, "k:s", space, held, n, "SADD")
                held = n
                plain.client.execute_command("BF.RESERVE", "k:f", e, max(n, 1), "NONSCALING")
                add(plain.client, "k:f", space, 0, n)
                row = {
                    "error": error,
                    "n": n,
                    "tiers": usage(plain.client, "k:t"),
                    "sparse": usage(sparse.client, "k:t"),
                    "compact": usage(plain.client, "k:c"),
                    "compact_hint100": usage(plain.client, "k:h"),
                    "floor": usage(plain.client, "k:f"),
                    "compact_type": plain.client.type("k:c"),
                    "compact_capacity": plain.client.execute_command(
                        "BF.INFO", "k:c", "CAPACITY")[0],
                    "compact_items": plain.client.execute_command(
                        "BF.INFO", "k:c", "ITEMS")[0],
                }
                if error == 0.01:
                    row["set"] = usage(plain.client, "k:s")
                plain.client.delete("k:f")
                rows.append(row)
                print(f"  e={error} n={n}: compact {row['compact']} floor {row['floor']} "
                      f"tiers {row['tiers']}", file=sys.stderr)
            for server in (plain, sparse):
                server.client.delete("k:t", "k:c", "k:h", "k:s")
    return rows


# Grows KEYS[1] (the tiers) and KEYS[2] (compact) one id at a time, the ids of n = ARGV[1] to
# ARGV[2], and returns the first n and every n at which the MEMORY USAGE of either changed:
# {n, tiers bytes, compact bytes}. The ids are sweep_id(n) (the same 16 hex characters below).
SWEEP = """
local out, last_t, last_c = {}, -1, -1
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local id = string.format('%016x', i * 4294967296 + (i * 2654435761) % 4294967296)
  redis.call('BF.ADD', KEYS[1], id)
  redis.call('BF.ADD', KEYS[2], id)
  local t = redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', 0)
  local c = redis.call('MEMORY', 'USAGE', KEYS[2], 'SAMPLES', 0)
  if t ~= last_t or c ~= last_c then
    out[#out + 1] = {i, t, c}
    last_t, last_c = t, c
  end
end
return out
"""

# Adds sweep_id(ARGV[1]) ... sweep_id(ARGV[2]) to KEYS[1].
GROW = """
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local id = string.format('%016x', i * 4294967296 + (i * 2654435761) % 4294967296)
  redis.call('BF.ADD', KEYS[1], id)
end
return 0
"""


def sweep_id(i):
    return f"{(i << 32) + (i * 2654435761) % 2**32:016x}"


def sweep(module, limit):
    """compact against the tiers at every n from 1 to `limit` (both grown one id at a time):
    the steps of both, and the ranges of n where the compact filter is the larger."""
    out = {}
    with RedisServer(module) as server:
        c = server.client
        for error in (0.01, 0.001):
            c.execute_command("BF.RESERVE", "k:t", error, 1000, "EXPANSION", 10)
            c.execute_command("BF.RESERVE", "k:c", error, 1000, "COMPACT")
            steps = []
            for begin in range(1, limit + 1, 100_000):
                stop = min(limit, begin + 99_999)
                steps += [list(s) for s in c.eval(SWEEP, 2, "k:t", "k:c", begin, stop)]
            c.delete("k:t", "k:c")
            above, start = [], None
            for at, (n, t, b) in enumerate(steps):
                end = steps[at + 1][0] - 1 if at + 1 < len(steps) else limit
                if b > t and start is None:
                    start = n
                if b <= t and start is not None:
                    above.append([start, n - 1])
                    start = None
                if at + 1 == len(steps) and start is not None:
                    above.append([start, end])
            # The n at which the compact table doubled: its bytes changed.
            doublings = [n for (n, _, b), prev in zip(steps[1:], steps) if b != prev[2]]
            worst = max(b / t for _, t, b in steps)
            out[str(error)] = {"limit": limit, "steps": steps, "compact_above_tiers": above,
                               "doublings": doublings, "max_compact_over_tiers": worst,
                               "min_tiers_over_compact": min(t / b for _, t, b in steps)}
            print(f"  sweep e={error}: compact above tiers for n in {above}", file=sys.stderr)
    return out


def binomial_margin(rate, probes, sigmas=3):
    return sigmas * math.sqrt(rate * (1 - rate) / probes)


def false_positives(module, points, doublings, probes):
    """The false-positive rate of a compact filter grown one id at a time (the sweep's ids), at
    every n of `points` and right before and right after every doubling, with `probes` absent
    ids; the margin is three standard deviations of a binomial count at the error rate."""
    absent = [ids(9, begin, min(probes, begin + BATCH)) for begin in range(0, probes, BATCH)]
    out = {}
    with RedisServer(module) as server:
        c = server.client
        for error in (0.01, 0.001):
            at = {n: "target" for n in points}
            for d in doublings[str(error)]:
                at.setdefault(d - 1, "before doubling")
                at[d] = "after doubling"
            c.execute_command("BF.RESERVE", "k:c", error, 1000, "COMPACT")
            held, rows = 0, []
            margin = binomial_margin(error, probes)
            for n in sorted(at):
                if n > held:
                    c.eval(GROW, 1, "k:c", held + 1, n)
                held = n
                pipe = c.pipeline(transaction=False)
                for chunk in absent:
                    pipe.execute_command("BF.MEXISTS", "k:c", *chunk)
                found = sum(sum(reply) for reply in pipe.execute())
                rate = found / probes
                rows.append({"n": n, "where": at[n], "fp_rate": rate,
                             "within": rate <= error, "within_margin": rate <= error + margin})
            held_ids = [sweep_id(i) for i in range(1, held + 1)]
            pipe = c.pipeline(transaction=False)
            for begin in range(0, held, BATCH):
                pipe.execute_command("BF.MEXISTS", "k:c", *held_ids[begin:begin + BATCH])
            false_negatives = held - sum(sum(reply) for reply in pipe.execute())
            c.delete("k:c")
            worst = max(rows, key=lambda r: r["fp_rate"])
            out[str(error)] = {"probes": probes, "margin": margin, "rows": rows,
                               "max_fp_rate": worst["fp_rate"], "max_at": worst["n"],
                               "all_within": all(r["within"] for r in rows),
                               "false_negatives": false_negatives}
            print(f"  fp e={error}: max {worst['fp_rate']:.5f} at n={worst['n']} "
                  f"({worst['where']}), margin {margin:.5f}, false negatives {false_negatives}",
                  file=sys.stderr)
    return out


def summary(rows, swept):
    out = {}
    for error in (0.01, 0.001):
        at = [r for r in rows if r["error"] == error and r["n"] in N_TARGETS]
        ratios = [r["compact"] / r["floor"] for r in at]
        tier_ratios = [r["tiers"] / r["floor"] for r in at]
        worst = max(at, key=lambda r: r["compact"] / r["floor"])
        above_tiers = [r["n"] for r in rows if r["error"] == error and r["compact"] > r["tiers"]]
        # compact / floor = (bits per slot / the floor's bits per item) / load, where the load
        # is items held over slots: what a table that doubles pays for its empty slots, and what
        # each slot costs, separately. Slots: the power of two whose 90% is the capacity.
        slots = [2 ** round(math.log2(r["compact_capacity"] / 0.9)) for r in at]
        load = [r["compact_items"] / q for r, q in zip(at, slots)]
        per_slot = [r["compact"] * 8 / q for r, q in zip(at, slots)]
        floor_bits = [r["floor"] * 8 / r["compact_items"] for r in at]
        geo = lambda values: math.exp(statistics.fmean(map(math.log, values)))  # noqa: E731
        out[str(error)] = {
            "bound": {
                "geomean_one_over_load": geo([1 / x for x in load]),
                "geomean_bits_per_slot": geo(per_slot),
                "geomean_floor_bits_per_item": geo(floor_bits),
                "geomean_slot_over_floor_bits": geo([a / b for a, b in zip(per_slot, floor_bits)]),
                "rows": [{"n": r["n"], "slots": q, "load": round(x, 3),
                          "bits_per_slot": round(b, 2), "floor_bits_per_item": round(f, 2)}
                         for r, q, x, b, f in zip(at, slots, load, per_slot, floor_bits)],
            },
            "geomean_compact_over_floor": math.exp(statistics.fmean(map(math.log, ratios))),
            "max_compact_over_floor": max(ratios),
            "max_at": worst["n"],
            "geomean_tiers_over_floor": math.exp(statistics.fmean(map(math.log, tier_ratios))),
            "n_where_compact_above_tiers": above_tiers,
            "hint100_equals_hint1000": all(r["compact"] == r["compact_hint100"]
                                           for r in rows if r["error"] == error),
            "swept_compact_above_tiers": swept[str(error)]["compact_above_tiers"],
        }
    return out


def per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}")
    return stats["usec_per_call"] if stats else None


def timed(client, command, key, items, per_command=1, repeat=1):
    """usec_per_call of `command key item...` over the items (per_command items per call),
    `repeat` times over."""
    client.execute_command("CONFIG", "RESETSTAT")
    pipe = client.pipeline(transaction=False)
    for _ in range(repeat):
        for begin in range(0, len(items), per_command):
            pipe.execute_command(command, key, *items[begin:begin + per_command])
            if len(pipe) >= 2000:
                pipe.execute()
    pipe.execute()
    return per_call(client, command)


def lookups(c, cases, rounds, repeat):
    """usec_per_call of every case, `rounds` times in turns (the order rotating, so no case
    always follows another): the median of each, and the rounds. Each measurement sends its
    probes `repeat` times, so that it lasts long enough (about 0.1 s of server time) for a
    neighbour's burst on the shared cores to weigh little in it."""
    seen = {label: [] for label in cases}
    labels = list(cases)
    for r in range(rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            command, key, probes, per = cases[label]
            seen[label].append(timed(c, command, key, probes, per, repeat if per > 1 else 1))
    return {label: statistics.median(v) for label, v in seen.items()}, seen


def speed_once(module, big, rounds, repeat):
    """One run of every speed case on a fresh server; the lookups `rounds` times in turns.
    `*_missing` is the same command on a key that does not exist: what the command costs before
    it touches a filter (parsing, the reply), which bounds how far any filter can go below
    another."""
    out = {}
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("BF.RESERVE", "compact", "0.01", 100, "COMPACT")
        c.execute_command("BF.RESERVE", "link", "0.01", big)
        items = ids(3, 0, big)
        # Commands over 200 us while the compact filter grows: its doublings.
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 200)
        c.execute_command("CONFIG", "SET", "slowlog-max-len", 10_000)
        c.execute_command("SLOWLOG", "RESET")
        out["add_compact"] = timed(c, "BF.ADD", "compact", items)
        slow = [e["duration"] for e in c.slowlog_get(10_000)
                if "BF.ADD" in str(e["command"]).upper()]
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
        out["add_compact_slow_calls"] = len(slow)
        out["add_compact_without_slow"] = (out["add_compact"] * big - sum(slow)) / (big - len(slow))
        out["add_link"] = timed(c, "BF.ADD", "link", items)
        probes = ids(3, 0, 100_000) + ids(4, 0, 100_000)
        medians, out["exists_rounds"] = lookups(c, {
            "exists_compact": ("BF.EXISTS", "compact", probes, 1),
            "exists_link": ("BF.EXISTS", "link", probes, 1),
            "exists_missing": ("BF.EXISTS", "missing", probes, 1),
        }, rounds, repeat)
        out |= medians
        c.delete("compact", "link")
        c.execute_command("BF.RESERVE", "compact", "0.01", 1000, "COMPACT")
        c.execute_command("BF.RESERVE", "tiers", "0.01", 1000, "EXPANSION", 10)
        c.execute_command("BF.RESERVE", "link", "0.01", 111_000)
        for key in ("compact", "tiers", "link"):
            add(c, key, 5, 0, 111_000)
        mixed = ids(5, 0, 40_000) + ids(6, 0, 40_000)
        absent, present = ids(6, 0, 80_000), ids(5, 0, 80_000)
        medians, out["mexists40_rounds"] = lookups(c, {
            "mexists40_compact": ("BF.MEXISTS", "compact", mixed, 40),
            "mexists40_tiers": ("BF.MEXISTS", "tiers", mixed, 40),
            "mexists40_link": ("BF.MEXISTS", "link", mixed, 40),
            "mexists40_missing": ("BF.MEXISTS", "missing", mixed, 40),
            "mexists40_absent_compact": ("BF.MEXISTS", "compact", absent, 40),
            "mexists40_absent_tiers": ("BF.MEXISTS", "tiers", absent, 40),
            "mexists40_present_compact": ("BF.MEXISTS", "compact", present, 40),
            "mexists40_present_tiers": ("BF.MEXISTS", "tiers", present, 40),
        }, rounds, repeat)
        out |= medians
        out["tiers_links"] = c.execute_command("BF.INFO", "tiers", "FILTERS")[0]
        out["bytes_compact_111k"] = usage(c, "compact")
        out["bytes_tiers_111k"] = usage(c, "tiers")
        out["bytes_link_111k"] = usage(c, "link")
    return out


def longest(module, items, chunk):
    """The longest single BF.MADD (of 1,000 ids) while a compact filter grows to `items`, with
    the longest of every `chunk` ids and the table's bytes after it (a doubling reads and
    rewrites the whole table, so its time follows the bytes), against BF.RESERVE of one link
    that size, in microseconds (SLOWLOG with slowlog-log-slower-than 0)."""
    with RedisServer(module) as server:
        c = server.client
        c.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 0)
        c.execute_command("CONFIG", "SET", "slowlog-max-len", 100_000)
        c.execute_command("BF.RESERVE", "compact", "0.01", 1000, "COMPACT")
        worst, steps = 0, []
        for begin in range(0, items, chunk):
            c.execute_command("SLOWLOG", "RESET")
            add(c, "compact", 7, begin, min(items, begin + chunk))
            durations = [e["duration"] for e in c.slowlog_get(100_000)
                         if "BF.MADD" in str(e["command"]).upper()]
            longest_here = max(durations)
            steps.append({"held": min(items, begin + chunk), "longest_madd_us": longest_here,
                          "median_madd_us": statistics.median(durations),
                          "bytes": usage(c, "compact")})
            worst = max(worst, longest_here)
        reserves = []
        for _ in range(3):
            c.execute_command("SLOWLOG", "RESET")
            c.execute_command("BF.RESERVE", "link", "0.01", items)
            reserves.append(max(e["duration"] for e in c.slowlog_get(10)
                                if "BF.RESERVE" in str(e["command"]).upper()))
            c.delete("link")
        # COPY of the final table: one pass that reads and writes every byte, what any doubling
        # done in one command costs at least.
        copies = []
        for _ in range(3):
            c.execute_command("SLOWLOG", "RESET")
            c.execute_command("COPY", "compact", "copy")
            copies.append(max(e["duration"] for e in c.slowlog_get(10)
                              if "COPY" in str(e["command"]).upper()))
            c.delete("copy")
        size = c.execute_command("BF.INFO", "compact", "SIZE")[0]
    return {"items": items, "longest_madd_us": worst, "reserve_us": statistics.median(reserves),
            "reserve_runs_us": reserves, "copy_us": statistics.median(copies),
            "copy_runs_us": copies, "compact_bytes": size, "steps": steps}


def bits(client, key, n, info="BF.INFO"):
    size = dict(zip(*[iter(client.execute_command(info, key))] * 2))["Size"]
    return {"memory_usage": round(usage(client, key) * 8 / n, 2), "size": round(size * 8 / n, 2)}


def hits(client, key, items, command="BF.MEXISTS"):
    pipe = client.pipeline(transaction=False)
    for begin in range(0, len(items), BATCH):
        pipe.execute_command(command, key, *items[begin:begin + BATCH])
    return sum(sum(reply) for reply in pipe.execute())


def deletes(module, n, churn, probes):
    """Bits per item of COMPACT COUNTING against the counting kind (one link sized for n, as in
    counting.py) and the smallest cuckoo filter within the rate; then counting.py's churn."""
    from counting import cuckoo_within
    members = ids(8, 0, n)
    absent = ids(11, 0, probes)
    out = {"items": n, "probes": probes, "bits": [], "churn": []}
    with RedisServer(module) as server:
        c = server.client
        for error in (0.01, 0.001):
            c.execute_command("BF.RESERVE", "cc", error, 1000, "COMPACT", "COUNTING")
            c.execute_command("BF.RESERVE", "ct", error, n, "NONSCALING", "COUNTING")
            add(c, "cc", 8, 0, n)
            add(c, "ct", 8, 0, n)
            row = {"error": error,
                   "compact_counting": bits(c, "cc", n)
                   | {"fp_rate": hits(c, "cc", absent) / probes},
                   "counting": bits(c, "ct", n) | {"fp_rate": hits(c, "ct", absent) / probes},
                   "cuckoo": cuckoo_within(c, error, members, absent)}
            c.delete("cc", "ct")
            out["bits"].append(row)
            print(f"  bits e={error}: {row}", file=sys.stderr)

            c.execute_command("BF.RESERVE", "churn", error, 1000, "COMPACT", "COUNTING")
            add(c, "churn", 10, 0, churn)
            fp_peak = hits(c, "churn", absent) / probes
            bytes_peak = usage(c, "churn")
            gone = churn // 2
            pipe = c.pipeline(transaction=False)
            for begin in range(0, gone, BATCH):
                pipe.execute_command("BF.MDEL", "churn", *ids(10, begin, min(gone, begin + BATCH)))
            deleted = sum(sum(reply) for reply in pipe.execute())
            kept = churn - gone
            present = hits(c, "churn", ids(10, gone, churn))
            row = {"error": error, "adds": churn, "deletes": gone, "deleted": deleted,
                   "kept": kept, "false_negatives": kept - present,
                   "fp_rate_at_peak": fp_peak, "fp_rate": hits(c, "churn", absent) / probes,
                   "deleted_still_present_rate": hits(c, "churn", ids(10, 0, gone)) / gone,
                   "bytes_at_peak": bytes_peak, "bytes_after": usage(c, "churn"),
                   "bits_per_item_held": round(usage(c, "churn") * 8 / kept, 2)}
            c.delete("churn")
            out["churn"].append(row)
            print(f"  churn e={error}: {row}", file=sys.stderr)
    return out


def plot(data, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    for axis, error in zip(axes, (0.01, 0.001)):
        rows = [r for r in data["memory"] if r["error"] == error]
        n = [r["n"] for r in rows]
        # The tiers and the compact filter at every n, from the sweep (step functions); the
        # others at the measured n.
        steps = [s for s in data.get("sweep", {}).get(str(error), {}).get("steps", [])
                 if s[0] <= n[-1]]
        for name, label, style, color in (
            ("set", "SET of the ids", ":", "#7f7f7f"),
            ("tiers", "tiers (RESERVE e 1000 EXPANSION 10)", "-", "#1f77b4"),
            ("sparse", "tiers, sparse start (2 KiB)", "--", "#2ca02c"),
            ("compact", "compact (RESERVE e 1000 COMPACT)", "-", "#d62728"),
            ("floor", "one link sized for exactly n", "-.", "#9467bd"),
        ):
            width = 2.5 if name == "compact" else 1.2
            if steps and name in ("tiers", "compact"):
                column = 1 if name == "tiers" else 2
                axis.plot([s[0] for s in steps] + [n[-1]],
                          [s[column] for s in steps] + [steps[-1][column]],
                          drawstyle="steps-post", linestyle=style, label=label, color=color,
                          linewidth=width)
                continue
            values = [r.get(name) for r in rows]
            if all(v is not None for v in values):
                axis.plot(n, values, linestyle=style, label=label, color=color, linewidth=width)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("items held (16-character ids)")
        axis.set_ylabel("MEMORY USAGE (bytes)")
        axis.set_title(f"error rate {error}")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    m = data["machine"]
    server = (m.get("redis_server") or "").split(" sha")[0]
    figure.suptitle(f"MEMORY USAGE of a value holding n ids — {m.get('cpu')}, {m.get('cores')} "
                    f"cores; {server}", fontsize=9)
    figure.tight_layout()
    figure.savefig(out_png, dpi=110)
    plt.close(figure)


SECTIONS = ("memory", "sweep", "fp", "speed", "longest", "deletes")


RATIOS = {
    "ratio_exists": ("exists_compact", "exists_link"),
    "ratio_mexists40": ("mexists40_compact", "mexists40_tiers"),
    "ratio_mexists40_link": ("mexists40_compact", "mexists40_link"),
    "ratio_mexists40_absent": ("mexists40_absent_compact", "mexists40_absent_tiers"),
    "ratio_mexists40_present": ("mexists40_present_compact", "mexists40_present_tiers"),
    "ratio_add": ("add_compact", "add_link"),
    "ratio_add_without_slow": ("add_compact_without_slow", "add_link"),
}


def speed_medians(runs):
    """The median over runs of every case (each run's value being the median of its rounds),
    and of every ratio taken within a run (paired: both sides measured on the same server in
    the same minutes)."""
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]
              if not k.endswith("_rounds")}
    for name, (a, b) in RATIOS.items():
        median[name] = statistics.median(r[a] / r[b] for r in runs)
    return median


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--probes", type=int, default=200_000,
                        help="absent ids probed for each false-positive rate")
    parser.add_argument("--sweep", type=int, default=2_000_000,
                        help="compact against the tiers at every n from 1 to this")
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--longest", type=int, default=10_000_000)
    parser.add_argument("--churn", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="fresh servers per speed case")
    parser.add_argument("--rounds", type=int, default=7,
                        help="turns of the lookup cases on each server (medians)")
    parser.add_argument("--repeat", type=int, default=10,
                        help="times the 80,000 BF.MEXISTS probes are sent per measurement")
    parser.add_argument("--only", default=None,
                        help="comma-separated sections to measure again (memory, sweep, fp, "
                             "speed, longest, deletes), updating an existing --out file")
    parser.add_argument("--quick", action="store_true",
                        help="n up to 100,000, 100,000 probes, a 300,000-item speed case, "
                             "1 run, 2M longest, 200,000 churn")
    parser.add_argument("--out", default="docs/bench/compact.json")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw the plot of an existing --out file")
    args = parser.parse_args()
    if args.plot_only:
        with open(args.out) as f:
            plot(json.load(f), args.out.replace(".json", "-memory.png"))
        return
    points = sorted(set(N_SMALL + N_TARGETS))
    if args.quick:
        points = [n for n in points if n <= 100_000]
        args.big, args.runs, args.longest, args.churn = 300_000, 1, 2_000_000, 200_000
        args.rounds, args.repeat = 5, 3
        args.probes = 100_000
    sections = SECTIONS if args.only is None else args.only.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown sections {sorted(unknown)}: choose among {', '.join(SECTIONS)}")
    # The module file's name only: results never say where it was built.
    settings = vars(args) | {"bloomrs": os.path.basename(args.bloomrs)}
    if args.only is None:
        data = {"machine": describe(), "settings": settings}
    else:
        with open(args.out) as f:
            data = json.load(f)
        data.setdefault("reruns", []).append({"sections": sections, "machine": describe(),
                                              "settings": settings})
    if "memory" in sections:
        print("== memory", file=sys.stderr)
        data["memory"] = memory(args.bloomrs, points)
    if "sweep" in sections:
        print("== compact against the tiers at every n", file=sys.stderr)
        data["sweep"] = sweep(args.bloomrs, args.sweep)
    data["summary"] = summary(data["memory"], data["sweep"])
    if "fp" in sections:
        print("== false positives", file=sys.stderr)
        fp_points = [n for n in N_TARGETS if n <= max(points)]
        doublings = {e: [d for d in s["doublings"] if d <= max(points)]
                     for e, s in data["sweep"].items()}
        data["false_positives"] = false_positives(args.bloomrs, fp_points, doublings,
                                                  args.probes)
    if "speed" in sections:
        print("== speed", file=sys.stderr)
        runs = [speed_once(args.bloomrs, args.big, args.rounds, args.repeat)
                for _ in range(args.runs)]
        data["speed"] = {"runs": runs, "median": speed_medians(runs), "big": args.big}
    if "longest" in sections:
        print("== longest command while growing", file=sys.stderr)
        data["longest"] = longest(args.bloomrs, args.longest, max(args.longest // 50, 100_000))
    if "deletes" in sections:
        print("== deletes", file=sys.stderr)
        data["deletes"] = deletes(args.bloomrs, 100_000, args.churn, args.probes)
    write_result(args.out, data)
    plot(data, args.out.replace(".json", "-memory.png"))
    print(json.dumps({"summary": data["summary"], "speed": data["speed"]["median"]}, indent=1))


if __name__ == "__main__":
    main()
