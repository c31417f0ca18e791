"""Progress bars for long work (Monte Carlo, sweeps, compare, solve), drawn by tqdm when it is installed."""

from __future__ import annotations

import contextlib
from typing import Iterator

from loopcast import _core

__all__ = ["show_progress"]

_enabled = True
DELAY_S = 2.0  # work shorter than this shows no bar


def show_progress(enabled: bool = True) -> None:
    """Turns the progress bars of long work on (the default, when tqdm is installed) or off."""
    global _enabled
    _enabled = bool(enabled)


@contextlib.contextmanager
def bars() -> Iterator[None]:
    """While C++ works: one tqdm bar per task (seeds, runs), shown after DELAY_S seconds, closed at its end."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # no tqdm: no bars
        tqdm = None
    if not _enabled or tqdm is None:
        yield
        return
    open_bars: dict[str, object] = {}

    def update(task: str, done: int, total: int, elapsed_s: float, finished: bool) -> None:
        bar = open_bars.get(task)
        if bar is None:
            if finished:
                return
            bar = open_bars[task] = tqdm(total=total, desc=task, unit="run", delay=DELAY_S, leave=False)
        bar.update(done - bar.n)
        if finished:
            bar.close()
            del open_bars[task]

    _core.set_progress(update)
    try:
        yield
    finally:
        _core.set_progress(None)
        for bar in open_bars.values():
            bar.close()
