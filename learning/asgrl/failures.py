"""When the world's own code fails mid-run: save the run where it is consistent, say so in one line.

The trainer tells a ``FailureSite`` where it stands (``bind`` once, ``before_episode`` before each
training episode); a ``UserCodeError`` of the env or the labeler (``asg.envs.user_code``) then
becomes a ``RunFailedError`` after ``failed`` has written the checkpoint:

* at the reset of a training episode (the env's ``reset``, or the labeler on the reset state):
  nothing of that episode was learned, and the trainer's generator is set back to before the
  episode's seed was drawn, so the checkpoint is the run just before that episode;
* at step N of a training episode: the learner has ended the episode at step N - 1, as a
  truncated one (``episode.Learner``), keeping every update made so far; the checkpoint is the
  run after that shortened episode;
* in an evaluation: evaluations change no learner, so the checkpoint is the run before the
  evaluation, which a resumed run makes again first.

A resumed run, with the code fixed, continues from there. It repeats a run that never failed
exactly when the failure came before an episode or in an evaluation; after a failure mid-episode
it is the run whose episode ended at step N - 1, identical up to that episode and not after.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from asg.envs.user_code import GuardedEnv, UserCodeError
from asg.learning.errors import RunFailedError


@dataclass
class _Point:
    """The run before a training episode: episodes done, the seed generator's state, evaluation resets."""

    episodes: int
    rng_state: dict[str, Any]
    eval_resets: int


class FailureSite:
    """Where a run stands, so that a failure of the world's code is saved at the last consistent point."""

    def __init__(self) -> None:
        self.learner: Any = None
        self.state: Any = None  # the trainer's TrainerState (rng, recent)
        self.env: GuardedEnv | None = None
        self.eval_env: GuardedEnv | None = None
        self.checkpoint: Callable[[], None] | None = None  # None: no run folder, nothing is saved
        self.point: _Point | None = None

    def bind(self, learner: Any, state: Any, env: GuardedEnv, eval_env: GuardedEnv,
             checkpoint: Callable[[], None] | None) -> None:
        """The run's learner, loop state, training and evaluation envs and its checkpoint writer."""
        self.learner, self.state, self.env, self.eval_env = learner, state, env, eval_env
        self.checkpoint = checkpoint

    def before_episode(self) -> None:
        """Remember the run as it is before the next training episode draws its seed."""
        assert self.eval_env is not None
        self.point = _Point(self.learner.episodes, self.state.rng.bit_generator.state, self.eval_env.resets)

    @contextmanager
    def saving(self) -> Iterator[None]:
        """Within the block, a ``UserCodeError`` of a bound run becomes a ``RunFailedError`` (``failed``)."""
        try:
            yield
        except UserCodeError as exc:
            if self.learner is None:  # before the run began (building the domain): the error as it is
                raise
            raise self.failed(exc) from exc

    def failed(self, error: UserCodeError) -> RunFailedError:
        """Checkpoint at the last consistent point (module docstring) and describe it in one line."""
        assert self.learner is not None and self.env is not None and self.eval_env is not None, "bind first"
        point, learner = self.point, self.learner
        if point is not None and self.eval_env.resets == point.eval_resets:  # in a training episode
            step = error.step if error.step is not None else self.env.steps
            at = f"episode {point.episodes + 1}, " + ("reset" if step == 0 else f"step {step}")
            if learner.episodes > point.episodes:  # the learner ended it at the step before
                self.state.recent = (self.state.recent + [False])[-20:]
                cut = f"after step {step - 1}" if step > 1 else "before its first step"
                saved = f"after episode {learner.episodes}, cut short {cut}"
            else:
                self.state.rng.bit_generator.state = point.rng_state  # the episode's seed is drawn again
                saved = f"at episode {learner.episodes}"
        else:
            step = error.step if error.step is not None else self.eval_env.steps
            episode = self.eval_env.resets - (point.eval_resets if point is not None else 0)
            at = (f"evaluation episode {episode} after {learner.env_steps} env steps, "
                  + ("reset" if step == 0 else f"step {step}"))
            saved = f"at episode {learner.episodes} (the evaluation runs again on resume)"
        return self.report(error, at, saved)

    def report(self, error: UserCodeError, at: str, saved: str) -> RunFailedError:
        """Write the checkpoint (the learner being consistent) and say in one line that ``error``
        came at ``at`` and what the checkpoint holds (``saved``); ``failed`` and the lockstep
        loop's failures (``asgrl.lockstep``) both end here."""
        where = error.where()
        head = f"{error.what()} at {at}" + (f" ({where})" if where else "")
        if self.checkpoint is None:
            return RunFailedError(head + "; nothing saved (no run folder)", saved=False)
        self.checkpoint()
        return RunFailedError(head + f"; checkpoint written {saved}, {self.learner.env_steps} env steps", saved=True)
