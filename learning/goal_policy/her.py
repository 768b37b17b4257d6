"""Hindsight experience replay: sampling relabelled transitions, as one pure function.

Episodes are stored with a leading episode axis: observations ``o`` (E, T+1, od), achieved
goals ``ag`` (E, T+1, gd), the pursued goal ``g`` (E, gd) and actions ``u`` (E, T, ad). A
transition t of episode e is (o[e, t], u[e, t], o[e, t+1]). With probability
``k / (k + 1)`` its goal is replaced by an achieved goal of the same episode: a future one,
``ag[e, t']`` with t' uniform in [t+1, T] ("future"), or the last one ``ag[e, T]`` ("final",
the strategy of AlphaNPI-X Section 4.1). The reward is the env's own vectorised
``compute_reward(ag[e, t+1], goal, info={"o2": o[e, t+1]})``, so relabelled rewards are exactly what the env would
have paid for that goal.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

RewardFn = Callable[[np.ndarray, np.ndarray, Any], np.ndarray]  # GoalEnv.compute_reward(ag, g, info) -> r (N,)


@dataclass(frozen=True)
class Transitions:
    """A batch of N transitions (float32) and which ones were relabelled."""

    o: np.ndarray  # (N, od)
    o2: np.ndarray  # (N, od) next observation
    ag: np.ndarray  # (N, gd) achieved goal at o
    ag2: np.ndarray  # (N, gd) achieved goal at o2
    g: np.ndarray  # (N, gd) goal (relabelled or not)
    u: np.ndarray  # (N, ad)
    r: np.ndarray  # (N,) reward of reaching g at o2
    relabelled: np.ndarray  # (N,) bool

    def __len__(self) -> int:
        return int(self.o.shape[0])


def relabel_probability(replay_k: int) -> float:
    """The share of relabelled goals, k / (k + 1) (k = 4 gives 0.8)."""
    if replay_k < 0:
        raise ValueError(f"replay_k must be >= 0, got {replay_k}")
    return 1.0 - 1.0 / (1.0 + replay_k)


def sample_transitions(o: np.ndarray, ag: np.ndarray, g: np.ndarray, u: np.ndarray, n_episodes: int,
                       size: int, rng: np.random.Generator, reward_fn: RewardFn, strategy: str = "future",
                       replay_k: int = 4) -> Transitions:
    """``size`` transitions from the first ``n_episodes`` episodes, goals relabelled by ``strategy``."""
    if strategy not in ("future", "final"):
        raise ValueError(f"strategy must be 'future' or 'final', got {strategy!r}")
    if n_episodes < 1 or n_episodes > o.shape[0]:
        raise ValueError(f"n_episodes must be in 1..{o.shape[0]}, got {n_episodes}")
    horizon = u.shape[1]
    ep = rng.integers(n_episodes, size=size)
    t = rng.integers(horizon, size=size)
    relabel = rng.random(size) < relabel_probability(replay_k)
    offset = rng.random(size)  # drawn for every strategy, so both consume the same numbers
    if strategy == "future":
        target_t = t + 1 + np.floor(offset * (horizon - t)).astype(np.int64)  # in [t+1, T]
    else:
        target_t = np.full(size, horizon)
    goals = g[ep].copy()
    goals[relabel] = ag[ep[relabel], target_t[relabel]]
    ag2 = ag[ep, t + 1]
    reward = np.asarray(reward_fn(ag2, goals, {"o2": o[ep, t + 1]}), dtype=np.float32).reshape(size)
    f32 = lambda x: np.asarray(x, dtype=np.float32)  # noqa: E731
    return Transitions(f32(o[ep, t]), f32(o[ep, t + 1]), f32(ag[ep, t]), f32(ag2), f32(goals),
                       f32(u[ep, t]), reward, relabel)


def concat(a: Transitions, b: Transitions) -> Transitions:
    """Two batches as one (e.g. replay and demo transitions)."""
    return Transitions(*(np.concatenate([x, y]) for x, y in zip(
        (a.o, a.o2, a.ag, a.ag2, a.g, a.u, a.r, a.relabelled),
        (b.o, b.o2, b.ag, b.ag2, b.g, b.u, b.r, b.relabelled))))
