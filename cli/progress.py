"""Progress of long commands on stderr: a tqdm bar on a terminal, plain lines elsewhere.

On a terminal the bar is left at its final position with the reason it stopped (``solved``,
``budget reached``, ``interrupted``) instead of vanishing mid-way. Without a terminal (a log
file, CI, a pipe) tqdm's ``\\r`` redraws would write kilobytes, so one plain line is printed at
most every ``every_fraction`` of the total or ``every_seconds``, and one at the end.
"""
from __future__ import annotations

import sys
import time
from typing import IO, Any


def is_terminal(stream: IO[str]) -> bool:
    """True when ``stream`` is an interactive terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """Counts ``unit``s towards ``total``; ``update(n, note)`` sets the count, ``close(reason)`` ends."""

    def __init__(self, total: int, initial: int = 0, *, label: str, unit: str = "step", quiet: bool = False,
                 stream: IO[str] | None = None, every_fraction: float = 0.1, every_seconds: float = 30.0) -> None:
        self.total, self.n, self.label, self.unit, self.quiet = max(total, 1), initial, label, unit, quiet
        self.stream = stream if stream is not None else sys.stderr
        self.every_fraction, self.every_seconds = every_fraction, every_seconds
        self.note = ""
        self._start = time.monotonic()
        self._last_time, self._last_n = self._start, initial
        self._initial = initial
        self._bar: Any = None
        self._closed = False
        if not quiet and is_terminal(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=initial, unit=unit, unit_scale=True, dynamic_ncols=True,
                             file=self.stream, desc=label, leave=True)

    def update(self, n: int, note: str | None = None) -> None:
        """The count is now ``n`` (not an increment); ``note`` is shown beside it."""
        if note is not None:
            self.note = note
        if self._bar is not None:
            self._bar.update(n - self.n)
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
        self.n = n
        if self.quiet or self._bar is not None:
            return
        now = time.monotonic()
        if (n - self._last_n >= self.every_fraction * self.total) or now - self._last_time >= self.every_seconds:
            self._line(now)
            self._last_time, self._last_n = now, n

    def close(self, reason: str | None = None) -> None:
        """End at the current count; with a ``reason``, say why it stopped there."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            if reason:
                self._bar.set_postfix_str(reason, refresh=False)
                self._bar.refresh()
            else:
                self._bar.leave = False
            self._bar.close()
        elif not self.quiet and reason:
            self._line(time.monotonic(), reason)

    def _line(self, now: float, reason: str | None = None) -> None:
        percent = 100.0 * self.n / self.total
        elapsed, done = now - self._start, self.n - self._initial
        text = f"{self.label}: {self.n}/{self.total} {self.unit}s ({percent:.0f} %), {elapsed:.0f} s"
        if reason is None and 0 < done and self.n < self.total:  # remaining work at the rate so far
            text += f", ETA {_clock(elapsed * (self.total - self.n) / done)}"
        tail = reason or self.note
        print(text + (f", {tail}" if tail else ""), file=self.stream, flush=True)


def _clock(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Stages:
    """Draws a library's ``progress(stage, count, total, note)`` calls (``run_dir.StageProgress``):
    one :class:`Progress` per stage (in ``UNITS``, else env steps), closed as ``done`` when the next
    stage starts, or at :meth:`close` with its reason."""

    UNITS = {"goal policy": "cycle", "behaviour data": "episode", "behaviour model fit": "epoch",
             "meta-controller": "iteration"}

    def __init__(self, quiet: bool = False, stream: IO[str] | None = None) -> None:
        self.quiet, self.stream = quiet, stream
        self._stage: str | None = None
        self._bar: Progress | None = None

    def __call__(self, stage: str, count: int, total: int, note: str = "") -> None:
        if stage != self._stage:
            self.close("done" if self._stage is not None else None)
            self._stage = stage
            self._bar = Progress(total, count, label=stage, unit=self.UNITS.get(stage, "step"),
                                 quiet=self.quiet, stream=self.stream)
        assert self._bar is not None
        self._bar.update(count, note or None)

    def close(self, reason: str | None = None) -> None:
        """End the current stage's line or bar."""
        if self._bar is not None:
            self._bar.close(reason)
        self._bar, self._stage = None, None
