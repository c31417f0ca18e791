"""`loopcast stats` against ccusage on the same ~/.claude tree, side by side, and their totals compared.

    /usr/bin/python3 tests/benchmarks/stats_vs_ccusage.py [--tree DIR | --scale 1.0] [--runs 10]
        [--loopcast build/loopcast] [--ccusage PATH] [--check-only]

Without --tree it writes a synthetic tree with scripts/make-claude-tree.py (at --scale 1 the shape
of the real 2,347-file tree issue 58 measured; no real data needed). Both tools read the whole tree
once per run, in turns (loopcast, ccusage, loopcast, ...) so that the machine's drift falls on both;
the script prints each one's median wall and CPU time and the median of the per-pair ratios. It
also checks that both count the same tokens of every class and the same cost to the cent (exit 1
otherwise). ccusage is taken from --ccusage, $CCUSAGE, or `ccusage` on PATH (npm i ccusage@20: its
binary is node_modules/@ccusage/ccusage-linux-x64/bin/ccusage and may need chmod +x); without it the
script says so and exits 77 (ctest's skip) having measured nothing. It asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def find_ccusage(given: str | None) -> str | None:
    for c in (given, os.environ.get("CCUSAGE"), shutil.which("ccusage")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def totals_agree(loopcast_json: bytes, ccusage_json: bytes) -> list[str]:
    """What differs between the two tools' totals (empty when they agree)."""
    ours = next(g for g in json.loads(loopcast_json)["groups"] if g["group"] == "all" and g["model"] == "all")
    theirs = json.loads(ccusage_json)["totals"]
    pairs = {
        "input": (ours["tokens"]["input"], theirs["inputTokens"]),
        "output": (ours["tokens"]["output"], theirs["outputTokens"]),
        "cache read": (ours["tokens"]["cache_read"], theirs["cacheReadTokens"]),
        "cache write": (ours["tokens"]["cache_write"] + ours["tokens"]["cache_write_1h"], theirs["cacheCreationTokens"]),
    }
    diffs = [f"{k}: loopcast {a:,} ccusage {b:,}" for k, (a, b) in pairs.items() if a != b]
    cost, their_cost = ours["priced_cost_usd"], theirs["totalCost"]
    if abs(cost - their_cost) >= 0.01:
        diffs.append(f"cost: loopcast ${cost:.4f} ccusage ${their_cost:.4f}")
    return diffs


def theirs_cost(ccusage_json: bytes) -> float:
    return json.loads(ccusage_json)["totals"]["totalCost"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", help="a folder holding projects/ (a copy of ~/.claude); default: a synthetic one")
    p.add_argument("--scale", type=float, default=1.0, help="size of the synthetic tree (1: 2,347 files)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--loopcast", default=str(ROOT / "build" / "loopcast"))
    p.add_argument("--ccusage")
    p.add_argument("--check-only", action="store_true", help="compare the totals once, time nothing")
    a = p.parse_args()
    ccusage = find_ccusage(a.ccusage)
    if not ccusage:
        print("stats_vs_ccusage: skipped: no ccusage (give --ccusage PATH or $CCUSAGE; npm i ccusage@20)")
        return 77  # ctest's "skipped"
    with tempfile.TemporaryDirectory() as scratch:
        tree = pathlib.Path(a.tree) if a.tree else pathlib.Path(scratch) / "claude"
        if not a.tree:
            subprocess.run([sys.executable, str(ROOT / "scripts" / "make-claude-tree.py"), str(tree),
                            "--scale", str(a.scale)], check=True)
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tree)}
        ours = [a.loopcast, "stats", str(tree / "projects")]
        theirs = [ccusage, "daily", "--offline"]
        _, _, mine = timed(ours + ["--json"], env)
        _, _, yours = timed(theirs + ["--json"], env)
        diffs = totals_agree(mine, yours)
        for d in diffs:
            print("stats_vs_ccusage: totals differ:", d)
        if not diffs:
            print(f"stats_vs_ccusage: the same tokens of every class and cost "
                  f"${theirs_cost(yours):.4f} from both")
        if a.check_only:
            return 1 if diffs else 0
        rows = {"loopcast": [], "ccusage": []}
        for _ in range(a.runs):
            rows["loopcast"].append(timed(ours, env)[:2])
            rows["ccusage"].append(timed(theirs, env)[:2])
        for name, r in rows.items():
            print(f"{name:9} wall median {statistics.median(w for w, _ in r):.3f} s   "
                  f"cpu median {statistics.median(c for _, c in r):.3f} s   ({a.runs} runs)")
        ratios = [l[0] / c[0] for l, c in zip(rows["loopcast"], rows["ccusage"])]
        print(f"loopcast / ccusage wall: median {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}, pair by pair)")
        return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
