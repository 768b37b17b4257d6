"""Rendered frames of a Fetch episode, written as PNG files while it runs.

``FrameRecorder(env, folder, every)`` is an ``on_step`` callback (``runner.execute_program``):
it renders the first state and then every ``every``-th step to ``folder/frame_00000.png`` ….
Rendering needs a GL back-end: ``MUJOCO_GL=egl`` on a GPU, ``MUJOCO_GL=osmesa`` on a CPU
(Debian: ``apt-get install libosmesa6``); a failure is a :class:`RenderError`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from asg.planning.errors import AsgError


class RenderError(AsgError):
    """The env could not render a frame (no usable GL back-end)."""


class FrameRecorder:
    """Renders every ``every``-th step of ``env`` to ``folder/frame_NNNNN.png``; ``count`` frames so far."""

    def __init__(self, env: Any, folder: str | Path, every: int) -> None:
        self.env, self.folder, self.every = env, Path(folder), every
        self.step = self.count = 0
        self.folder.mkdir(parents=True, exist_ok=True)
        self.write()

    def __call__(self, env: Any) -> None:
        self.step += 1
        if self.step % self.every == 0:
            self.write()

    def write(self) -> None:
        """Render the env now and save the frame."""
        import matplotlib.pyplot as plt

        try:
            frame = self.env.render()
        except Exception as err:  # GL back-ends fail in many ways; say what to do instead
            raise RenderError(f"rendering failed ({type(err).__name__}: {err}); set MUJOCO_GL=egl or "
                              "MUJOCO_GL=osmesa (Debian: apt-get install libosmesa6)") from None
        plt.imsave(self.folder / f"frame_{self.count:05d}.png", frame)
        self.count += 1
