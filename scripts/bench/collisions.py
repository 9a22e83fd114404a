"""Items chosen to collide against random items: 1000-item commands on a filter whose items a
client picked, by brute force on the public hash, to share one place of the kind's layout,
next to the same commands on random items of the same length in the same run.

Items are 8-byte little-endian integers; MurmurHash64A is computed here (numpy, vectorised) as
the module computes it (src/hash.rs), and each kind's placement as its core does:
  cuckoo     hash = MurmurHash64A(item, 0): the same bucket (hash mod buckets) and fingerprint
             (hash mod 255 + 1), so the same bucket pair in every sub-filter of the default
             expansion 1: only 2 x bucket size of them fit a sub-filter, the rest grow new ones
  plain, counting, windowed, sparse
             a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a): the same
             a mod m and b mod m, so the same probe positions in the first link of m bits (a
             whole window's generation for windowed; the dense chain's link for sparse). Finding
             one costs about m^2 hashes, so these filters are created small (--bloom-capacity)
  blocked    the same block ((a * blocks) >> 64)
  compact    the same top --compact-bits bits of a: the same quotient in every table of up to
             2^(--compact-bits) slots, so one run that every doubling keeps whole
For every kind a fresh filter is created per round and three commands are timed: the 1000-item
add (BF.MADD; CF.INSERT ... ITEMS for cuckoo), the 1000-item lookup of the same items
(BF.MEXISTS / CF.MEXISTS), and the lookup of 1000 random items never added ("absent"); for
cuckoo also CF.DEL of the 1000 items one call each ("delete", usec per call, its compactions
included). Server time per call comes from INFO commandstats (usec_per_call) after a CONFIG
RESETSTAT; the median over --rounds rounds is reported, the two item sets alternating. The bound
is at most 2x: ratio = collided / random.

Usage: collisions.py [--bloomrs PATH] [--rounds N] [--kinds a,b] [--out FILE]
"""

import statistics
import time

import numpy as np

from machine import describe, write_result
from server import RedisServer, module_parser

BATCH = 1000
M = np.uint64(0xC6A4A7935BD1E995)
R = np.uint64(47)
BLOOM_SEED = 0xC6A4A7935BD1E995
# A filter created per round, by kind; {cap} is --bloom-capacity for the Bloom-probed kinds.
KINDS = {
    "plain": ["BF.RESERVE", "{key}", "0.01", "{cap}"],
    "counting": ["BF.RESERVE", "{key}", "0.01", "{cap}", "COUNTING"],
    "windowed": ["BF.RESERVE", "{key}", "0.01", "{cap}", "WINDOW", "3600"],
    "sparse": None,
    "blocked": ["BF.RESERVE", "{key}", "0.01", "1000", "BLOCKED"],
    "cuckoo": ["CF.RESERVE", "{key}", "1024"],
    "compact": ["BF.RESERVE", "{key}", "0.01", "1000", "COMPACT"],
}


def murmur64a_u64(keys, seed):
    """MurmurHash64A of each 8-byte little-endian key (`seed` a scalar or an array)."""
    with np.errstate(over="ignore"):
        h = np.asarray(seed, dtype=np.uint64) ^ (np.uint64(8) * M)
        k = keys * M
        k ^= k >> R
        k *= M
        h = h ^ k
        h *= M
        h ^= h >> R
        h *= M
        h ^= h >> R
    return h


def bloom_hashes(keys):
    a = murmur64a_u64(keys, np.uint64(BLOOM_SEED))
    return a, murmur64a_u64(keys, a)


def as_items(keys):
    return [int(k).to_bytes(8, "little") for k in keys]


def search(match, count, start, chunk=1 << 22):
    """The first `count` keys from `start` up for which match(keys) is true."""
    found = []
    while len(found) < count:
        keys = np.arange(start, start + chunk, dtype=np.uint64)
        found.extend(keys[match(keys)].tolist())
        start += chunk
    return found[:count]


def cuckoo_colliders(buckets):
    first = murmur64a_u64(np.arange(1, dtype=np.uint64), 0)[0]
    bucket, fp = first % np.uint64(buckets), first % np.uint64(255)

    def match(keys):
        h = murmur64a_u64(keys, 0)
        return (h % np.uint64(buckets) == bucket) & (h % np.uint64(255) == fp)

    return search(match, BATCH, 0)


def probe_colliders(bits):
    a0, b0 = bloom_hashes(np.arange(1, dtype=np.uint64))
    m = np.uint64(bits)
    target_a, target_b = a0[0] % m, b0[0] % m

    def match(keys):
        a = murmur64a_u64(keys, np.uint64(BLOOM_SEED))
        hit = a % m == target_a
        out = np.zeros(len(keys), dtype=bool)
        idx = np.nonzero(hit)[0]
        out[idx] = murmur64a_u64(keys[idx], a[idx]) % m == target_b
        return out

    return search(match, BATCH, 0)


def block_colliders(blocks):
    def block(a):
        return (a.astype(object) * blocks) >> 64

    a0 = murmur64a_u64(np.arange(1, dtype=np.uint64), np.uint64(BLOOM_SEED))
    target = block(a0)[0]
    # (a * blocks) >> 64 == target  <=>  a in [ceil(target * 2^64 / blocks), ...)
    low = -(-(target << 64) // blocks)
    high = -(-((target + 1) << 64) // blocks)

    def match(keys):
        a = murmur64a_u64(keys, np.uint64(BLOOM_SEED))
        return (a >= np.uint64(low)) & (a <= np.uint64(high - 1))

    return search(match, BATCH, 0)


def prefix_colliders(bits):
    a0 = murmur64a_u64(np.arange(1, dtype=np.uint64), np.uint64(BLOOM_SEED))
    shift = np.uint64(64 - bits)
    target = a0[0] >> shift

    def match(keys):
        return murmur64a_u64(keys, np.uint64(BLOOM_SEED)) >> shift == target

    return search(match, BATCH, 0)


def debug_field(client, key, name):
    """A numeric field of the first link's line of BF.DEBUG (`name:value`)."""
    for line in client.execute_command("BF.DEBUG", key)[1:]:
        for part in line.split():
            field, _, value = part.partition(":")
            if field == name:
                return int(value)
    raise RuntimeError(f"BF.DEBUG {key} has no {name}")


def create(client, kind, key, cap):
    client.execute_command("DEL", key)
    if kind == "sparse":
        client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "2048")
        client.execute_command("BF.INSERT", key, "CAPACITY", cap, "ERROR", "0.01",
                               "ITEMS", b"\xff" * 9)
        client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "0")
        return
    client.execute_command(*[p.format(key=key, cap=cap) for p in KINDS[kind]])


def colliders(client, kind, cap, compact_bits):
    """The kind's 1000 collided items, and how long finding them took."""
    started = time.monotonic()
    probe = "probe:" + kind
    if kind == "sparse":
        client.execute_command("BF.RESERVE", probe, "0.01", cap)
    else:
        create(client, kind, probe, cap)
    if kind == "windowed":
        client.execute_command("BF.ADD", probe, "x")
    if kind == "cuckoo":
        info = client.execute_command("CF.INFO", probe)
        keys = cuckoo_colliders(int(info[info.index("Number of buckets") + 1]))
    elif kind == "blocked":
        keys = block_colliders(debug_field(client, probe, "blocks"))
    elif kind == "compact":
        keys = prefix_colliders(compact_bits)
    else:
        keys = probe_colliders(debug_field(client, probe, "bits"))
    client.execute_command("DEL", probe)
    return as_items(keys), time.monotonic() - started


def usec_per_call(client, command):
    stats = client.info("commandstats").get(f"cmdstat_{command.lower()}", {})
    return float(stats.get("usec_per_call", 0.0))


def timed(client, command, *args):
    client.execute_command("CONFIG", "RESETSTAT")
    client.execute_command(command, *args)
    return usec_per_call(client, command)


def one_round(client, kind, cap, batch, absent):
    key = "k:" + kind
    create(client, kind, key, cap)
    cuckoo = kind == "cuckoo"
    add = ("CF.INSERT", key, "ITEMS", *batch) if cuckoo else ("BF.MADD", key, *batch)
    exists = "CF.MEXISTS" if cuckoo else "BF.MEXISTS"
    out = {"add": timed(client, *add),
           "exists": timed(client, exists, key, *batch),
           "absent": timed(client, exists, key, *absent)}
    if cuckoo:
        client.execute_command("CONFIG", "RESETSTAT")
        for item in batch:
            client.execute_command("CF.DEL", key, item)
        out["delete"] = usec_per_call(client, "CF.DEL")
    client.execute_command("DEL", key)
    return out


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--bloom-capacity", type=int, default=16)
    parser.add_argument("--compact-bits", type=int, default=9)
    parser.add_argument("--server", default="redis-server")
    parser.add_argument("--out", default="docs/bench/collisions.json")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    rng = np.random.default_rng(35)
    rows = []
    with RedisServer(module=args.bloomrs, binary=args.server) as server:
        client = server.client
        client.execute_command("CONFIG", "SET", "bf.bf-sparse-max-bytes", "0")
        for kind in kinds:
            cap = args.bloom_capacity if kind in ("plain", "counting", "windowed", "sparse") \
                else 1000
            collided, search_s = colliders(client, kind, cap, args.compact_bits)
            sets = {"collided": collided,
                    "random": as_items(rng.integers(1 << 40, 1 << 62, BATCH, dtype=np.uint64))}
            absent = as_items(rng.integers(1 << 62, 1 << 63, BATCH, dtype=np.uint64))
            samples = {}
            for _ in range(args.rounds):
                for name, batch in sets.items():
                    for op, usec in one_round(client, kind, cap, batch, absent).items():
                        samples.setdefault((name, op), []).append(usec)
            for op in sorted({op for _, op in samples}, key=["add", "exists", "absent",
                                                              "delete"].index):
                collided_us = statistics.median(samples[("collided", op)])
                random_us = statistics.median(samples[("random", op)])
                ratio = collided_us / random_us if random_us else float("nan")
                rows.append({"kind": kind, "command": op, "capacity": cap,
                             "collided_usec": collided_us, "random_usec": random_us,
                             "ratio": ratio, "within_2x": ratio <= 2.0,
                             "search_s": round(search_s, 2)})
                print(f"{kind:9} {op:7} collided {collided_us:10.1f} us  random "
                      f"{random_us:8.1f} us  ratio {ratio:7.2f}  (search {search_s:.1f} s)",
                      flush=True)
    write_result(args.out, {"machine": describe(), "batch": BATCH, "rounds": args.rounds,
                            "server": args.server, "compact_bits": args.compact_bits, "rows": rows})


if __name__ == "__main__":
    main()
