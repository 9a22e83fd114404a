"""Crafted static builders: a BF.LOADCHUNK chunk and a RESTORE payload of N hashes that share
their top 22 bits, sent in decreasing order, next to the same hashes in increasing order.

A primary with one replica attached. For each N of --items and each order, the script
  loadchunk  creates a builder from a genuine header (BF.LOADCHUNK key 1 <header of an empty
             builder>) and sends the N hashes as one chunk (BF.LOADCHUNK key 2 <N*8 bytes>)
  restore    RESTOREs a DUMP payload of a builder holding the N hashes, with its hashes
             written in that order (the DUMP of the chunk-built key, its hash buffer reordered
             and its CRC recomputed; the servers run with --rdbcompression no so the buffer is
             stored raw)
and reports the command's server time on the primary and on the replica (INFO commandstats
after a CONFIG RESETSTAT: the one call's usec), the client's round trip, BF.CARD and MEMORY
USAGE of the key on both.

Usage: static_crafted.py [--bloomrs PATH] [--items 100000,200000] [--out FILE]
"""

import struct
import sys
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from machine import describe, write_result
from server import RedisServer, module_parser
from static import wait_synced

SHARED_BITS = 22
PREFIX = 0x2A5F17  # any 22-bit prefix


def crafted_hashes(n):
    """n distinct hashes sharing their top SHARED_BITS bits, in increasing order."""
    low_bits = 64 - SHARED_BITS
    step = (1 << low_bits) // (n + 1)
    return [(PREFIX << low_bits) | (step * (i + 1)) for i in range(n)]


def pack(hashes):
    return b"".join(struct.pack("<Q", h) for h in hashes)


def _crc64_table():
    poly = 0x95AC9329AC4BC9B5  # Redis's crc64 (Jones), reflected
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


CRC64_TABLE = _crc64_table()


def crc64(data):
    crc = 0
    for byte in data:
        crc = CRC64_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def reordered_dump(dump, increasing, wanted):
    """`dump` (a DUMP payload holding `increasing` as one raw buffer) with that buffer replaced
    by `wanted` and its CRC64 trailer recomputed."""
    at = dump.find(increasing)
    if at < 0:
        raise RuntimeError("the hashes are not one raw buffer of the DUMP payload")
    body = dump[:at] + wanted + dump[at + len(increasing):-8]
    return body + struct.pack("<Q", crc64(body))


def command_usec(server, name):
    stats = server.client.info("commandstats").get(f"cmdstat_{name}", {})
    return int(stats.get("usec", 0)), int(stats.get("calls", 0))


def measure(primary, replica, key, name, send):
    wait_synced(primary, replica)
    for s in (primary, replica):
        s.client.config_resetstat()
    start = time.perf_counter()
    reply = send()
    round_trip = time.perf_counter() - start
    wait_synced(primary, replica)
    row = {"reply": str(reply), "round_trip_ms": round(round_trip * 1000, 2)}
    for role, s in (("primary", primary), ("replica", replica)):
        usec, calls = command_usec(s, name)
        row[f"{role}_ms"] = round(usec / 1000, 2)
        row[f"{role}_calls"] = calls
        row[f"{role}_card"] = s.client.execute_command("BF.CARD", key)
        row[f"{role}_memory_usage"] = s.client.execute_command("MEMORY", "USAGE", key)
    return row


def run(module, counts):
    config = ["--rdbcompression", "no", "--proto-max-bulk-len", "1gb"]
    rows = []
    with RedisServer(module, config=config) as primary, \
            RedisServer(module, config=config) as replica:
        replica.client.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        p = primary.client
        # Bytes as they are, and no retry of a slow command (redis-py retries on a timeout).
        raw = redis.Redis(port=primary.port, protocol=2, socket_timeout=None,
                          retry=Retry(NoBackoff(), 0))
        p.execute_command("BF.RESERVE", "empty", 0.01, 100, "STATIC")
        _, header = raw.execute_command("BF.SCANDUMP", "empty", 0)
        wait_synced(primary, replica)
        for n in counts:
            hashes = crafted_hashes(n)
            increasing = pack(hashes)
            orders = {"increasing": increasing, "decreasing": pack(reversed(hashes))}
            for order, chunk in orders.items():
                key = f"chunk:{n}:{order}"
                raw.execute_command("BF.LOADCHUNK", key, 1, header)
                row = measure(primary, replica, key, "bf.loadchunk",
                              lambda: raw.execute_command("BF.LOADCHUNK", key, 2, chunk))
                rows.append({"items": n, "path": "loadchunk", "order": order, **row})
                print(rows[-1], file=sys.stderr, flush=True)
            dump = raw.execute_command("DUMP", f"chunk:{n}:increasing")
            for order, chunk in orders.items():
                key = f"restore:{n}:{order}"
                payload = reordered_dump(dump, increasing, chunk)
                row = measure(primary, replica, key, "restore",
                              lambda: raw.execute_command("RESTORE", key, 0, payload))
                rows.append({"items": n, "path": "restore", "order": order, **row})
                print(rows[-1], file=sys.stderr, flush=True)
            p.flushall()
            wait_synced(primary, replica)
    return rows


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--items", default="100000,200000")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    counts = [int(x) for x in args.items.split(",") if x]
    result = {"machine": describe(), "shared_bits": SHARED_BITS, "rows": run(args.bloomrs, counts)}
    if args.out:
        write_result(args.out, result)
    for row in result["rows"]:
        print(f"{row['path']:9} {row['items']:>7} {row['order']:10} primary {row['primary_ms']:>8} ms"
              f"  replica {row['replica_ms']:>8} ms  memory {row['primary_memory_usage']:>10}"
              f" / {row['replica_memory_usage']:>10}  card {row['primary_card']}")


if __name__ == "__main__":
    main()
