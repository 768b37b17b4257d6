"""Evaluation done right: greedy, frozen policies, N episodes per point, curves over seeds.

The official ASGRL code evaluated one exploring, still-learning episode every 5 episodes
(reference_code.md §1.5, §1.7). Here ``evaluate`` runs ``greedy_episode`` (no learning, no
exploration, no counting) on a separate env with fixed seeds, and the curve helpers put runs of
several seeds on a common env-step grid with a 95 % normal-approximation confidence band.

The paper's final success (Sec. 5: "running the learned policies with a low exploration
probability 10 times") is ``evaluate(..., epsilon=0.05)``: the same frozen policy, whose every
primitive action is replaced by a uniform random one with probability ε (``EpsilonActions``, an
env wrapper, so it applies to every learner alike: the skills of a hierarchical learner explore,
its meta-controller stays greedy, as in the official skills' ``is_eval``, §1.5). The random
actions come from a generator seeded by each episode's reset seed, so the result is reproducible.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from asg.learning.asgrl.episode import EpisodeStats, Learner
from asg.learning.asgrl.subgoals import Labeler, SubgoalSet


@dataclass(frozen=True)
class EvalResult:
    """Success rate and episode details of one evaluation point."""

    success_rate: float
    episodes: tuple[EpisodeStats, ...]

    @property
    def mean_steps(self) -> float:
        """Mean env steps per evaluation episode."""
        return float(np.mean([e.steps for e in self.episodes])) if self.episodes else 0.0

    @property
    def mean_reached(self) -> float:
        """Mean number of subgoals reached per episode."""
        return float(np.mean([len(e.reached) for e in self.episodes])) if self.episodes else 0.0


REACHED = "reached_"  # metrics.csv: reached_<landmark>, the share of a point's episodes reaching it


def reached_rates(result: EvalResult, subgoals: SubgoalSet) -> dict[str, float]:
    """``reached_<landmark>`` -> the share of ``result``'s episodes that reached it (in subgoal order; a
    goal subgoal counts as reached in a successful episode, which flat learners do not list)."""
    n = len(result.episodes) or 1
    return {REACHED + sg.name: round(sum(sg.name in e.reached or (sg.goal and e.success)
                                         for e in result.episodes) / n, 4) for sg in subgoals.subgoals}


def protocol(curve_eval: str, epsilon: float) -> str:
    """The name of a curve's evaluation protocol: ``greedy`` or ``ε-greedy (ε = 0.05)``."""
    return "greedy" if curve_eval == "greedy" else f"ε-greedy (ε = {epsilon:g})"


def stall_line(reached: dict[str, int], episodes: int, success: float, what: str = "evaluation") -> str | None:
    """Where an unsolved run stops, for a terminal: ``stalled: ...`` when a landmark is reached in every
    episode and the next one (in subgoal order) in none, else every landmark's count; None when
    solved. ``reached``: landmark -> episodes reaching it; ``what``: the episodes' protocol."""
    if success >= 1.0 or not reached:
        return None
    names = list(reached)
    first = next((i for i, name in enumerate(names) if reached[name] == 0), None)
    if first == 0:
        return f"stalled: reached {names[0]} (the first landmark) in 0/{episodes} {what} episodes"
    if first is not None and reached[names[first - 1]] == episodes:
        return (f"stalled: reached {names[first - 1]} in {episodes}/{episodes} {what} episodes, "
                f"{names[first]} in 0/{episodes}")
    counts = ", ".join(f"{name} {k}/{episodes}" for name, k in reached.items())
    return f"landmarks reached in {episodes} {what} episodes: {counts}"


def eval_seeds(seed: int, episodes: int) -> list[int]:
    """The fixed reset seeds of every evaluation point of a run."""
    state = np.random.SeedSequence([seed, 0xE7A1]).generate_state(episodes)
    return [int(x) for x in state]


def epsilon_eval_seeds(seed: int, episodes: int) -> list[int]:
    """The fixed reset seeds of a run's ε evaluation (disjoint stream from ``eval_seeds``)."""
    state = np.random.SeedSequence([seed, 0xE95]).generate_state(episodes)
    return [int(x) for x in state]


class EpsilonActions(gym.Wrapper):
    """With probability ``epsilon`` each step's action becomes a uniform random one.

    ε-greedy on the frozen policy: the policy's own choice is the greedy one, so the wrapped
    behaviour is exactly ε-greedy over primitive actions. ``reset(seed=s)`` reseeds the action
    noise from ``s`` (same seed, same episode).
    """

    def __init__(self, env: gym.Env, epsilon: float) -> None:
        super().__init__(env)
        self.epsilon = float(epsilon)
        self._rng = np.random.default_rng(0)

    def reset(self, *, seed: int | None = None, options: dict | None = None):  # type: ignore[override]
        """Reset the env and reseed the action noise from ``seed``."""
        self._rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else int(seed), 0xE95]))
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any):  # type: ignore[override]
        """Step with ``action``, or with a random action with probability ε."""
        if self.epsilon > 0.0 and self._rng.random() < self.epsilon:
            action = int(self._rng.integers(int(self.env.action_space.n)))  # type: ignore[attr-defined]
        return self.env.step(action)


def evaluate(learner: Learner, env: gym.Env, labeler: Labeler, seeds: Sequence[int],
             epsilon: float = 0.0) -> EvalResult:
    """Run the frozen policy once per seed: greedy, or ε-greedy over primitive actions."""
    run_env = EpsilonActions(env, epsilon) if epsilon > 0.0 else env
    episodes = tuple(learner.greedy_episode(run_env, labeler, int(seed)) for seed in seeds)
    rate = sum(e.success for e in episodes) / len(episodes) if episodes else 0.0
    return EvalResult(rate, episodes)


def step_grid(total_steps: int, points: int = 100) -> np.ndarray:
    """An env-step grid from 0 to ``total_steps``; (points + 1,)."""
    return np.linspace(0, total_steps, points + 1)


def curve_on_grid(steps: Sequence[float], values: Sequence[float], grid: np.ndarray) -> np.ndarray:
    """Step-hold a run's (steps, values) curve onto ``grid``; 0 before the first point and the
    last value after the last one (a run that stopped early keeps its final success)."""
    steps_arr = np.asarray(steps, dtype=float)
    vals = np.asarray(values, dtype=float)
    if steps_arr.size == 0:
        return np.zeros_like(grid, dtype=float)
    idx = np.searchsorted(steps_arr, grid, side="right") - 1
    out = np.where(idx >= 0, vals[np.clip(idx, 0, None)], 0.0)
    return out.astype(float)


def mean_band(curves: np.ndarray, z: float = 1.96) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds and a ±z·s.e.m. band; curves: (seeds, points)."""
    curves = np.atleast_2d(curves)
    mean = curves.mean(axis=0)
    if curves.shape[0] < 2:
        return mean, mean.copy(), mean.copy()
    sem = curves.std(axis=0, ddof=1) / np.sqrt(curves.shape[0])
    return mean, np.clip(mean - z * sem, 0.0, 1.0), np.clip(mean + z * sem, 0.0, 1.0)
