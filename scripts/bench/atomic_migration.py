"""The longest pause a client sees while Valkey 9's atomic slot migration moves a 100M-item filter.

migration.py's setup on Valkey 9.1 (--server; by default the one scripts/install-deps.sh builds
for SERVER=valkey9): two cluster nodes with the module, the source holding every slot, a filter
of --items items (default 100,000,000) at 1 % made full the quick way, as one key or split over
--parts keys (default 64) on distinct slots. Every slot holding it then moves with one
`CLUSTER MIGRATESLOTS SLOTSRANGE s s ... NODE <target>`, followed in `CLUSTER GETSLOTMIGRATIONS`
until `success`: the source forks, its child streams the slots' keys to the target as the
commands their AOF-rewrite callback emits (BF.LOADCHUNK in pieces), then the writes made
meanwhile, and the slots change hands during a pause of writes on the source (the hand-over:
`failover-paused` to `success`).

Meanwhile separate processes record the wall time of every command they send:
    readers   BF.EXISTS of the filter's items, routed by the scheme, following MOVED;
    writers   BF.ADD of new items to a small key in each slot moved (`writes:{tag}`),
              following MOVED: they wait out the hand-over's write pause;
    target    PING to the target, whose main thread runs the streamed LOADCHUNKs.
Both nodes' latency monitors (threshold 10 ms) say what held a main thread that long.
Each layout moves --runs times (default 5), each time on two fresh nodes. The control layout
moves the split layout's slots holding plain strings of the same size instead of filters
(readers send STRLEN): what Valkey's migration costs with no module type in it. The compact
layout moves one COMPACT filter at 1 % of --items adds (made once by BF.MADD, then RESTOREd on
each source), whose LOADCHUNKs the target checks segment by segment. The one-key and split
filters then move once more with MIGRATE (migration.py's way) on the same server, as the
yardstick of the same run. --layouts picks some of one,split,control,compact. With --busy N, N processes spin at the servers' priority throughout,
as other work on a loaded host would. The machine is shared and has 2 cores.

Usage: atomic_migration.py [--bloomrs PATH] [--server PATH] [--items N] [--parts N] [--runs N]
                           [--busy N] [--layouts L,...] [--out FILE]
"""

import multiprocessing
import os
import statistics
import subprocess
import sys
import time

import redis

from bigvalues import fill_synthetic
from machine import describe, write_result
from migration import CLUSTER, make_cluster, node_id, record
from migration import run as run_migrate
from server import RedisServer, module_parser
from split import part_keys, part_of


def routed(ports, keys):
    """call(key, *args): the command sent to the key's node, following MOVED (and waiting out
    TRYAGAIN); nodes start at ports[0]."""
    conns = {port: redis.Redis(port=port, protocol=2) for port in ports}
    owner = {key: ports[0] for key in keys}

    def call(key, *args):
        for _ in range(1000):
            try:
                return conns[owner[key]].execute_command(*args)
            except redis.exceptions.MovedError as e:
                owner[key] = e.port
            except redis.exceptions.TryAgainError:
                time.sleep(0.001)
        raise RuntimeError(f"{args[0]} {key}: no node would serve it")
    return call


def reader(ports, keys, strings, stop, out):
    call = routed(ports, keys)

    def step(i):
        item = b"probe-%d" % i
        key = keys[part_of(item, len(keys))] if len(keys) > 1 else keys[0]
        if strings:
            call(key, "STRLEN", key)
        else:
            call(key, "BF.EXISTS", key, item)
    out.put(("readers", record(stop, step)))


def writer(ports, keys, stop, out):
    writes = [key.replace("big", "writes", 1) for key in keys]
    call = routed(ports, writes)

    def step(i):
        key = writes[i % len(writes)]
        if call(key, "BF.ADD", key, b"w-%d" % i) is None:
            raise RuntimeError("BF.ADD answered nothing")
    out.put(("writers", record(stop, step)))


def pinger(port, stop, out):
    conn = redis.Redis(port=port, protocol=2)
    out.put(("target", record(stop, lambda i: conn.ping())))


def migration_job(source):
    """The newest job of CLUSTER GETSLOTMIGRATIONS on the source, as a dict."""
    jobs = source.client.execute_command("CLUSTER", "GETSLOTMIGRATIONS")
    job = jobs[-1]
    return job if isinstance(job, dict) else dict(zip(job[::2], job[1::2]))


def synthetic(items):
    """fill(client, key, parts): a full plain filter of its share of `items`."""
    return lambda raw, key, parts: fill_synthetic(raw, key, items // parts)


def strings_of(length):
    """fill(client, key, parts): a string of `length` random bytes (the control)."""
    return lambda raw, key, parts: raw.set(key, os.urandom(length))


def restored(payload):
    """fill(client, key, parts): the value DUMP gave as `payload`."""
    return lambda raw, key, parts: raw.restore(key, 0, payload)


def compact_payload(module, binary, items):
    """DUMP of a COMPACT filter at 1 % that `items` adds made (on a server of its own)."""
    with RedisServer(module, binary=binary) as server:
        # DUMP of some 200 MB takes seconds, more on a loaded host.
        raw = redis.Redis(port=server.port, protocol=2, socket_timeout=600)
        raw.execute_command("BF.RESERVE", "compact", 0.01, 1000, "COMPACT")
        batch = 20_000
        for start in range(0, items, batch * 10):
            pipe = raw.pipeline(transaction=False)
            for b in range(start, min(start + batch * 10, items), batch):
                pipe.execute_command("BF.MADD", "compact",
                                     *(b"item-%d" % i for i in range(b, min(b + batch, items))))
            pipe.execute()
        return raw.dump("compact")


def run_atomic(module, binary, keys, fill, strings=False):
    """Makes the value over `keys` with `fill`, moves every slot holding it with
    MIGRATESLOTS."""
    with RedisServer(module, config=CLUSTER, binary=binary) as source, \
            RedisServer(module, config=CLUSTER, binary=binary) as target:
        make_cluster(source, target)
        # Every main-thread stall of 10 ms or more, by what Valkey was doing.
        for node in (source, target):
            node.client.config_set("latency-monitor-threshold", 10)
        raw = redis.Redis(port=source.port, protocol=2, socket_timeout=600)
        for key in keys:
            fill(raw, key, len(keys))
            raw.execute_command("BF.ADD", key.replace("big", "writes", 1), "first")
        for node in (source, target):
            node.client.execute_command("LATENCY", "RESET")
        slots = sorted({source.client.execute_command("CLUSTER", "KEYSLOT", k) for k in keys})
        ranges = [bound for slot in slots for bound in (slot, slot)]
        ports = [source.port, target.port]
        stop, out = multiprocessing.Event(), multiprocessing.Queue()
        clients = [multiprocessing.Process(target=reader, args=(ports, keys, strings, stop, out)),
                   multiprocessing.Process(target=writer, args=(ports, keys, stop, out)),
                   multiprocessing.Process(target=pinger, args=(target.port, stop, out))]
        for client in clients:
            client.start()
        time.sleep(1)
        start = time.perf_counter()
        source.client.execute_command("CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", *ranges,
                                      "NODE", node_id(target))
        states = []
        while True:
            job = migration_job(source)
            if not states or states[-1][0] != job["state"]:
                states.append((job["state"], round(time.perf_counter() - start, 3)))
            if job["state"] in ("success", "failed", "cancelled"):
                break
            time.sleep(0.002)
        total = time.perf_counter() - start
        time.sleep(1)
        stop.set()
        seen = dict(out.get(timeout=60) for _ in clients)
        for client in clients:
            client.join()
        if job["state"] != "success":
            raise RuntimeError(f"the migration ended {job['state']}: {job['message']}")
        # The writes' keys moved too.
        assert target.client.dbsize() == 2 * len(keys), "not every key moved"
        at = dict(states)
        stalls = {side: {name(entry[0]): entry[3]
                         for entry in node.client.execute_command("LATENCY", "LATEST")}
                  for side, node in (("source", source), ("target", target))}
        return {"keys": len(keys), "slots": len(slots),
                "key_bytes": target.client.memory_usage(keys[0], samples=0),
                "total_s": round(total, 2), "states_s": states, "stalls_ms": stalls,
                "hand_over_ms": round((at["success"] - at["failover-paused"]) * 1000)
                if "failover-paused" in at else None,
                "source_fork_us": int(source.client.info("stats")["latest_fork_usec"]),
                "clients": seen}


def name(event):
    return event.decode() if isinstance(event, bytes) else event


def summary(runs):
    """The worst of each figure over the runs, and the median run's longest write."""
    worst = {who: max(r["clients"][who]["longest_ms"] for r in runs)
             for who in ("readers", "writers", "target")}
    pauses = [r["hand_over_ms"] for r in runs if r["hand_over_ms"] is not None]
    return {"runs": len(runs), "key_bytes": runs[0]["key_bytes"], "longest_ms": worst,
            "median_longest_write_ms": statistics.median(
                r["clients"]["writers"]["longest_ms"] for r in runs),
            "runs_within_100ms": sum(max(r["clients"][who]["longest_ms"] for who in worst) <= 100
                                     for r in runs),
            "hand_over_ms": [min(pauses), max(pauses)] if pauses else None,
            "longest_fork_ms": max(r["source_fork_us"] for r in runs) / 1000,
            "longest_stalls_ms": {
                side: {event: max(r["stalls_ms"][side].get(event, 0) for r in runs)
                       for event in sorted({e for r in runs for e in r["stalls_ms"][side]})}
                for side in ("source", "target")},
            "longest_total_s": max(r["total_s"] for r in runs)}


def atomic_table(result):
    """Markdown: the worst pause per layout over the runs, MIGRATE of the same run beside it."""
    lines = ["| layout | key size | runs within 100 ms | longest read | longest write (median run) "
             "| longest PING to the target | hand-over | fork | moved in | MIGRATE: longest read "
             "| moved in |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in result["layouts"].items():
        a, m = r["atomic"], r.get("migrate")
        pause = "{}–{} ms".format(*a["hand_over_ms"]) if a["hand_over_ms"] else "—"
        moved = (f"| {m['client']['longest_ms']:,.0f} ms | {m['total_s']:.1f} s |" if m
                 else "| — | — |")
        lines.append(f"| {name} | {a['key_bytes'] / 2**20:.1f} MiB "
                     f"| {a['runs_within_100ms']} of {a['runs']} "
                     f"| {a['longest_ms']['readers']:,.0f} ms "
                     f"| {a['longest_ms']['writers']:,.0f} ms ({a['median_longest_write_ms']:,.0f} ms) "
                     f"| {a['longest_ms']['target']:,.0f} ms "
                     f"| {pause} | {a['longest_fork_ms']:,.0f} ms "
                     f"| {a['longest_total_s']:.1f} s " + moved)
    return "\n".join(lines)


def default_server():
    try:
        return subprocess.run(["scripts/install-deps.sh", "--server", "valkey9"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError:
        raise SystemExit("no Valkey 9.1: SERVER=valkey9 scripts/install-deps.sh builds it")


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--server", help="a valkey-server 9 or later (default: install-deps')")
    parser.add_argument("--items", type=int, default=100_000_000)
    parser.add_argument("--parts", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--layouts", default="one,split,control,compact")
    parser.add_argument("--out", default="docs/bench/atomic-migration.json")
    args = parser.parse_args()
    binary = args.server or default_server()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    result = {"machine": describe(), "server": version.strip(), "items": args.items,
              "error_rate": 0.01, "busy_processes": args.busy, "layouts": {}}
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.busy)]
    try:
        measure(args, binary, result)
    finally:
        for spinner in spinners:
            spinner.kill()
    write_result(args.out, result)
    print(atomic_table(result))


def measure(args, binary, result):
    """Every layout's runs, into `result`."""
    split = part_keys("big", args.parts)
    layouts = args.layouts.split(",")
    for layout, name, keys in [("one", "one key", part_keys("big", 1)),
                               ("split", f"split into {args.parts} keys", split)]:
        if layout not in layouts:
            continue
        print(f"== {name}", flush=True)
        runs = [run_atomic(args.bloomrs, binary, keys, synthetic(args.items))
                for _ in range(args.runs)]
        result["layouts"][name] = {
            "atomic": summary(runs), "atomic_runs": runs,
            "migrate": run_migrate(args.bloomrs, args.items, keys, binary=binary)}
        print(result["layouts"][name]["atomic"], flush=True)
    if "control" in layouts:
        # The split layout's slots holding strings the length of its filters.
        with RedisServer(args.bloomrs, binary=binary) as server:
            raw = redis.Redis(port=server.port, protocol=2)
            fill_synthetic(raw, "probe", args.items // args.parts)
            length = raw.memory_usage("probe", samples=0) - 64
        name = f"control: {args.parts} strings of the same length"
        print(f"== {name}", flush=True)
        runs = [run_atomic(args.bloomrs, binary, split, strings_of(length), strings=True)
                for _ in range(args.runs)]
        result["layouts"][name] = {"atomic": summary(runs), "atomic_runs": runs}
        print(result["layouts"][name]["atomic"], flush=True)
    if "compact" in layouts:
        payload = compact_payload(args.bloomrs, binary, args.items)
        name = "one compact key"
        print(f"== {name} ({len(payload):,} bytes of DUMP)", flush=True)
        runs = [run_atomic(args.bloomrs, binary, part_keys("big", 1), restored(payload))
                for _ in range(args.runs)]
        result["layouts"][name] = {"atomic": summary(runs), "atomic_runs": runs}
        print(result["layouts"][name]["atomic"], flush=True)


if __name__ == "__main__":
    main()
