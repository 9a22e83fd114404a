"""What the benchmarks ran on, stored next to every result so numbers are never read without it."""

import json
import os
import platform
import subprocess
import time


def _first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
        return out.strip().splitlines()[0] if out.strip() else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gib():
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return round(pages / 2**30, 1)
    except (ValueError, OSError):
        return None


def describe():
    """CPU, cores, memory, load, OS, redis and rustc versions and the git commit measured."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "os": _first_line(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "kernel": platform.release(),
        "redis_server": _first_line(["redis-server", "--version"]),
        "rustc": _first_line(["rustc", "--version"]),
        "python": platform.python_version(),
        "commit": _first_line(["git", "rev-parse", "--short", "HEAD"]),
    }


def write_result(path, result):
    """Writes a benchmark's result as JSON to `path`, making its folder."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)
