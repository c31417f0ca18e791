"""How long one statusline call takes, alone and with eight at once (Claude Code runs it constantly).

    /usr/bin/python3 tests/benchmarks/statusline_calls.py [--calls 200] [COMMAND ...]

COMMAND defaults to build/loopcast-statusline and `build/loopcast statusline`, measured side by side
in turns (A, B, A, B, …) so that the machine's drift falls on both. Each call is a whole process
fed one statusline input on stdin and appending to a scratch log; the script prints the median and
P99 wall time per call, alone and with 8 callers at once, and checks that every logged line is
whole. It measures; it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import threading
import time

INPUT = json.dumps({"session_id": "0" * 36, "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": 4102444800},
                                                             "seven_day": {"used_percentage": 41, "resets_at": 4102444800}}})


def one_call(cmd: list[str], log: str) -> float:
    t = time.perf_counter()
    subprocess.run(cmd + ["--log", log], input=INPUT.encode(), stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def measure(cmd: list[str], calls: int, callers: int, log: str) -> list[float]:
    times: list[float] = []
    lock = threading.Lock()

    def worker():
        mine = [one_call(cmd, log) for _ in range(calls // callers)]
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def main() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("commands", nargs="*")
    a = ap.parse_args()
    commands = [c.split() for c in a.commands] or [[str(root / "build/loopcast-statusline")],
                                                   [str(root / "build/loopcast"), "statusline"]]
    with tempfile.TemporaryDirectory() as d:
        for callers in (1, 8):
            results = {i: [] for i in range(len(commands))}
            for _ in range(4):  # in turns
                for i, cmd in enumerate(commands):
                    results[i] += measure(cmd, a.calls // 4, callers, os.path.join(d, f"log{i}.jsonl"))
            for i, cmd in enumerate(commands):
                ts = sorted(results[i])
                p99 = ts[min(len(ts) - 1, int(0.99 * len(ts)))]
                print(f"{' '.join(pathlib.Path(cmd[0]).name.split() + cmd[1:]):<28} {callers} at once: "
                      f"median {1e3 * statistics.median(ts):.1f} ms, P99 {1e3 * p99:.1f} ms ({len(ts)} calls)")
        for i in range(len(commands)):
            lines = pathlib.Path(d, f"log{i}.jsonl").read_text().splitlines()
            torn = sum(1 for line in lines if not line.startswith("{") or not line.endswith("}"))
            print(f"log {i}: {len(lines)} lines, {torn} torn")


if __name__ == "__main__":
    main()
