#!/usr/bin/env python3
"""Writes a synthetic ~/.claude tree shaped like a real account's, for the stats benchmark.

    scripts/make-claude-tree.py OUT_DIR [--scale 1.0] [--seed 1]

At --scale 1 it has the shape of the real tree issue 58 measured (2,347 files, 19,097 responses,
about 490 MB): main sessions under OUT_DIR/projects/<project>/<session>.jsonl, subagents under
<session>/subagents/agent-*.jsonl, 895 stub files (a subagent file holding only its prompt, only a
`<synthetic>` limit message, or nothing), each response written as one line per content block with
the same message id and request id (Claude Code's way), subagent responses echoed into the parent
as `agent_progress` records, hook progress and file-history lines, and resumed sessions that copy
the start of another session's file. Line sizes follow the real Claude Code logs in tests/data
(median tool result 2.3 KB, prompt 0.8 KB, assistant block 1 KB) with a long tail (lognormal,
sigma 2) that brings the mean to about 26 KB of log per response, as in the measured tree.
Every response's model is priced by loopcast and by ccusage, so both must give the same total.
Standard library only; the same seed writes the same files.
"""
import argparse
import json
import math
import os
import random
import uuid
from datetime import datetime, timezone

MODELS = [("claude-opus-4-6", 0.6), ("claude-sonnet-4-5-20250929", 0.25), ("claude-haiku-4-5-20251001", 0.15)]


def iso(t):
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(t * 1000) % 1000:03d}Z"


class Writer:
    def __init__(self, rng, root):
        self.rng = rng
        self.root = root
        self.files = 0
        self.responses = 0
        self.bytes = 0

    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def ident(self, prefix, n=24):
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return prefix + "".join(self.rng.choice(alphabet) for _ in range(n))

    def text(self, median, cap):
        n = int(min(cap, median * math.exp(self.rng.gauss(0, 2.0))))
        return "x" * max(1, n)

    def model(self):
        r = self.rng.random()
        for name, share in MODELS:
            if r < share:
                return name
            r -= share
        return MODELS[0][0]

    def write(self, path, lines):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines)
        with open(path, "w") as f:
            f.write(data)
        self.files += 1
        self.bytes += len(data)

    def session(self, t, n_responses, common, model, sidechain=False, agent=None, echo=None):
        """The lines of one session of n_responses, from time t; echo collects progress records."""
        lines = []
        parent = None
        context = self.rng.randint(8000, 30000)
        for k in range(n_responses):
            if k == 0 or self.rng.random() < 0.2:
                content = self.text(800, 200000)  # a prompt
            else:
                content = [{"type": "tool_result", "tool_use_id": self.ident("toolu_"), "content": self.text(2300, 1500000)}]
            u = self.uid()
            lines.append({**common, "parentUuid": parent, "isSidechain": sidechain, "type": "user",
                          **({"agentId": agent} if agent else {}),
                          "message": {"role": "user", "content": content}, "uuid": u, "timestamp": iso(t)})
            parent = u
            t += self.rng.uniform(2, 40)
            write = self.rng.randint(200, 6000)
            usage = {"input_tokens": self.rng.randint(1, 12), "cache_creation_input_tokens": write,
                     "cache_read_input_tokens": context,
                     "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": write},
                     "output_tokens": self.rng.randint(5, 2500), "service_tier": "standard"}
            context += write
            if context > 160000:  # Claude Code compacts its context near 160K (no request over 200K)
                context = self.rng.randint(15000, 40000)
            mid, rid = self.ident("msg_01"), self.ident("req_011C")
            blocks = self.rng.choice([1, 1, 2, 2, 3])
            for b in range(blocks):
                if b == blocks - 1:
                    block = {"type": "tool_use", "id": self.ident("toolu_"), "name": "Bash",
                             "input": {"command": self.text(800, 400000)}}
                else:
                    block = {"type": "text", "text": self.text(600, 100000)}
                u = self.uid()
                message = {"model": model, "id": mid, "type": "message", "role": "assistant", "content": [block],
                           "stop_reason": None, "stop_sequence": None, "usage": usage}
                lines.append({**common, "parentUuid": parent, "isSidechain": sidechain,
                              **({"agentId": agent} if agent else {}), "message": message, "requestId": rid,
                              "type": "assistant", "uuid": u, "timestamp": iso(t)})
                parent = u
                if echo is not None and b == 0:
                    echo.append({"type": "assistant", "timestamp": iso(t),
                                 "message": {**message, "content": [{"type": "text", "text": "..."}]},
                                 "requestId": rid, "uuid": u})
            self.responses += 1
            t += self.rng.uniform(1, 30)
            if self.rng.random() < 0.3:
                lines.append({**common, "parentUuid": parent, "type": "progress",
                              "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash",
                                       "command": "~/.claude/hooks/notify.sh"},
                              "uuid": self.uid(), "timestamp": iso(t)})
        return lines, t


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--scale", type=float, default=1.0, help="share of the measured tree's files and responses")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    w = Writer(rng, a.out)
    mains = max(1, round(700 * a.scale))
    subagents = max(1, round(752 * a.scale))
    stubs = max(1, round(895 * a.scale))
    per_file = 0.95 * 19097 / (700 + 752)  # 0.95: rounding up short sessions adds about 5%
    start = datetime(2026, 9, 1, tzinfo=timezone.utc).timestamp()
    projects = [f"-home-dev-{name}" for name in ("api", "web", "infra", "ml", "docs", "cli", "mobile", "data")]
    sessions = []  # (path, lines) of the main sessions, for resumed copies
    sub_left, stub_left = subagents, stubs
    for i in range(mains):
        project = rng.choice(projects)
        sid = w.uid()
        common = {"userType": "external", "cwd": "/home/dev/" + project.split("-")[-1], "sessionId": sid,
                  "version": "2.1.39", "gitBranch": "main"}
        t = start + rng.uniform(0, 60 * 86400)
        n = max(1, round(per_file * math.exp(rng.gauss(0, 0.8)) / math.exp(0.32)))
        lines = [{"type": "file-history-snapshot", "messageId": w.uid(),
                  "snapshot": {"messageId": w.uid(), "trackedFileBackups": {}, "timestamp": iso(t)},
                  "isSnapshotUpdate": False}]
        if sessions and rng.random() < 0.03:  # resumed: the start of an earlier session copied in
            _, earlier = rng.choice(sessions)
            lines += earlier[: rng.randint(1, len(earlier))]
        body, t = w.session(t, n, common, w.model())
        lines += body
        # This session's subagents and stubs, in its own folder.
        want_sub = sub_left if i == mains - 1 else min(sub_left, rng.choice([0, 0, 1, 1, 2, 3]))
        want_stub = stub_left if i == mains - 1 else min(stub_left, rng.choice([0, 1, 1, 2, 2]))
        for _ in range(want_sub):
            agent = w.ident("", 7).lower()
            echo = []
            sub, _ = w.session(t, max(1, round(per_file * math.exp(rng.gauss(0, 0.8)) / math.exp(0.32))), common,
                               w.model(), sidechain=True, agent=agent, echo=echo)
            w.write(os.path.join(a.out, "projects", project, sid, "subagents", f"agent-{agent}.jsonl"), sub)
            for m in echo:
                lines.append({**common, "parentUuid": None, "isSidechain": False, "type": "progress",
                              "data": {"message": m, "normalizedMessages": [], "type": "agent_progress", "prompt": "...",
                                       "agentId": agent},
                              "uuid": w.uid(), "timestamp": m["timestamp"]})
        sub_left -= want_sub
        for _ in range(want_stub):
            agent = w.ident("", 7).lower()
            kind = rng.random()
            stub = []
            if kind < 0.5:
                stub = [{**common, "parentUuid": None, "isSidechain": True, "agentId": agent, "type": "user",
                         "message": {"role": "user", "content": w.text(800, 20000)}, "uuid": w.uid(), "timestamp": iso(t)}]
            elif kind < 0.75:
                stub = [{**common, "parentUuid": None, "isSidechain": True, "agentId": agent, "type": "assistant",
                         "message": {"model": "<synthetic>", "id": w.uid(), "type": "message", "role": "assistant",
                                     "content": [{"type": "text", "text": "You've hit your limit · resets 3pm (UTC)"}],
                                     "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                                               "cache_read_input_tokens": 0}},
                         "isApiErrorMessage": True, "uuid": w.uid(), "timestamp": iso(t)}]
            w.write(os.path.join(a.out, "projects", project, sid, "subagents", f"agent-{agent}.jsonl"), stub)
        stub_left -= want_stub
        w.write(os.path.join(a.out, "projects", project, f"{sid}.jsonl"), lines)
        sessions.append((sid, lines))
    print(f"{a.out}: {w.files} files, {w.responses} responses, {w.bytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
