#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the RedisBloom fixtures: every recorded
SCANDUMP (header + chunks, framed as the targets read them) and every DUMP payload; and for
the argument parsers, realistic argument lists of each command (what follows the command
name, NUL-separated)."""
import base64
import json
import os
import struct
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
fixtures = json.load(open(os.path.join(root, "tests/fixtures/redisbloom/fixtures.json")))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "fuzz/corpus")

def blob(data):
    return struct.pack("<I", len(data)) + data

for key, spec in fixtures["keys"].items():
    kind = "bloom" if spec["type"] == "bf" else "cuckoo"
    chunks = [(it, base64.b64decode(data)) for it, data in spec["scandump"]]
    # Keep seeds small: the header and at most the first 64 KiB of chunks.
    framed = blob(chunks[0][1])
    budget = 1 << 16
    for it, data in chunks[1:]:
        data = data[:budget]
        budget -= len(data)
        framed += struct.pack("<q", it) + blob(data)
        if budget <= 0:
            break
    name = key.replace(":", "_")
    for target, content in ((f"{kind}_chunks", framed), (f"{kind}_rdb", base64.b64decode(spec["dump"]))):
        os.makedirs(os.path.join(out, target), exist_ok=True)
        with open(os.path.join(out, target, name), "wb") as f:
            f.write(content)
# The args target puts each command name in front of the same arguments in turn.
ARGUMENT_LISTS = {
    "bf_reserve": ["k 0.01 100", "k 0.001 1000 EXPANSION 4", "k 0.01 100 NONSCALING",
                   "k 0.01 100 NONSCALING EXPANSION", "k 0.5 9223372036854775807 expansion 1"],
    "bf_insert": ["k ITEMS a b", "k CAPACITY 1000 ERROR 0.001 EXPANSION 4 ITEMS c",
                  "k NOCREATE NONSCALING ITEMS a", "k cap 10 cap 20 eRR 0.1 exp 3 i a",
                  "k nocreateXYZ nonsense ixx ITEMS CAPACITY"],
    "bf_info": ["k", "k capacity", "k EXPANSION", "k Items"],
    "bf_chunks": ["k 0", "k 17", "k 1 header-bytes", "k -9223372036854775808 x"],
    "cf_reserve": ["k 1000", "k 1000 BUCKETSIZE 4 MAXITERATIONS 50 EXPANSION 2",
                   "k 510 bucketsize 255 maxiterations 65535 expansion 32768",
                   "k 100 x MAXITERATIONS", "EXPANSION 100"],
    "cf_insert": ["k ITEMS a", "k CAPACITY 4 ITEMS a b", "k NOCREATE CAPACITY 10 ITEMS a",
                  "k nx cx 100 iTeMsX ITEMS NOCREATE"],
    "cf_chunks": ["k 0", "k 1 0123456789012345678901234567890123456", "k 1029 chunk"],
}
os.makedirs(os.path.join(out, "args"), exist_ok=True)
for command, lists in ARGUMENT_LISTS.items():
    for n, words in enumerate(lists):
        with open(os.path.join(out, "args", f"{command}_{n}"), "wb") as f:
            f.write(b"\0".join(word.encode() for word in words.split(" ")))
print(f"seeds written to {out}")
