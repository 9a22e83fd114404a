"""The longest pause a client sees while a 100M-item filter moves between cluster nodes.

Two cluster nodes with the module: the source holds all 16384 slots, the target none. A
filter of --items items (default 100,000,000) at 1 % is made on the source, either
    one-key   one key (`big`, one slot), or
    split     split over --parts keys (default 64) on distinct slots (split.py's scheme,
              docs/cluster-split.md), each reserved for its share,
each made full the quick way of bigvalues.py (a SCANDUMP header counted full, then LOADCHUNK of
random bytes, so every page is written). Then every slot holding it moves to the target as a
cluster operator moves one: CLUSTER SETSLOT s IMPORTING on the target, SETSLOT s MIGRATING on
the source, MIGRATE target "" 0 <timeout> KEYS <keys of s>, then SETSLOT s NODE on both.

Meanwhile a separate process looks items up in a loop (BF.EXISTS of ids routed as the scheme
routes them, following MOVED and ASK as a cluster client does) and records the wall time of
every lookup: the longest is the pause a client sees. Each MIGRATE's server time is read from
the source's SLOWLOG too. Both layouts move the whole logical filter; the split one moves 64
slots one after another. The machine is shared and has 2 cores: the figures are of one run.

Usage: migration.py [--bloomrs PATH] [--items N] [--parts N] [--out FILE]
"""

import multiprocessing
import time

import redis

from bigvalues import command_of, fill_synthetic
from machine import describe, write_result
from server import RedisServer, module_parser
from split import SLOTS, part_keys, part_of
from tables import migration_table

CLUSTER = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
           "--cluster-node-timeout", "15000"]
MIGRATE_TIMEOUT_MS = 120_000


def make_cluster(source, target):
    """The source owns every slot; the target joins with none."""
    source.client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, SLOTS - 1)
    source.client.execute_command("CLUSTER", "MEET", "127.0.0.1", target.port)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        known = [n for n in (source, target)
                 if "cluster_state:ok" in n.client.execute_command("CLUSTER", "INFO")
                 and n.client.execute_command("CLUSTER", "INFO").count("cluster_known_nodes:2")]
        if len(known) == 2:
            return
        time.sleep(0.1)
    raise RuntimeError("the two nodes did not form a cluster")


def record(stop, step, count="commands"):
    """Runs `step(i)` in a loop until `stop`; how many, the longest and the slowest wall times."""
    worst, done, slow, i = 0.0, 0, [], 0
    while not stop.is_set():
        start = time.perf_counter()
        step(i)
        took = time.perf_counter() - start
        worst = max(worst, took)
        if took > 0.005:
            slow.append(round(took * 1000, 2))
        done += 1
        i += 1
    return {count: done, "longest_ms": round(worst * 1000, 2),
            "over_5ms": len(slow), "slowest_ms": sorted(slow)[-10:]}


def looker(ports, keys, stop, out):
    """BF.EXISTS in a loop over the keys' items, following MOVED/ASK; wall times (s)."""
    conns = {port: redis.Redis(port=port, protocol=2) for port in ports}
    owner = {key: ports[0] for key in keys}
    parts = len(keys)

    def step(i):
        item = b"probe-%d" % i
        key = keys[part_of(item, parts)] if parts > 1 else keys[0]
        port, asking = owner[key], False
        for _ in range(5):
            try:
                if asking:
                    pipe = conns[port].pipeline(transaction=False)
                    pipe.execute_command("ASKING")
                    pipe.execute_command("BF.EXISTS", key, item)
                    pipe.execute()
                else:
                    conns[port].execute_command("BF.EXISTS", key, item)
                break
            except redis.exceptions.MovedError as e:
                owner[key], port, asking = e.port, e.port, False
            except redis.exceptions.AskError as e:
                port, asking = e.port, True
    out.put(record(stop, step, count="lookups"))


def node_id(server):
    return server.client.execute_command("CLUSTER", "MYID")


def migrate_slot(source, target, slot, ids):
    """Moves one slot; the MIGRATE's server time on the source (SLOWLOG, us)."""
    target.client.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[0])
    source.client.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[1])
    keys = source.client.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    source.client.slowlog_reset()
    source.client.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0,
                                  MIGRATE_TIMEOUT_MS, "KEYS", *keys)
    migrate_us = max((e["duration"] for e in source.client.slowlog_get(16)
                      if command_of(e).startswith("migrate")), default=None)
    for node in (target, source):
        node.client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[1])
    return migrate_us


def run(module, items, keys, binary="redis-server"):
    """Makes the filter over `keys`, moves every slot holding it, returns the figures."""
    with RedisServer(module, config=CLUSTER, binary=binary) as source, \
            RedisServer(module, config=CLUSTER, binary=binary) as target:
        make_cluster(source, target)
        # The lookups fill the source's SLOWLOG at threshold 0: log from 1 ms, which every
        # MIGRATE of these keys exceeds.
        for node in (source, target):
            node.client.config_set("slowlog-log-slower-than", 1000)
        raw = redis.Redis(port=source.port, protocol=2)
        for key in keys:
            fill_synthetic(raw, key, items // len(keys))
        slots = sorted({source.client.execute_command("CLUSTER", "KEYSLOT", k) for k in keys})
        ids = (node_id(source), node_id(target))
        stop, out = multiprocessing.Event(), multiprocessing.Queue()
        client = multiprocessing.Process(target=looker,
                                         args=([source.port, target.port], keys, stop, out))
        client.start()
        time.sleep(1)
        start = time.perf_counter()
        migrates = [migrate_slot(source, target, slot, ids) for slot in slots]
        total = time.perf_counter() - start
        time.sleep(1)
        stop.set()
        seen = out.get(timeout=60)
        client.join()
        assert target.client.dbsize() == len(keys), "not every key moved"
        return {"keys": len(keys), "slots": len(slots),
                "key_bytes": target.client.memory_usage(keys[0], samples=0),
                "longest_migrate_us": max(m for m in migrates if m is not None),
                "migrate_us": migrates, "total_s": round(total, 2), "client": seen}


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--items", type=int, default=100_000_000)
    parser.add_argument("--parts", type=int, default=64)
    parser.add_argument("--out", default="docs/bench/migration.json")
    args = parser.parse_args()
    result = {"machine": describe(), "items": args.items, "error_rate": 0.01, "layouts": {}}
    for name, keys in [("one key", ["big"]), (f"split into {args.parts} keys",
                                              part_keys("big", args.parts))]:
        print(f"== {name}", flush=True)
        result["layouts"][name] = run(args.bloomrs, args.items, keys)
        print(result["layouts"][name], flush=True)
    write_result(args.out, result)
    print(migration_table(result))


if __name__ == "__main__":
    main()
