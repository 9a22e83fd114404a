#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the RedisBloom fixtures: every recorded
SCANDUMP (header + chunks, framed as the targets read them) and every DUMP payload."""
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
print(f"seeds written to {out}")
