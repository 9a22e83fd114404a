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

def uint(v):
    """An RDB unsigned field as a DUMP payload holds it."""
    return b"\x02\x81" + struct.pack(">Q", v)

def double(v):
    """An RDB double field."""
    return b"\x04" + struct.pack("<d", v)

def buffer(data):
    """An RDB string buffer field."""
    return b"\x05\x80" + struct.pack(">I", len(data)) + data

def write_seeds(target, name, header, chunk, fields):
    """A kind's two seeds: `chunks_<name>` (mode byte 1: the LOADCHUNK header and its one
    chunk, at iterator 1 + its length) and `rdb_<name>` (mode byte 0: a DUMP payload of
    `fields`)."""
    seeds = {
        f"chunks_{name}": b"\x01" + blob(header) + struct.pack("<q", 1 + len(chunk)) + blob(chunk),
        f"rdb_{name}": b"\x00\x07\x01" + b"".join(fields) + b"\x00",
    }
    os.makedirs(os.path.join(out, target), exist_ok=True)
    for seed, content in seeds.items():
        with open(os.path.join(out, target, seed), "wb") as f:
            f.write(content)

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

def windowed_seeds():
    """Windowed filters of one empty generation (the decoders' own formats, built here)."""
    import math
    for window_ms, g, capacity, error, scaling in ((60_000, 4, 100, 0.01, True),
                                                   (3_000, 2, 10, 0.1, False)):
        cap, err = -(-capacity // g), error / g
        link_error = err / 2 if scaling else err
        bpe = abs(-(math.log(link_error) / 0.480453013918201))
        hashes = math.ceil(0.693147180559945 * bpe)
        nbytes = -(-max(int(cap * bpe), 1) // 64) * 8
        options = 5 | (0 if scaling else 8)
        slot = 1_795_000_000_000 * g // window_ms
        link = struct.pack("<QQQddIQB", nbytes, nbytes * 8, 0, link_error, bpe, hashes, cap, 0)
        chain = struct.pack("<QIII", 0, 1, options, 2) + link
        header = b"bloomrsW" + struct.pack("<IQIQdIIQI", 1, window_ms, g, capacity, error, 2,
                                           0 if scaling else 1, slot, 1)
        header += struct.pack("<QI", slot, len(chain)) + chain
        fields = [uint(window_ms), uint(g), uint(capacity), double(error),
                  uint(2), uint(0 if scaling else 1), uint(slot), uint(1), uint(slot),
                  uint(0), uint(1), uint(options), uint(2), uint(cap),
                  double(link_error), uint(hashes), double(bpe), uint(nbytes * 8), uint(0),
                  buffer(bytes(nbytes)), uint(0)]
        write_seeds("windowed", f"w{window_ms}_g{g}", header, bytes(nbytes), fields)

def sparse_seeds():
    """Sparse filters holding three hash pairs (the decoders' own formats, built here)."""
    pairs = sorted([(1, 2), (1, 3), (0xfedcba9876543210, 7)])
    hashes = b"".join(struct.pack("<QQ", a, b) for a, b in pairs)
    for capacity, error, growth, options in ((1000, 0.01, 10, 5), (100, 0.1, 2, 13)):
        header = b"bloomrsS" + struct.pack("<IQdII", 1, capacity, error, growth, options)
        fields = [uint(capacity), double(error), uint(growth), uint(options), buffer(hashes)]
        write_seeds("sparse", f"c{capacity}_o{options}", header, hashes, fields)

def compact_seeds():
    """Empty compact filters of the smallest table (the decoders' own formats, built here)."""
    # (error, slot width at generation 0, flags)
    for error, width, flags in ((0.01, 12, 0), (0.001, 15, 1)):
        table = bytes(64 * (width + 2) // 8 + 7)
        header = b"bloomrsP" + struct.pack("<IdIIIIQQ", 1, error, 6, 0, width, flags, 0, 0)
        fields = [double(error), uint(6), uint(0), uint(width), uint(flags),
                  uint(0), uint(0), uint(len(table)), buffer(table)]
        write_seeds("compact", f"w{width}_f{flags}", header, table, fields)

def counting_seeds():
    """Counting filters of one empty link (the decoders' own formats, built here)."""
    import math
    for capacity, error, scaling in ((100, 0.01, True), (10, 0.1, False)):
        link_error = error / 2 if scaling else error
        bpe = abs(-(math.log(link_error) / 0.480453013918201))
        hashes = math.ceil(0.693147180559945 * bpe)
        bits = -(-max(int(capacity * bpe), 1) // 64) * 64
        nbytes = bits // 2
        options = 5 | (0 if scaling else 8)
        link = struct.pack("<QQQddIQB", nbytes, bits, 0, link_error, bpe, hashes, capacity, 0)
        header = b"bloomrsC" + struct.pack("<IIQ", 1, 4, 0) + struct.pack("<QIII", 0, 1, options, 2) + link
        fields = [uint(4), uint(0), uint(0), uint(1), uint(options), uint(2), uint(capacity),
                  double(link_error), uint(hashes), double(bpe), uint(bits), uint(0),
                  buffer(bytes(nbytes)), uint(0)]
        write_seeds("counting", f"c{capacity}", header, bytes(nbytes), fields)

for seeds in (windowed_seeds, sparse_seeds, compact_seeds, counting_seeds):
    seeds()

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

def model_seeds():
    """The model targets' seeds: each stored target's seeds as the value to start from (origin
    byte 1, the value length-prefixed, with the mode byte the kind's decoder reads), and new
    values of a few shapes (origin byte 0, shape and variant bytes), each followed by the same
    mix of operations."""
    ops = bytes(range(256)) + bytes([0x04, 0x20, 0x06, 0x08, 0x0b, 0x0c, 0x05, 0x40, 0x0d, 0x10])
    sources = {
        "model_chain": (("bloom_chunks", b"\x01"), ("bloom_rdb", b"\x00")),
        "model_cuckoo": (("cuckoo_chunks", b"\x01"), ("cuckoo_rdb", b"\x00")),
        "model_windowed": (("windowed", b""),),
        "model_sparse": (("sparse", b""),),
        "model_counting": (("counting", b""),),
        "model_compact": (("compact", b""),),
        "model_compact_counting": (("compact", b""),),
    }
    for target, kinds in sources.items():
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for source, mode in kinds:
            folder = os.path.join(out, source)
            for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                value = mode + open(os.path.join(folder, name), "rb").read()
                with open(os.path.join(out, target, f"{source}_{name}"), "wb") as f:
                    f.write(b"\x01" + blob(value) + ops)
        for shape in (0x00, 0x01, 0x02, 0x25, 0x46, 0x8b):
            with open(os.path.join(out, target, f"new_{shape:02x}"), "wb") as f:
                f.write(bytes([0, shape, shape >> 3]) + ops)

model_seeds()
