"""A throwaway redis-server on a free loopback port, for the benchmarks.

Each server gets its own temporary --dir, saves nothing (--save "", no AOF) and is shut down
(and its directory removed) when the `with` block ends, even on an error or Ctrl-C.
"""

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis

# The release build `cargo build --release` writes, which the benchmarks measure by default.
MODULE = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "libbloomrs.so")


def module_parser(doc):
    """A benchmark's argument parser: its docstring's first paragraph, and --bloomrs."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--bloomrs", default=MODULE, help="the bloomrs build to measure")
    return parser

START_TIMEOUT_S = 10


def free_port(highest=65535):
    """A TCP port on 127.0.0.1 that nothing listens on right now, at most `highest`."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port <= highest:
            return port


class RedisServer:
    """redis-server (or `binary`, e.g. a valkey-server) with an optional module loaded; `client`
    is a redis-py client to it. `config` are extra `--name value` settings (e.g. cluster mode)."""

    def __init__(self, module=None, module_args=(), config=(), binary="redis-server"):
        self.binary = binary
        self.module = module
        self.module_args = list(module_args)
        self.config = list(config)
        self.port = None
        self.dir = None
        self.process = None
        self.client = None

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="bloomrs-bench-")
        # A cluster node also listens on its port + 10000 (the cluster bus).
        self.port = free_port(55535 if "--cluster-enabled" in self.config else 65535)
        cmd = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
               "--save", "", "--appendonly", "no", "--dir", self.dir,
               "--logfile", os.path.join(self.dir, "redis.log"), *self.config]
        if self.module:
            cmd += ["--loadmodule", os.path.abspath(self.module), *self.module_args]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, protocol=2, decode_responses=True)
        self._wait_ready()
        return self

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start; see {self.dir}/redis.log")
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer within {START_TIMEOUT_S}s")

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            try:
                self.client.shutdown(nosave=True)
            except redis.ConnectionError:
                pass  # shutdown closes the connection before replying
            try:
                self.process.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def used_memory(self):
        """INFO memory's used_memory, in bytes."""
        return int(self.client.info("memory")["used_memory"])
