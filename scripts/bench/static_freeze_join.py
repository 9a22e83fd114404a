"""A replica that joins a static set's freeze mid-way (issue 33): the longest wait a client
sees on the primary, on a replica attached from the start, and on one attached by a full sync
while the frozen table is being propagated, from the moment the propagation goes on until
every replica holds the frozen value.

The freeze propagates its table in steps (BF.FREEZE key STAGE/CHUNK/COMMIT, 4 MiB each), one
per event-loop turn, so a replica can only join mid-way by chance. This benchmark therefore
loads the fault-injection build (`cargo build --release --features fault-injection
--target-dir target/fault-injection`), whose `BF.__FAULT FREEZE <step-bytes> <hold-after>`
holds the freeze after --hold-after steps of the usual 4 MiB: the late replica then attaches
(a full sync: the builder and the stage as far as it went), the freeze is let go, and the
probers (one client a server sending PING and BF.EXISTS of a small filter back to back) time
the rest. A late replica that had to build the table at COMMIT (a stage missing) would wait
for the construction (about 0.23 s per million items here); its log says so, and the row
reports it (`late_replica_rebuilt`).

Usage: static_freeze_join.py --bloomrs target/fault-injection/release/libbloomrs.so
                             [--items 10000000,...] [--hold-after 1] [--out FILE]
"""

import sys
import threading
import time

from commandstats import load_items
from machine import describe, write_result
from server import RedisServer, module_parser
from static import Prober, unhurried, wait_synced

STEP_BYTES = 4 << 20
REBUILT = "without its whole stage"


def stage_line(server, key):
    lines = server.client.execute_command("BF.DEBUG", key)
    return next((line for line in lines if line.startswith("stage:")), None)


def wait_stage(server, key, steps, timeout_s=3600):
    want = f"stage:{steps * STEP_BYTES} "
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = stage_line(server, key)
        if line and line.startswith(want):
            return line
        time.sleep(0.05)
    raise RuntimeError(f"the freeze did not reach {want}")


def log_of(server):
    with open(f"{server.dir}/redis.log", encoding="utf-8", errors="replace") as log:
        return log.read()


def join(module, items, hold_after):
    debug = ["--enable-debug-command", "yes"]
    with RedisServer(module, config=debug) as primary, \
            RedisServer(module, config=debug) as early, \
            RedisServer(module, config=debug) as late:
        early.client.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        primary.client.execute_command("BF.ADD", "probe", "x")
        primary.client.execute_command("BF.RESERVE", "f", 0.01, items, "STATIC")
        loading = time.monotonic()
        load_items(primary, ["BF.MADD", "f"], 0, items)
        print(f"{items} items loaded in {time.monotonic() - loading:.0f} s", file=sys.stderr,
              flush=True)
        wait_synced(primary, early)
        primary.client.execute_command("BF.__FAULT", "FREEZE", STEP_BYTES, hold_after)
        freezer = unhurried(primary)
        result = {}

        def freeze():
            result["reply"] = freezer.execute_command("BF.FREEZE", "f")

        thread = threading.Thread(target=freeze, daemon=True)
        started = time.monotonic()
        thread.start()
        line = wait_stage(primary, "f", hold_after)
        held_s = time.monotonic() - started
        syncing = time.monotonic()
        late.client.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        wait_synced(primary, late, timeout_s=3600)
        full_sync_s = time.monotonic() - syncing
        late_stage = stage_line(late, "f")
        probers = [Prober(primary), Prober(early), Prober(late)]
        for prober in probers:
            prober.start()
        time.sleep(0.5)
        going_on = time.monotonic()
        primary.client.execute_command("BF.__FAULT", "FREEZE", 0, -1)
        thread.join()
        frozen_s = time.monotonic() - going_on
        wait_synced(primary, early)
        wait_synced(primary, late)
        replicated_s = time.monotonic() - going_on
        time.sleep(0.5)
        for prober in probers:
            prober.stop.set()
            prober.join()
        digests = [server.client.execute_command("DEBUG", "DIGEST-VALUE", "f")
                   for server in (primary, early, late)]
        reply = result.get("reply")
        row = {"items": items,
               "reply": reply.decode() if isinstance(reply, bytes) else str(reply),
               "steps_before_the_join": hold_after, "stage_at_the_join": line,
               "late_replica_stage_after_its_sync": late_stage,
               "construction_and_first_steps_seconds": round(held_s, 3),
               "late_replica_full_sync_seconds": round(full_sync_s, 3),
               "rest_of_the_freeze_seconds": round(frozen_s, 3),
               "every_replica_holds_it_after_seconds": round(replicated_s, 3),
               "longest_wait_ms_primary": round(1000 * probers[0].longest, 2),
               "longest_wait_ms_early_replica": round(1000 * probers[1].longest, 2),
               "longest_wait_ms_late_replica": round(1000 * probers[2].longest, 2),
               "calls": [prober.calls for prober in probers],
               "replicas_identical": digests[0] == digests[1] == digests[2],
               "late_replica_rebuilt": REBUILT in log_of(late)}
        print(row, file=sys.stderr, flush=True)
        return row


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--items", default="10000000")
    parser.add_argument("--hold-after", type=int, default=1)
    parser.add_argument("--out", default="docs/bench/static-freeze-join.json")
    args = parser.parse_args()
    result = {"machine": describe(),
              "rows": [join(args.bloomrs, int(n), args.hold_after)
                       for n in args.items.split(",") if n]}
    write_result(args.out, result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
