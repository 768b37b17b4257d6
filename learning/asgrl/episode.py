"""What every learner exposes: one training episode, one frozen greedy episode, counters."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym

from asg.learning.asgrl.subgoals import Labeler, SubgoalSet


@dataclass(frozen=True)
class EpisodeStats:
    """One episode: env steps, success (task goal true), subgoals reached in order."""

    steps: int
    success: bool
    reached: tuple[str, ...] = ()
    skills: tuple[tuple[str, int], ...] = ()  # (subgoal, skill) run, hierarchical learners only
    seen: tuple[str, ...] = ()  # every labeler atom true at some step (greedy episodes only)
    # Each skill run, hierarchical learners only: (subgoal, labeler atoms true where it started,
    # those true where it reached its subgoal or None when it failed); what model hints read
    # (``asgrl.model_hints``). Not in ``to_json``.
    segments: tuple[tuple[str, frozenset[Any], frozenset[Any] | None], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"steps": self.steps, "success": self.success, "reached": list(self.reached),
                "skills": [list(s) for s in self.skills], "seen": list(self.seen)}


class Learner(Protocol):
    """A trainable agent; picklable as a whole (it holds no env and no labeler).

    When the world's own code raises (a ``UserCodeError`` of its env or labeler), an episode ends at
    the last step that completed, as a truncated one would: nothing of the failed step is learned,
    the steps before it and the episode are counted, and then the error is raised. A failure at
    the reset changes nothing. Either way the learner is consistent, as between episodes.
    """

    subgoals: SubgoalSet
    env_steps: int
    episodes: int

    def train_episode(self, env: gym.Env, labeler: Labeler, seed: int, budget: int) -> EpisodeStats:
        """Act, learn and count at most ``budget`` env steps."""
        ...

    def greedy_episode(self, env: gym.Env, labeler: Labeler, seed: int) -> EpisodeStats:
        """Run the frozen greedy policy; changes nothing in the learner."""
        ...
