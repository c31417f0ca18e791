"""loopcast's engine against the same model in plain CPython, on one shared script.

    /usr/bin/python3 tests/benchmarks/vs_python.py [--bin build/tests/benchmarks/loopcast_shared_script]
        [--agents 50] [--turns 200] [--limits-x 1000] [--repeat 20] [--check-only]

The C++ program (shared_script.cpp) generates the workload, writes it as a shared script, and
simulates it `repeat` times; this script simulates the same shared script with pymodel.py, checks
that both give the same outcome (every session's attempts, 429s, times, stall and cost, and the
totals, compared exactly), then prints how long one run takes in each and the ratio — per run, per
simulated request and per attempt (the same counts on both sides, so the three ratios agree). It
exits 1 when the results differ. ``--check-only`` skips the timing (the test suite runs it so).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import pymodel  # noqa: E402


def differences(cpp: dict, py: dict) -> list[str]:
    out = []
    for key in ("attempts", "requests", "tokens", "cost_usd", "wall_s"):
        if cpp[key] != py[key]:
            out.append(f"{key}: C++ {cpp[key]!r}, Python {py[key]!r}")
    if len(cpp["sessions"]) != len(py["sessions"]):
        out.append(f"sessions: C++ {len(cpp['sessions'])}, Python {len(py['sessions'])}")
    for i, (a, b) in enumerate(zip(cpp["sessions"], py["sessions"])):
        for key in a:
            if a[key] != b[key]:
                out.append(f"session {i} {key}: C++ {a[key]!r}, Python {b[key]!r}")
    return out


def main() -> int:
    here = pathlib.Path(__file__).resolve()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(here.parents[2] / "build" / "tests" / "benchmarks" / "loopcast_shared_script"))
    ap.add_argument("--agents", type=int, default=50)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--limits-x", type=float, default=1000.0, help="every limit × this (1: the Developer tier itself)")
    ap.add_argument("--repeat", type=int, default=20, help="C++ runs to average over")
    ap.add_argument("--check-only", action="store_true", help="compare the results, do not time Python")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script_path, results_path = pathlib.Path(tmp, "script.json"), pathlib.Path(tmp, "results.json")
        subprocess.run([a.bin, "--agents", str(a.agents), "--turns", str(a.turns), "--limits-x", str(a.limits_x),
                        "--repeat", str(1 if a.check_only else a.repeat), "--script", str(script_path),
                        "--results", str(results_path)], check=True)
        script = json.loads(script_path.read_text())
        cpp = json.loads(results_path.read_text())
    py_s = float("inf")
    for _ in range(1 if a.check_only else 3):  # the best of three
        t0 = time.perf_counter()
        py = pymodel.simulate(script)
        py_s = min(py_s, time.perf_counter() - t0)
    diff = differences(cpp, py)
    print(f"{a.agents} agents × {a.turns or 'the workload’s'} turns, limits ×{a.limits_x:g}: "
          f"{cpp['requests']:,} requests served, {cpp['attempts']:,} attempts, ${cpp['cost_usd']:.4f}, "
          f"wall {cpp['wall_s']:.1f} s — {'identical in C++ and Python' if not diff else 'RESULTS DIFFER'}")
    for d in diff[:20]:
        print("  " + d)
    if diff:
        return 1
    if a.check_only:
        return 0
    cpp_s = cpp["seconds_per_run"]
    print(f"C++ {cpp_s * 1e3:.3f} ms per run ({cpp['requests'] / cpp_s / 1e6:.2f} M requests/s, "
          f"{cpp['attempts'] / cpp_s / 1e6:.2f} M attempts/s)")
    print(f"Python {py_s * 1e3:.1f} ms per run, best of 3 ({cpp['requests'] / py_s / 1e3:.1f} K requests/s)")
    print(f"ratio {py_s / cpp_s:.0f}× per run, per simulated request and per attempt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
