"""Big values do not block: the longest single command on a 100M-item filter of each kind.

For a filter of --items items (default 100,000,000) at 1 % of each kind the module under test
can hold — RedisBloom's chain always, BLOCKED and COMPACT when BF.RESERVE accepts the keyword —
and for RedisBloom's chain (--redisbloom PATH, a build of RedisBloom 2.8), the server time
(SLOWLOG, microseconds inside the command) of:
    create      BF.RESERVE key 0.01 <items> [KIND]
    grow        the BF.ADD that makes the full filter grow (a chain's next link)
    scandump    BF.SCANDUMP of the first data chunk
    dump        DUMP of the whole value
    copy        COPY to a new key (RedisBloom 2.8 has no COPY for its types: "n/a")
    unlink      UNLINK of a copy
    del-lazy    DEL of a copy with lazyfree-lazy-user-del yes
    del-sync    DEL of a copy with lazyfree-lazy-user-del no
and, for the kinds filled by adds, the longest BF.MADD of the fill (where a kind that doubles
pays for its doubling). All but creation and growth run --rounds times (default 3) on the
full filter, the median reported next to every round; the client's wall time of each command
is stored too.

The full chain is made the quick way on both modules: BF.SCANDUMP's header of a filter reserved
for <items>, with its item counts set to the capacity, then BF.LOADCHUNK of random bytes (half
the bits set, as in a full filter at its optimal hash count). Every page is then written, as in
a filter that took its items one by one; the next new item makes it grow. Kinds without that
header (BLOCKED, COMPACT) are filled by BF.MADD of <items> distinct ids. A copy of the value for
UNLINK and DEL is made by COPY, or by RESTORE of the DUMP where COPY is refused. Each
(module, kind) runs on a fresh server. The machine is shared and has 2 cores: figures are of one
run; the orders of magnitude, not the last digit, are what to read.

Usage: bigvalues.py [--bloomrs PATH] [--redisbloom PATH] [--items N] [--kinds K,...] [--out FILE]
"""

import os
import statistics
import struct
import time

import redis

from machine import describe, write_result
from server import RedisServer, module_parser
from tables import bigvalues_table

ERROR = 0.01
BATCH = 1000
PIPELINE = 20
# SCANDUMP header: size u64, links u32, options u32, growth u32, then per link bytes u64,
# bits u64, size u64, ... (RedisBloom's packed little-endian dumpedChainHeader).
HEADER_FIXED = 20
LINK_SIZE_AT = 16


def command_of(entry):
    """A SLOWLOG entry's command line, lower case (redis-py gives it as bytes)."""
    command = entry["command"]
    return (command.decode(errors="replace") if isinstance(command, bytes) else command).lower()


def timed(client, *args):
    """Runs one command; its server time (SLOWLOG, us), wall time (us) and reply."""
    client.slowlog_reset()
    start = time.perf_counter()
    reply = client.execute_command(*args)
    wall = (time.perf_counter() - start) * 1e6
    name = str(args[0]).lower()
    for entry in client.slowlog_get(8):
        if command_of(entry).startswith(name):
            return {"us": entry["duration"], "wall_us": round(wall)}, reply
    return {"us": None, "wall_us": round(wall)}, reply


def supports(client, kind):
    """Whether BF.RESERVE makes a kind of its own with this keyword (a server that does not
    know it may ignore it and make a chain, as RedisBloom ignores unknown trailing words)."""
    try:
        client.execute_command("BF.RESERVE", "probe-chain", ERROR, 1000)
        client.execute_command("BF.RESERVE", "probe-kind", ERROR, 1000, kind)
    except redis.ResponseError:
        return False
    made = client.type("probe-kind") != client.type("probe-chain")
    client.delete("probe-chain", "probe-kind")
    return made


def ident(index):
    return b"%016x" % ((index * 0x9E3779B97F4A7C15) & (2**64 - 1))


def fill_synthetic(client, key, items):
    """A full chain at `key`: the header of a reserved one, counted full, and random bits."""
    client.execute_command("BF.RESERVE", "template", ERROR, items)
    it, header = client.execute_command("BF.SCANDUMP", "template", 0)
    chunks = []
    while True:
        it, data = client.execute_command("BF.SCANDUMP", "template", it)
        if it == 0:
            break
        chunks.append((it, len(data)))
    client.delete("template")
    header = bytearray(header)
    struct.pack_into("<Q", header, 0, items)
    struct.pack_into("<Q", header, HEADER_FIXED + LINK_SIZE_AT, items)
    client.execute_command("BF.LOADCHUNK", key, 1, bytes(header))
    for it, size in chunks:
        client.execute_command("BF.LOADCHUNK", key, it, os.urandom(size))
    return {"fill": "synthetic full chain (LOADCHUNK)"}


def fill_by_adds(client, key, items):
    """`items` distinct ids into `key` by pipelined BF.MADD; the longest MADD (SLOWLOG)."""
    # Every MADD is logged (threshold 0) and kept: the longest is the one that doubled.
    client.config_set("slowlog-max-len", items // BATCH + 1)
    client.slowlog_reset()
    start = time.perf_counter()
    done = 0
    while done < items:
        pipe = client.pipeline(transaction=False)
        for _ in range(PIPELINE):
            if done >= items:
                break
            end = min(done + BATCH, items)
            pipe.execute_command("BF.MADD", key, *[ident(i) for i in range(done, end)])
            done = end
        pipe.execute()
    longest = max((e["duration"] for e in client.slowlog_get(items // BATCH + 1)
                   if command_of(e).startswith("bf.madd")), default=None)
    client.config_set("slowlog-max-len", 128)
    return {"fill": f"BF.MADD of {BATCH} ids", "fill_s": round(time.perf_counter() - start, 1),
            "longest_madd_us": longest}


def links(client, key):
    info = [f.decode() if isinstance(f, bytes) else f for f in
            client.execute_command("BF.INFO", key)]
    fields = dict(zip(info[::2], info[1::2]))
    return fields["Number of filters"], fields["Size"]


def grow(client, key):
    """Adds new ids one command at a time until the filter grows; that add's time."""
    before = links(client, key)
    for attempt in range(1000):
        result, _ = timed(client, "BF.ADD", key, b"grow-%d" % attempt)
        if links(client, key) != before:
            result["adds_tried"] = attempt + 1
            return result
    return {"us": None, "note": "did not grow within 1000 adds"}


def settle(client):
    """Waits until the background thread has freed what UNLINK or a lazy DEL left to it, so
    that it does not compete with the next measurement."""
    while int(client.info("memory")["lazyfree_pending_objects"]):
        time.sleep(0.01)


def copy_of(client, key, to, payload):
    """A copy of `key` at `to`: COPY, or RESTORE of its DUMP where COPY is refused."""
    try:
        if client.execute_command("COPY", key, to):
            return
    except redis.ResponseError:
        pass
    client.execute_command("RESTORE", to, 0, payload)


def once(c):
    """One round of the measurements on the full filter `big` (all but creation and growth)."""
    out = {}
    it, _ = c.execute_command("BF.SCANDUMP", "big", 0)
    out["scandump"], (_, chunk) = timed(c, "BF.SCANDUMP", "big", it)
    out["scandump"]["chunk_bytes"] = len(chunk)
    out["dump"], payload = timed(c, "DUMP", "big")
    out["dump"]["bytes"] = len(payload)
    try:
        out["copy"], _ = timed(c, "COPY", "big", "copy")
        c.delete("copy")
    except redis.ResponseError as e:
        out["copy"] = {"us": None, "error": str(e)}
    for name, command, lazy in [("unlink", "UNLINK", "no"), ("del-lazy", "DEL", "yes"),
                                ("del-sync", "DEL", "no")]:
        settle(c)
        copy_of(c, "big", "c", payload)
        c.config_set("lazyfree-lazy-user-del", lazy)
        out[name], _ = timed(c, command, "c")
    settle(c)
    return out


def median_of(runs):
    """Per command: the median server time of the rounds, with every round's figures."""
    out = {}
    for name in runs[0]:
        times = [r[name]["us"] for r in runs if r[name]["us"] is not None]
        out[name] = dict(runs[0][name], us=statistics.median(times) if times else None,
                         rounds_us=[r[name]["us"] for r in runs])
    return out


def measure(module, kind, items, rounds):
    """Every figure of tables.BIG_COMMANDS for one kind on a fresh server with `module`."""
    with RedisServer(module) as server:
        c = redis.Redis(port=server.port, protocol=2)
        c.config_set("slowlog-log-slower-than", 0)
        kind_args = [kind] if kind else []
        out = {}
        out["create"], _ = timed(c, "BF.RESERVE", "created", ERROR, items, *kind_args)
        c.delete("created")
        if kind:
            c.execute_command("BF.RESERVE", "big", ERROR, items, *kind_args)
            out["filled"] = fill_by_adds(c, "big", items)
        else:
            out["filled"] = fill_synthetic(c, "big", items)
        out["memory_usage"] = c.memory_usage("big", samples=0)
        out.update(median_of([once(c) for _ in range(rounds)]))
        # Last: growing changes the filter the other rounds measure.
        out["grow"] = grow(c, "big")
        return out


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--redisbloom", default=None, help="a RedisBloom 2.8 redisbloom.so")
    parser.add_argument("--items", type=int, default=100_000_000)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the measurements after the fill (medians)")
    parser.add_argument("--out", default="docs/bench/bigvalues.json")
    parser.add_argument("--kinds", default=None,
                        help="only these bloomrs kinds, comma-separated (chain,BLOCKED,COMPACT)")
    args = parser.parse_args()
    result = {"machine": describe(), "items": args.items, "error_rate": ERROR,
              "unit": "us of server time (SLOWLOG)", "filters": {}}
    with RedisServer(args.bloomrs) as server:
        kinds = [k for k in ["BLOCKED", "COMPACT"] if supports(server.client, k)]
    if args.kinds:
        wanted = args.kinds.split(",")
        kinds = [k for k in [None] + kinds if (k or "chain") in wanted]
    else:
        kinds = [None] + kinds
    for kind in kinds:
        name = f"bloomrs {kind or 'chain'}"
        print(f"== {name}", flush=True)
        result["filters"][name] = measure(args.bloomrs, kind, args.items, args.rounds)
        print(result["filters"][name], flush=True)
    if args.redisbloom:
        print("== RedisBloom 2.8 chain", flush=True)
        result["filters"]["RedisBloom chain"] = measure(args.redisbloom, None, args.items,
                                                        args.rounds)
        print(result["filters"]["RedisBloom chain"], flush=True)
    write_result(args.out, result)
    print(bigvalues_table(result))


if __name__ == "__main__":
    main()
