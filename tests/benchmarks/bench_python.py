"""How much of a 1,000-run Monte Carlo called from Python is spent in Python?

    PYTHONPATH=build/python /usr/bin/python3 tests/benchmarks/bench_python.py

loopcast.monte_carlo() makes one call into C++ (run_seeds) for all seeds: the Python side only
serialises the scenario and wraps the result. We time the whole call and the C++ call alone with
the same arguments; the difference is Python's share. A second case runs one scenario with 1,000
concurrent sessions (a fleet on one organisation's buckets) through loopcast.run().
"""

import json
import sys
import time

import numpy as np

import loopcast
from loopcast import _core


def best_of(n, f):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    models = loopcast.models_dir()
    scenario = loopcast.Scenario.load("reference")
    seeds = np.arange(1000, dtype=np.uint64)
    text, file = json.dumps(scenario.to_dict()), scenario._file

    whole = best_of(3, lambda: loopcast.monte_carlo(scenario, seeds))
    cpp = best_of(3, lambda: _core.run_seeds(text, file, models, seeds))
    share = max(whole - cpp, 0.0) / whole
    print(f"monte_carlo, 1,000 seeds × 2 options: {whole * 1e3:.1f} ms in all, {cpp * 1e3:.1f} ms in C++ "
          f"→ {100 * share:.2f}% in Python")

    # 1,000 agents on one Developer-tier organisation spend most attempts on 429s (see
    # bench_simulator's BM_Fleet); a tier with every limit ×1,000 measures the engine itself.
    big = loopcast.Target.load("cerebras-developer-qwen-3.8-27b")
    for b in big.to_dict()["limits"]["buckets"]:
        big = big.with_bucket_limit(b["name"], b["limit"] * 1000)
    fleet = scenario.replace(sessions=1000, stagger_s=1.0, options=[loopcast.Option("big", big, "opencode")])
    fleet_text = json.dumps(fleet.to_dict())
    whole_f = best_of(3, lambda: loopcast.run(fleet, timeline=False))
    cpp_f = best_of(3, lambda: _core.run_scenario(fleet_text, file, models, None, False))
    share_f = max(whole_f - cpp_f, 0.0) / whole_f
    print(f"run, 1,000 concurrent sessions (limits ×1,000): {whole_f * 1e3:.1f} ms in all, {cpp_f * 1e3:.1f} ms in C++ "
          f"→ {100 * share_f:.2f}% in Python")

    # One run of the reference case by name, as a notebook calls it: presets found, read and checked
    # (cached while their files do not change), then the C++ run; beside the C++ call alone.
    one = best_of(20, lambda: loopcast.run("reference", timeline=False))
    one_cpp = best_of(20, lambda: _core.run_scenario(text, file, models, None, False))
    print(f"run(\"reference\") by name: {one * 1e3:.2f} ms, the C++ call alone {one_cpp * 1e3:.2f} ms "
          f"→ {one / one_cpp:.2f}×")
    return 0 if share < 0.05 and share_f < 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
