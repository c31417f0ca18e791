"""Ctrl-C inside long calls into C++: each stops within a simulation's 16,384 events (or before its
next seed or draw), raises KeyboardInterrupt, and leaves Python's own SIGINT handler in place.

Each call below would run for minutes; SIGINT is sent once the C++ work is known to be running (its
first progress report, or a timer for the forecast, which reports none). The bound of 2 s between
the signal and the exception is the issue's; the whole call is also bounded far below the work it
was given."""

import contextlib
import json
import os
import signal
import threading
import time

import pytest

import loopcast
from loopcast import _core, _progress


@contextlib.contextmanager
def _interrupt_at_first_progress():
    """While in force: the first progress report of any C++ task sends this process SIGINT."""
    sent, reports = [], []

    def update(task, done, total, elapsed_s, finished):
        reports.append((task, done, total, finished))
        if not sent and not finished:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    _core.set_progress(update)
    try:
        yield sent, reports
    finally:
        _core.set_progress(None)


def test_monte_carlo_stops_on_ctrl_c(models, monkeypatch):
    with _interrupt_at_first_progress() as (sent, reports):
        monkeypatch.setattr(_progress, "bars", contextlib.nullcontext)  # (no tqdm bar in the way)
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            loopcast.monte_carlo("reference", 1_000_000, models=models)
        done = time.monotonic()
    assert sent and done - sent[0] < 2.0 and done - start < 30
    # The task ended at the signal, not at its end (its last report, the finished one, says so).
    last = reports[-1]
    assert last[3] and last[1] < last[2] == 1_000_000
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's handler is back
    # The next call runs normally (the request is forgotten).
    assert len(loopcast.monte_carlo("reference", 2, models=models).to_pandas()) == 4


def test_replay_stops_on_ctrl_c(tmp_path, models):
    # A loopcast trace of 60,000 requests in one session: its replay reports its progress every
    # 16,384 events, and the first report sends SIGINT.
    log = tmp_path / "long.jsonl"
    with open(log, "w") as f:
        f.write(json.dumps({"loopcast_trace": 1, "source": "test", "source_format": "claude-code", "absolute_clock": True,
                            "has_prefix": False, "lineages": 0}) + "\n")
        t = 1.77e9
        for i in range(60_000):
            f.write(json.dumps({"session": "s", "parent": None, "model": "claude-opus-4-6", "t_send": t,
                                "t_first_token": None, "t_end": t + 2, "delay_before_s": None, "input": 1000,
                                "cache_read": 0, "cache_write": 0, "output": 100, "reasoning": 0, "compaction": False,
                                "new_context": True, "cost_usd": None}) + "\n")
            t += 10
    with _interrupt_at_first_progress() as (sent, reports):
        with pytest.raises(KeyboardInterrupt):
            loopcast.replay(log, ["anthropic-tier4-claude-opus-4.6", "local-workstation-qwen-27b"], models=models)
        done = time.monotonic()
    assert sent and done - sent[0] < 2.0
    # The first option's simulation stopped at the 16,384-event check after the signal: its finished
    # report has served fewer than its 60,000 requests, and the second option never started.
    finished = [r for r in reports if r[3]]
    assert len(finished) == 1 and finished[0][1] < finished[0][2] == 60_000
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_forecast_stops_on_ctrl_c(traces, models):
    log = traces / "claude-code-jsonl" / "tool_heavy.jsonl"
    sent = []
    timer = threading.Timer(1.0, lambda: (sent.append(time.monotonic()), os.kill(os.getpid(), signal.SIGINT)))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            loopcast.forecast(log, "claude-max-5x-opus-4.7", limits={"five_hour": 2_000_000_000, "weekly": 20_000_000_000},
                              draws=100_000, work_budget=10_000_000_000, models=models)
    finally:
        timer.cancel()
    done = time.monotonic()
    assert sent and done - sent[0] < 2.0 and done - start < 30
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
