"""Where the server's time goes on one benchmark case: perf samples of redis-server while
redis-benchmark drives a command on a filter of 900,000 items in a chosen number of links.

Builds the filter as commandstats.py's grown cases do (error rate 0.01, expansion 2), runs
`perf record` on the server for the length of the benchmark and prints `perf report`'s top
symbols; --annotate SYMBOL also prints the hottest instructions of one symbol. Needs `perf`
(Debian's linux-perf, installed by setup.sh); a release build has symbols, and
CARGO_PROFILE_RELEASE_DEBUG=line-tables-only adds line numbers without changing the code.

Usage: profile.py [--bloomrs PATH] [--links N] [--command BF.EXISTS|BF.ADD] [--requests N]
                  [--annotate SYMBOL] [--out perf.data]
"""

import subprocess
import sys

from commandstats import (ERROR_RATE, GROWN_ITEMS, GROWN_LINKS, bf_links, load_items,
                          redis_benchmark)
from server import RedisServer, module_parser


def parse_args():
    parser = module_parser(__doc__)
    parser.add_argument("--links", type=int, default=14, choices=sorted(GROWN_LINKS))
    parser.add_argument("--command", default="BF.EXISTS", choices=("BF.EXISTS", "BF.ADD"))
    parser.add_argument("--requests", type=int, default=2_000_000)
    parser.add_argument("--annotate", help="a symbol whose hottest instructions to print")
    parser.add_argument("--out", default="perf.data")
    return parser.parse_args()


def main():
    args = parse_args()
    with RedisServer(args.bloomrs) as server:
        key = f"grown:{args.links}"
        server.client.execute_command("BF.RESERVE", key, ERROR_RATE, GROWN_LINKS[args.links])
        load_items(server, ["BF.MADD", key], 0, GROWN_ITEMS)
        print(f"{key}: {bf_links(server, key)} links", file=sys.stderr)
        perf = subprocess.Popen(["perf", "record", "-q", "-o", args.out, "-p",
                                 str(server.process.pid)])
        try:
            redis_benchmark(server.port, [args.command, key, "__rand_int__"], 2 * GROWN_ITEMS,
                            args.requests)
        finally:
            perf.send_signal(subprocess.signal.SIGINT)
            perf.wait()
    report = subprocess.run(["perf", "report", "-i", args.out, "--stdio", "--no-children",
                             "--percent-limit", "1"], capture_output=True, text=True).stdout
    print("\n".join(line for line in report.splitlines() if line and not line.startswith("#")))
    if args.annotate:
        annotated = subprocess.run(["perf", "annotate", "-i", args.out, "--stdio", "-s",
                                    args.annotate], capture_output=True, text=True).stdout
        hot = [line for line in annotated.splitlines() if line.strip()[:1].isdigit()
               and float(line.split(":")[0]) >= 1.0]
        print("\n".join(hot))


if __name__ == "__main__":
    main()
