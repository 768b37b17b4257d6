"""Progress on stderr: the library's ``progress(stage, count, total, note)`` calls
(``run_dir.StageProgress``) drawn one stage at a time, as a tqdm bar on a terminal, left at its
end with the reason it stopped (``solved``, ``interrupted``, ``done``), or elsewhere (a log, CI,
a pipe) as plain lines with an ETA, at most one per ``every_fraction`` of the stage or
``every_seconds``, and one when it ends (tqdm's ``\\r`` redraws would fill a log)."""
from __future__ import annotations

import sys
import time
from typing import IO, Any

PLAIN = "{desc}: {n}/{total} {unit}s ({percentage:.0f} %), {elapsed}"


class Stages:
    """Draws ``progress(stage, count, total, note)``: one bar or line series per stage, counted in
    ``UNITS[stage]`` (else env steps), closed as ``done`` when the next stage begins."""

    UNITS = {"goal policy": "cycle", "behaviour data": "episode", "behaviour model fit": "epoch",
             "meta-controller": "iteration", "grid": "cell"}

    def __init__(self, quiet: bool = False, stream: IO[str] | None = None, every_fraction: float = 0.1,
                 every_seconds: float = 30.0) -> None:
        self.quiet, self.stream = quiet, stream if stream is not None else sys.stderr
        self.every_fraction, self.every_seconds = every_fraction, every_seconds
        self._stage: str | None = None
        self._bar: Any = None

    def __call__(self, stage: str, count: int, total: int, note: str = "") -> None:
        if stage != self._stage:
            self.close("done" if self._stage is not None else None)
            self._stage, self._total, self._start, self._first = stage, max(total, 1), time.monotonic(), count
            self._last, self._last_time, self._n, self._note = count, self._start, count, ""
            if not self.quiet and _is_terminal(self.stream):
                from tqdm import tqdm

                self._bar = tqdm(total=total, initial=count, unit=self.UNITS.get(stage, "step"), unit_scale=True,
                                 dynamic_ncols=True, file=self.stream, desc=stage, leave=True)
        self._note = note or self._note
        if self._bar is not None:
            self._bar.update(count - self._n)
            if note:
                self._bar.set_postfix_str(note, refresh=False)
        self._n = count
        now = time.monotonic()
        if self._bar is None and (count - self._last >= self.every_fraction * self._total
                                  or now - self._last_time >= self.every_seconds):
            self._line(now)
            self._last, self._last_time = count, now

    def close(self, reason: str | None = None) -> None:
        """End the current stage's bar or lines; with a ``reason``, say why it stopped there."""
        if self._bar is not None:
            self._bar.leave = bool(reason)
            if reason:
                self._bar.set_postfix_str(reason)
            self._bar.close()
        elif self._stage is not None and reason:
            self._line(time.monotonic(), reason)
        self._bar, self._stage = None, None

    def _line(self, now: float, reason: str | None = None) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        running = reason is None and self._first < self._n < self._total  # an ETA at the rate so far
        tail = ", ETA {remaining}" if running else ""
        text = tqdm.format_meter(self._n, self._total, now - self._start, prefix=self._stage or "",
                                 unit=self.UNITS.get(self._stage or "", "step"), initial=self._first,
                                 postfix=reason or self._note, bar_format=PLAIN + tail + "{postfix}")
        print(text, file=self.stream, flush=True)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
