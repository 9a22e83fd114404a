#!/usr/bin/env python3
"""Every kind of filter from redis-py, as docs/clients.md shows it: redis-py's `bf()` helpers
for what RedisBloom has, `execute_command` for the keywords and commands bloomrs adds.
Run against a server with the module: `every_kind.py PORT`; exits non-zero on any difference.
tests/clients.rs runs it where redis-py is installed."""
import sys

import redis


def check(what, got, want):
    if got != want:
        raise SystemExit(f"{what}: got {got!r}, want {want!r}")


def main(port):
    r = redis.Redis(port=port)
    r.flushall()
    # RedisBloom's own kinds, through redis-py's helpers.
    check("reserve", r.bf().create("plain", 0.01, 1000), True)
    check("madd", r.bf().madd("plain", "a", "b"), [1, 1])
    check("mexists", r.bf().mexists("plain", "a", "z"), [1, 0])
    check("cf", r.cf().create("cuckoo", 1000), True)
    check("cf add", r.cf().add("cuckoo", "a"), 1)
    check("cf del", r.cf().delete("cuckoo", "a"), 1)
    # bloomrs's kinds: the keyword after BF.RESERVE's arguments.
    for key, words in [
        ("compact", ["COMPACT"]),
        ("counting", ["COUNTING"]),
        ("compact_counting", ["COMPACT", "COUNTING"]),
        ("blocked", ["BLOCKED"]),
        ("windowed", ["WINDOW", "2592000"]),
        ("static", ["STATIC"]),
    ]:
        check(key, r.execute_command("BF.RESERVE", key, 0.01, 1000, *words), True)
        check(key + " add", r.bf().add(key, "a"), 1)
        check(key + " exists", r.bf().exists(key, "a"), 1)
        check(key + " card", r.execute_command("BF.CARD", key), 1)
    # Deletes, where the kind has them.
    check("del", r.execute_command("BF.DEL", "counting", "a"), 1)
    check("mdel", r.execute_command("BF.MDEL", "compact_counting", "a", "b"), [1, 0])
    # A static set frozen, then read; adds are refused.
    check("freeze", r.execute_command("BF.FREEZE", "static"), b"OK")
    check("frozen exists", r.bf().exists("static", "a"), 1)
    try:
        r.bf().add("static", "b")
        raise SystemExit("an add to a frozen set was accepted")
    except redis.ResponseError as e:
        check("frozen add", str(e).startswith("filter is frozen"), True)
    # The operator's route: a setting makes plain BF.ADD create the kind.
    r.config_set("bf.bf-compact", "yes")
    check("implicit", r.bf().add("implicit", "a"), 1)
    check("type", r.type("implicit"), b"bloomrsCP")
    r.config_set("bf.bf-compact", "no")
    # A bulk load: refused items come back inside the list, not raised.
    r.config_set("bf.max-filter-bytes", "1024")
    r.execute_command("BF.RESERVE", "small", 0.01, 1, "EXPANSION", 1000)
    replies = r.bf().madd("small", "a", "b")
    refused = [x for x in replies if isinstance(x, redis.ResponseError)]
    check("refused", len(refused), 1)
    r.config_set("bf.max-filter-bytes", "4gb")
    print("every kind answered as shown")


if __name__ == "__main__":
    main(int(sys.argv[1]))
