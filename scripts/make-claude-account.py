#!/usr/bin/env python3
"""Writes a synthetic Claude Code account with known walls, for `loopcast limits backtest` (docs/validation.md).

    scripts/make-claude-account.py OUT_DIR [--days 40] [--seed 1] [--cap 780000] [--sigma 0.25] [--elsewhere 0.15]

No real Claude wall transcript may be redistributed, so this writes one in the exact format Claude Code
uses (user prompts, assistant responses with usage, `<synthetic>` limit messages "You've hit your limit ·
resets 3pm (UTC)") from a process whose truth is known: each 5-hour window opens at the hour of its first
request and admits requests while the tokens it counted (input + cache writes + output; cache reads at 0)
stay under a cap drawn lognormally around --cap (σ --sigma); in a share --elsewhere of windows, usage on
another machine takes 40-80% of the cap unseen. Agents work sessions of 1-5 hours at a pace of their own.
Standard library only; the same seed writes the same files.
"""
import argparse
import json
import math
import os
import random
from datetime import datetime, timezone


def iso(t):
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(t * 1000) % 1000:03d}Z"


def clock(t):
    h = datetime.fromtimestamp(t, tz=timezone.utc).hour
    return f"{12 if h % 12 == 0 else h % 12}{'am' if h < 12 else 'pm'}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--days", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cap", type=float, default=780000)
    p.add_argument("--sigma", type=float, default=0.25)
    p.add_argument("--elsewhere", type=float, default=0.15)
    a = p.parse_args()
    rng = random.Random(a.seed)
    start = datetime(2026, 9, 1, tzinfo=timezone.utc).timestamp()
    n = 0
    walls = 0
    window_end = -1.0
    used = cap = 0.0
    for day in range(a.days):
        t = start + day * 86400 + rng.uniform(7, 11) * 3600
        for session in range(rng.choice([1, 1, 2, 2, 3])):
            lines = []
            sid = f"s{day:03d}{session}"
            pace = math.exp(rng.gauss(0, 0.5))  # this session's own pace
            stop = t + rng.uniform(1, 5) * 3600
            context = 20000
            while t < stop:
                if t >= window_end:  # a new window opens at the hour of this request
                    opened = math.floor(t / 3600) * 3600
                    window_end = opened + 5 * 3600
                    cap = a.cap * math.exp(rng.gauss(0, a.sigma))
                    used = cap * rng.uniform(0.4, 0.8) if rng.random() < a.elsewhere else 0.0
                n += 1
                lines.append({"type": "user", "sessionId": sid, "uuid": f"u{n}", "timestamp": iso(t),
                              "message": {"role": "user", "content": "go on"}})
                if used >= cap:  # refused: the wall, and the agent waits for the reset
                    lines.append({"type": "assistant", "sessionId": sid, "uuid": f"w{n}", "timestamp": iso(t + 1),
                                  "error": "rate_limit", "isApiErrorMessage": True, "apiErrorStatus": 429,
                                  "message": {"id": f"w{n}", "model": "<synthetic>", "role": "assistant",
                                              "content": [{"type": "text",
                                                           "text": f"You've hit your limit · resets {clock(window_end)} (UTC)"}],
                                              "usage": {"input_tokens": 0, "output_tokens": 0}}})
                    walls += 1
                    t = window_end + rng.uniform(0, 2) * 3600
                    break
                inp = int(rng.lognormvariate(math.log(300), 0.8))
                write = int(rng.lognormvariate(math.log(4000), 0.9))
                out = int(rng.lognormvariate(math.log(600), 0.9))
                used += inp + write + out
                duration = 3 + out / 60.0
                lines.append({"type": "assistant", "sessionId": sid, "uuid": f"a{n}", "timestamp": iso(t + duration),
                              "requestId": f"req_{n:08d}",
                              "message": {"id": f"msg_{n:08d}", "model": "claude-sonnet-4-5-20250929", "role": "assistant",
                                          "content": [{"type": "text", "text": "x" * int(out * 2.1)}],
                                          "usage": {"input_tokens": inp, "cache_read_input_tokens": context,
                                                    "cache_creation_input_tokens": write, "output_tokens": out}}})
                context += write
                t += duration + rng.lognormvariate(math.log(40), 0.9) / pace
            path = os.path.join(a.out, "project", f"{sid}.jsonl")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                for line in lines:
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
            t += rng.uniform(0.5, 3) * 3600
    print(f"{a.out}: {n} prompts, {walls} walls over {a.days} days")


if __name__ == "__main__":
    main()
