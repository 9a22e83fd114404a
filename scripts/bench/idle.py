"""Idle users: MEMORY USAGE of every growing kind holding 0, 1 and 10 items, beside a Redis SET
of the same items, on each server given.

Every filter is created for 100 items at 1 % (`BF.RESERVE k 0.01 100 ...`, `CF.RESERVE k 100`,
valkey-bloom's by `BF.INSERT k CAPACITY 100 TIGHTENING 0.5`), with `bf.bf-sparse-max-bytes 2kb`
set, and given the items `news:100000001` ... (one `BF.MADD`/`CF.ADD` per item). The SET holds
the same items (`SADD`), on the same server: a SET's size depends on the server (a listpack from
Redis 7.2 and Valkey 8, a hash table before), so each row compares on one server. Keys are
named alike (`k0`, `k1`, `k10`), so the key's own bytes are the same on both sides.

Usage: idle.py [--bloomrs PATH] [--servers BINARY ...] [--out FILE]
"""

from machine import describe, write_result
from server import RedisServer, module_parser

COUNTS = (0, 1, 10)
KINDS = {
    "plain (sparse start)": ["BF.RESERVE", "{key}", "0.01", "100"],
    "COMPACT": ["BF.RESERVE", "{key}", "0.01", "100", "COMPACT"],
    "COUNTING": ["BF.RESERVE", "{key}", "0.01", "100", "COUNTING"],
    "BLOCKED": ["BF.RESERVE", "{key}", "0.01", "100", "BLOCKED"],
    "WINDOW": ["BF.RESERVE", "{key}", "0.01", "100", "WINDOW", "2592000"],
    "COMPACT WINDOW": ["BF.RESERVE", "{key}", "0.01", "100", "COMPACT", "WINDOW", "2592000"],
    "valkey-bloom": ["BF.INSERT", "{key}", "CAPACITY", "100", "TIGHTENING", "0.5"],
    "cuckoo": ["CF.RESERVE", "{key}", "100"],
}


def items(n):
    return [f"news:{100000001 + i}" for i in range(n)]


def measure(client):
    client.config_set("bf.bf-sparse-max-bytes", "2kb")
    rows = {}
    for n in COUNTS:
        if n:
            client.sadd(f"set{n}", *items(n))
    sets = {n: client.memory_usage(f"set{n}", samples=0) if n else None for n in COUNTS}
    for kind, create in KINDS.items():
        row = {}
        for n in COUNTS:
            key = f"k{n}"
            client.delete(key)
            client.execute_command(*(a.format(key=key) for a in create))
            add = "CF.ADD" if kind == "cuckoo" else "BF.ADD"
            for item in items(n):
                client.execute_command(add, key, item)
            row[n] = {"usage": client.memory_usage(key, samples=0),
                      "type": client.type(key)}
            client.delete(key)
        rows[kind] = row
    return {"set": sets, "kinds": rows}


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--servers", nargs="+", default=["redis-server", "valkey-server"])
    parser.add_argument("--out", default="docs/bench/idle.json")
    args = parser.parse_args()
    result = {"machine": describe(), "servers": {}}
    for binary in args.servers:
        with RedisServer(args.bloomrs, binary=binary) as server:
            version = server.client.info("server")
            name = f"{version.get('server_name', 'redis')} {version['redis_version']}"
            if "valkey_version" in version:
                name = f"valkey {version['valkey_version']}"
            result["servers"][name] = measure(server.client)
    for name, entry in result["servers"].items():
        sets = entry["set"]
        print(f"{name}: SET of 1 item {sets[1]} B, of 10 items {sets[10]} B")
        for kind, row in entry["kinds"].items():
            cells = ", ".join(f"{n}: {row[n]['usage']} ({row[n]['type']})" for n in COUNTS)
            print(f"  {kind:>22}: {cells}")
    write_result(args.out, result)


if __name__ == "__main__":
    main()
