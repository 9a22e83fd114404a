"""Instructions per command on the server, counted by valgrind's callgrind: repeatable where
timings are not (a shared machine's other tenants change the time of a command, never its
instruction count), so the fixed per-command cost of bloomrs, RedisBloom and GETBIT can be
compared exactly.

Each module gets its own server under `valgrind --tool=callgrind --instr-atstart=no`, holding
small filters (--items items at 1 %, in the caches: instructions, not misses, are what is
counted) and a bitmap. For every case the counters are zeroed, redis-benchmark sends --calls
pipelined calls from one client, the counters are dumped and their total divided by the calls:
the server's whole cost of a command (reading the request, dispatch, the command, the reply,
the event loop's share). --annotate also prints the functions of the module with the most
inclusive instructions per call.

Cases: GETBIT on a bitmap (the floor of any command that reads a key), BF.CARD (a bloomrs or
RedisBloom command that opens the filter's key and touches no filter bit), BF.EXISTS and
BF.ADD on a one-link filter (with room for every add of the run), BF.MEXISTS of 40, and
BF.EXISTS on a filter grown from 100 items to --grown items (10 links at 100,000).

The calls' items are random (redis-benchmark's __rand_int__ over 1,000,000 numbers, a tenth of
them added), so a count moves by a few tens of instructions between runs; the server's
allocator adds as much now and then. Counts that differ by less than that are equal.

Usage: instructions.py [--bloomrs PATH] [--redisbloom PATH] [--calls N] [--items N]
                       [--grown N] [--annotate] [--out FILE]
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

import redis

from commandstats import load_items
from machine import describe, write_result
from server import free_port, module_parser

ERROR_RATE = 0.01
BATCH = 40
PIPELINE = 16
BITMAP_BITS = 1 << 20


class CallgrindServer:
    """redis-server with `module` under callgrind, instrumented only while a case runs."""

    def __init__(self, module, keep=None):
        self.module = module
        self.keep = keep

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="bloomrs-callgrind-")
        self.port = free_port()
        self.out = os.path.join(self.dir, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={self.out}", "redis-server", "--port", str(self.port),
               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir,
               "--logfile", os.path.join(self.dir, "redis.log"),
               "--loadmodule", os.path.abspath(self.module)]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, protocol=2, decode_responses=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                self.client.ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.2)
        raise RuntimeError("the server under valgrind did not start")

    def control(self, *args):
        subprocess.run(["callgrind_control", *args, str(self.process.pid)], check=True,
                       capture_output=True)

    def count(self, label, command, calls, annotate):
        """Instructions per call of `command` (redis-benchmark, `calls` pipelined calls)."""
        self.control("-z")
        self.control("-i", "on")
        bench = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-c", "1",
                 "-P", str(PIPELINE), "-n", str(calls), "-r", "1000000", "-q", *command]
        subprocess.run(bench, check=True, capture_output=True, timeout=1800)
        self.control("-i", "off")
        before = set(os.listdir(self.dir))
        self.control("--dump=" + label.replace(" ", "_"))
        dump = wait_for_dump(self.dir, before)
        total, inside = totals(dump)
        top = module_functions(dump, self.module, calls) if annotate else []
        if self.keep:
            os.makedirs(self.keep, exist_ok=True)
            shutil.copy(dump, os.path.join(self.keep, label.replace(" ", "_") + ".callgrind"))
        os.remove(dump)
        return total / calls, inside / calls, top

    def __exit__(self, *exc):
        try:
            self.client.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for_dump(directory, before):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = [f for f in os.listdir(directory) if f.startswith("callgrind.out") and
               f not in before]
        if new:
            time.sleep(0.5)
            return os.path.join(directory, new[0])
        time.sleep(0.2)
    raise RuntimeError("no callgrind dump")


# The function that runs a command's own code: a module command's dispatcher (the module
# context, the handler, its reply) or the built-in command; what INFO commandstats times.
COMMAND_PROCS = ("RedisModuleCommandDispatcher", "getbitCommand")


def totals(dump):
    """The dump's total instructions (callgrind_annotate's PROGRAM TOTALS) and those inside
    the command's own function (inclusive)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                         capture_output=True, text=True, check=True).stdout
    total, inside = None, 0
    for line in out.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\?\?\?:(\w+) ", line)
        if m and m.group(2) in COMMAND_PROCS:
            inside = max(inside, int(m.group(1).replace(",", "")))
    if total is None:
        raise RuntimeError(f"no totals in {dump}")
    return total, inside


def module_functions(dump, module, calls, top=12):
    """The module's functions with the most inclusive instructions, per call."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                         capture_output=True, text=True, check=True).stdout
    name = os.path.basename(module)
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if m and (name in m.group(2) or "???" in m.group(2)):
            rows.append((int(m.group(1).replace(",", "")) / calls, m.group(2)[:150]))
    return rows[:top]


def setup(server, items, grown, calls):
    """The bitmap, the one-link filter (room for every add of the run: BF.ADD never grows it)
    and the grown filter; returns the grown filter's links."""
    client = server.client
    client.setbit("bits", BITMAP_BITS - 1, 0)
    client.execute_command("BF.RESERVE", "big", ERROR_RATE, items + calls, *server.extra)
    load_items(server, ["BF.MADD", "big"], 0, items)
    client.execute_command("BF.RESERVE", "grown", ERROR_RATE, 100, *server.extra)
    load_items(server, ["BF.MADD", "grown"], 0, grown)
    return int(client.execute_command("BF.INFO", "grown", "FILTERS")[0])


def cases():
    rand = "__rand_int__"
    return [
        # GETBIT refuses redis-benchmark's zero-padded __rand_int__: a fixed offset.
        ("GETBIT", ["GETBIT", "bits", str(BITMAP_BITS // 2)]),
        ("BF.CARD", ["BF.CARD", "big"]),
        ("BF.EXISTS", ["BF.EXISTS", "big", rand]),
        ("BF.ADD", ["BF.ADD", "big", rand]),
        ("BF.MEXISTS 40", ["BF.MEXISTS", "big", *[rand] * BATCH]),
        ("grown BF.EXISTS", ["BF.EXISTS", "grown", rand]),
    ]


def main():
    parser = module_parser(__doc__)
    parser.add_argument("--redisbloom", help="RedisBloom's redisbloom.so")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--grown", type=int, default=100_000)
    parser.add_argument("--annotate", action="store_true")
    parser.add_argument("--only", nargs="+", help="servers to count (default all)")
    parser.add_argument("--keep", help="a directory to copy the callgrind dumps to")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    modules = {}
    if args.redisbloom:
        modules["redisbloom"] = (args.redisbloom, [])
    modules["bloomrs-plain"] = (args.bloomrs, [])
    modules["bloomrs-blocked"] = (args.bloomrs, ["BLOCKED"])
    if args.only:
        modules = {name: m for name, m in modules.items() if name in args.only}
    results = {}
    for name, (path, extra) in modules.items():
        keep = args.keep and os.path.join(args.keep, name)
        with CallgrindServer(path, keep) as server:
            server.extra = extra
            links = setup(server, args.items, args.grown, args.calls)
            results[name] = {"grown_links": links}
            for label, command in cases():
                per_call, inside, top = server.count(label, command, args.calls,
                                                     args.annotate)
                results[name][label] = {"server": round(per_call, 1),
                                        "command": round(inside, 1)}
                print(f"{name:<16} {label:<16} {per_call:10.1f} instructions per call, "
                      f"{inside:8.1f} in the command", flush=True)
                for cost, fn in top:
                    print(f"    {cost:10.1f}  {fn}")
    print()
    labels = [label for label, _ in cases()]
    for part, title in (("command", "in the command (what commandstats times)"),
                        ("server", "the whole server")):
        print(f"instructions per call, {title}")
        print(f"{'case':<18}" + "".join(f"{n:>18}" for n in results))
        for label in labels:
            print(f"{label:<18}" + "".join(f"{results[n][label][part]:>18.1f}"
                                           for n in results))
    if args.out:
        settings = {"calls": args.calls, "items": args.items, "grown": args.grown,
                    "pipeline": PIPELINE, "clients": 1, "error_rate": ERROR_RATE,
                    "modules": {n: os.path.basename(p) for n, (p, _) in modules.items()}}
        write_result(args.out, {"machine": describe(), "settings": settings,
                                "instructions_per_call": results})


if __name__ == "__main__":
    main()
