"""loopcast's simulation model written plainly in CPython, for a side-by-side comparison.

It reads a shared script written by ``loopcast_shared_script`` (tests/benchmarks/shared_script.cpp)
and simulates it as docs/model.md describes, with nothing but the standard library: token buckets
with a reservation at admission and a refund at completion, the block prefix cache with a TTL
refreshed on each hit (the same lineage-and-step bookkeeping), linear speed curves integrated
exactly, per-class prices, a client that honours retry-after or backs off, and an event queue on
(time, sequence). ``vs_python.py`` checks that it gives what the C++ engine gives, then times both.

This is a benchmark's reference, not part of the package: it carries the subset of the model the
shared script uses (refusing anything else there, in the C++ exporter).
"""

from __future__ import annotations

import heapq
import math

SEND, COMPLETE = 0, 1


class TokenBucket:
    """Capacity ``limit``, refilled continuously at limit/period; `level` is what is available."""

    def __init__(self, limit: float, period_s: float) -> None:
        self.limit = limit
        self.level = limit
        self.rate = limit / period_s
        self.eps = 1e-9 * max(1.0, limit)
        self.t_last = 0.0

    def level_at(self, t: float) -> float:
        """The level at t, worked out from the last charge or adjustment (a read changes nothing)."""
        if t > self.t_last:
            return min(self.limit, self.level + self.rate * (t - self.t_last))
        return self.level

    def refill(self, t: float) -> None:
        if t > self.t_last:
            self.level = self.level_at(t)
            self.t_last = t

    def wait_for(self, q: float, t: float) -> float:
        if q > self.limit + self.eps:
            return math.inf  # larger than the whole capacity: refused for good
        level = self.level_at(t)
        if level >= q - self.eps:
            return 0.0
        return (q - level) / self.rate

    def charge(self, q: float, t: float) -> None:
        self.refill(t)
        self.level -= q

    def adjust(self, delta: float, t: float) -> None:
        self.refill(t)
        self.level = min(self.limit, self.level - delta)


class PrefixCache:
    """Whole blocks per lineage; a lineage's state is a list of (end_block, expiry), expiry falling."""

    def __init__(self, cfg: dict) -> None:
        self.enabled = cfg["enabled"]
        self.block = cfg["block_tokens"]
        self.min_tokens = cfg["min_tokens"]
        self.ttl = cfg["ttl_s"]
        self.steps: dict[int, list[list[float]]] = {}

    def cached_blocks(self, lineage: int, t: float) -> int:
        end = 0
        for end_block, expiry in self.steps.get(lineage, ()):
            if expiry <= t:
                break
            end = end_block
        return end

    def lookup(self, runs: list, prompt: int, t: float) -> int:
        if not self.enabled or prompt < self.min_tokens:
            return 0
        full = prompt // self.block
        hit = 0
        for lineage, end_tokens in runs:
            run_end = min(end_tokens // self.block, full)
            if run_end <= hit:
                continue
            cached_end = self.cached_blocks(lineage, t)
            if cached_end < run_end:
                hit = max(hit, cached_end)
                break
            hit = run_end
        hit *= self.block
        return 0 if hit < self.min_tokens else hit

    def cacheable(self, prompt: int) -> int:
        if not self.enabled or prompt < self.min_tokens:
            return 0
        return prompt // self.block * self.block

    def touch(self, runs: list, prompt: int, t: float) -> None:
        if not self.enabled or prompt < self.min_tokens:
            return
        full = prompt // self.block
        expiry = t + self.ttl
        for lineage, end_tokens in runs:
            run_end = min(end_tokens // self.block, full)
            if run_end > 0:
                self.extend(lineage, run_end, expiry)
            if end_tokens // self.block >= full:
                break

    def extend(self, lineage: int, end: int, expiry: float) -> None:
        v = self.steps.setdefault(lineage, [])
        keep = 0
        while keep < len(v) and v[keep][0] <= end:
            keep += 1
        del v[:keep]
        while v and v[-1][1] <= expiry - self.ttl:
            v.pop()
        v.insert(0, [end, expiry])


def integrate(curve: dict, x0: float, x1: float) -> float:
    """Seconds for positions [x0, x1] of a per-token time a + b·x."""
    if not x1 > x0:
        return 0.0
    return curve["a"] * (x1 - x0) + 0.5 * curve["b"] * (x1 * x1 - x0 * x0)


def charge_for(bucket: dict, tokens: list, max_tokens: int) -> tuple[float, float]:
    """(at admission, at completion) of a request with tokens [input, cache_read, cache_write, output, reasoning]."""
    if bucket["unit"] != "tokens":
        return 1.0, 0.0
    counts = bucket["counts"]
    prompt = float(sum(n for n, c in zip(tokens[:3], counts[:3]) if c))
    if not (counts[3] or counts[4]):
        return prompt, 0.0
    generated = float(sum(n for n, c in zip(tokens[3:], counts[3:]) if c))
    reserve = float(max_tokens)
    rule = bucket["charging"]
    if rule == "actual":
        return prompt + generated, 0.0
    if rule == "reserve_then_refund":
        return prompt + reserve, -max(0.0, reserve - generated)
    if rule == "reserve":
        return prompt + reserve, 0.0
    return prompt, generated  # on_completion


class Session:
    def __init__(self, spec: dict) -> None:
        self.start = spec["start_s"]
        self.requests = spec["requests"]
        self.next = 0
        self.attempt = 0
        self.outcome = "completed"
        self.served = self.attempts = self.rate_limited = 0
        self.start_s = self.end_s = self.stall_s = self.cost_usd = 0.0
        self.tokens = [0, 0, 0, 0, 0]
        self.in_flight_tokens: list = []
        self.in_flight_cost = 0.0
        self.at_completion: list = []


def simulate(script: dict) -> dict:
    tgt, client = script["target"], script["client"]
    buckets = [TokenBucket(b["limit"], b["period_s"]) for b in tgt["limits"]]
    cache = PrefixCache(tgt["cache"])
    speed = tgt["speed"]
    prices = tgt["prices_per_million"]
    window = tgt["context_window_tokens"]
    write_charged = tgt["cache"]["write_charged"]
    sessions = [Session(s) for s in script["sessions"]]
    queue: list = []
    seq = 0
    first_send = math.inf
    last_end = -math.inf
    started = False
    token_cost = 0.0
    served_requests = 0

    def schedule(t: float, i: int, kind: int) -> None:
        nonlocal seq
        heapq.heappush(queue, (t, seq, i, kind))
        seq += 1

    def finish(s: Session, outcome: str, t: float) -> None:
        nonlocal last_end
        s.outcome = outcome
        s.end_s = t
        last_end = max(last_end, t)

    def decide(n: int, retry_after: float) -> tuple[bool, float]:
        if client["max_retries"] >= 0 and n >= client["max_retries"]:
            return False, 0.0
        cap = client["retry_after_cap_s"]
        if client["honour_retry_after"] and retry_after >= 0:
            if cap is None or retry_after <= cap:
                return True, retry_after
            if client["over_cap_give_up"]:
                return False, 0.0
        delay = min(client["base_s"] * client["multiplier"] ** n, client["max_s"])
        give_up = client["give_up_above_s"]
        if give_up is not None and delay > give_up:
            return False, 0.0
        return True, delay

    for i, s in enumerate(sessions):
        if not s.requests:
            s.start_s = s.end_s = s.start
            continue
        schedule(s.start + s.requests[0][4], i, SEND)

    while queue:
        t, _, i, kind = heapq.heappop(queue)
        s = sessions[i]
        if kind == SEND:
            prompt, output, reasoning, max_tokens, _, runs = s.requests[s.next]
            if not started or t < first_send:
                first_send = t
            if s.attempts == 0:
                s.start_s = t
            started = True
            s.attempts += 1
            cached = cache.lookup(runs, prompt, t)
            write = max(0, cache.cacheable(prompt) - cached) if write_charged else 0
            tokens = [prompt - cached - write, cached, write, output, reasoning]
            if sum(tokens) > window:
                finish(s, "context_overflow", t)
                continue
            charges = []
            wait = 0.0
            too_large = False
            for b, bucket in zip(tgt["limits"], buckets):
                c = charge_for(b, tokens, max_tokens)
                charges.append(c)
                w = bucket.wait_for(c[0], t)
                if w == math.inf:
                    too_large = True
                    break
                wait = max(wait, w)
            if too_large:
                finish(s, "request_too_large", t)
                continue
            if wait > 0:
                s.rate_limited += 1
                retry, delay = decide(s.attempt, wait if tgt["sends_retry_after"] else -1.0)
                if not retry or s.attempt + 1 >= client["max_attempts_per_request"]:
                    finish(s, "died_after_retries", t)
                    continue
                s.attempt += 1
                s.stall_s += delay
                schedule(t + delay, i, SEND)
                continue
            # Admitted: time, price, charge, cache once prefilled, complete later.
            k = float(cached)
            full = k + float(prompt - cached)
            ttft = speed["overhead_s"] + integrate(speed["prefill"], k, full) + k * speed["cached_token_s"]
            decode = integrate(speed["decode"], full, full + float(output + reasoning))
            t_first = t + ttft
            t_end = t_first + decode
            cost = 0.0
            for n, p in zip(tokens, prices):
                cost += float(n) * p * 1e-6
            token_cost += cost
            for bucket, (now, later) in zip(buckets, charges):
                bucket.charge(now, t)
            s.at_completion = [later for _, later in charges]
            s.in_flight_tokens = tokens
            s.in_flight_cost = cost
            cache.touch(runs, prompt, t_first)
            schedule(t_end, i, COMPLETE)
        else:
            for bucket, d in zip(buckets, s.at_completion):
                if d != 0.0:
                    bucket.adjust(d, t)
            s.served += 1
            served_requests += 1
            s.tokens = [a + b for a, b in zip(s.tokens, s.in_flight_tokens)]
            s.cost_usd += s.in_flight_cost
            last_end = max(last_end, t)
            s.next += 1
            if s.next == len(s.requests):
                finish(s, "completed", t)
            else:
                s.attempt = 0
                schedule(t + s.requests[s.next][4], i, SEND)

    tokens = [sum(s.tokens[c] for s in sessions) for c in range(5)]
    return {
        "sessions": [{"outcome": s.outcome, "requests_served": s.served, "attempts": s.attempts,
                      "rate_limited": s.rate_limited, "start_s": s.start_s, "end_s": s.end_s,
                      "stall_s": s.stall_s, "cost_usd": s.cost_usd} for s in sessions],
        "attempts": sum(s.attempts for s in sessions),
        "requests": served_requests,
        "tokens": tokens,
        "cost_usd": token_cost,
        "wall_s": last_end - first_send if started else 0.0,
    }
