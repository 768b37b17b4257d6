"""Evaluation done right: greedy, frozen policies, N episodes per point, curves over seeds.

The official ASGRL code evaluated one exploring, still-learning episode every 5 episodes
(reference_code.md §1.5, §1.7). Here ``evaluate`` runs ``greedy_episode`` (no learning, no
exploration, no counting) on a separate env with fixed seeds, and the curve helpers put runs of
several seeds on a common env-step grid with a 95 % normal-approximation confidence band.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import gymnasium as gym
import numpy as np

from asg.learning.episode import EpisodeStats, Learner
from asg.learning.subgoals import Labeler


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


def eval_seeds(seed: int, episodes: int) -> list[int]:
    """The fixed reset seeds of every evaluation point of a run."""
    state = np.random.SeedSequence([seed, 0xE7A1]).generate_state(episodes)
    return [int(x) for x in state]


def evaluate(learner: Learner, env: gym.Env, labeler: Labeler, seeds: Sequence[int]) -> EvalResult:
    """Run the frozen greedy policy once per seed."""
    episodes = tuple(learner.greedy_episode(env, labeler, int(seed)) for seed in seeds)
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
