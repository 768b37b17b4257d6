"""The code of a world of one's own, kept apart: what failed, where, and at which step.

A plug-in world runs the user's code on every env step: the env's ``reset`` and ``step`` and the
labeler's predicates. When that code raises, the error is a ``UserCodeError`` naming the call
(``env.step``, ``env.reset``, ``labeler atom (door-open)``), the exception and the line of the
user's file it came from (``user_frame``), never a traceback, so that a trainer can end the
episode where it stood, save the run and say what to fix.

``GuardedEnv`` wraps a plug-in env: it turns an exception of ``reset`` or ``step`` into an
``EnvCallError`` and counts the steps since the last reset, the step a failure names.
"""
from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path
from typing import Any

import gymnasium as gym

from asg.planning.errors import AsgError

# asg's own library code and the installed packages: a frame there is not the line to fix
_ROOT = Path(__file__).resolve().parents[1]
_NOT_USER = tuple(os.path.join(p, "") for p in ({_ROOT / name for name in ("planning", "envs", "learning", "cli")}
                                   | {Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "purelib",
                                                                                            "platlib")}))


class UserCodeError(AsgError):
    """The code of a world of one's own raised: ``call`` names what asg called, ``error`` is the exception."""

    def __init__(self, message: str, *, call: str = "", error: BaseException | None = None,
                 step: int | None = None) -> None:
        super().__init__(message)
        self.call, self.error, self.step = call, error, step

    def where(self) -> str:
        """``file:line`` of the user's code the exception came from (``user_frame``); "" when unknown."""
        return user_frame(self.error) if self.error is not None else ""

    def what(self) -> str:
        """``<call> raised <repr of the exception>`` on one line."""
        shown = " ".join(repr(self.error).split()) if self.error is not None else "an error"
        return f"{self.call or 'the world'} raised {shown[:300]}"


class EnvCallError(UserCodeError):
    """A plug-in env's ``reset`` or ``step`` raised (or ``step`` broke Gymnasium's API)."""


def user_frame(error: BaseException) -> str:
    """Where ``error`` was raised in the user's code: the innermost frame of its traceback outside
    asg's library and the installed packages (else the innermost of all), as ``file:line``, the
    file relative to the current folder when under it."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    mine = [f for f in frames if not str(Path(f.filename).resolve()).startswith(_NOT_USER)]
    frame = (mine or frames)[-1]
    path = Path(frame.filename)
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        shown = path.name
    return f"{shown}:{frame.lineno}"


class GuardedEnv(gym.Wrapper):
    """A plug-in env whose ``reset`` and ``step`` raise ``EnvCallError`` (with the step) on failure.

    ``steps``: steps since the last reset; ``resets``: resets so far.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps = 0
        self.resets = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """The env's reset; an exception becomes an ``EnvCallError`` at step 0."""
        self.steps = 0
        self.resets += 1
        try:
            return self.env.reset(**kwargs)
        except Exception as exc:
            raise EnvCallError(f"env.reset raised {type(exc).__name__}: {exc}", call="env.reset", error=exc,
                               step=0) from exc

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The env's step; an exception, or a result that is not Gymnasium's 5-tuple, becomes an
        ``EnvCallError`` naming the step."""
        try:
            result = self.env.step(action)
        except Exception as exc:
            raise EnvCallError(f"env.step raised {type(exc).__name__}: {exc}", call="env.step", error=exc,
                               step=self.steps + 1) from exc
        if not isinstance(result, tuple) or len(result) != 5:
            size = f"a {len(result)}-tuple" if isinstance(result, tuple) else f"a {type(result).__name__}"
            error = TypeError(f"env.step returned {size}; Gymnasium's API returns (obs, reward, terminated, "
                              "truncated, info)")
            raise EnvCallError(str(error), call="env.step", error=error, step=self.steps + 1)
        self.steps += 1
        return result
