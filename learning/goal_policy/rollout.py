"""Batched episodes: a batch of goal-task envs stepped in lock-step by one numpy policy.

Per step the only Python work besides the envs' own is one batched MLP forward in numpy (no torch
in the workers). The envs are a :class:`BatchEnv` made by a :class:`GoalTask`: the Fetch world's
is ``asg.envs.fetch.FetchTask`` / ``FetchBatch`` (observations rotated so that the focus block
comes first, AlphaNPI-X Appendix D.1), tests use toys. The stored episodes are in the policy's
frame, and the achieved goal is the first ``goal_dim`` values of the observation.

What an episode starts from is an :class:`EpisodeSpec` (plain data, so a Ray actor can run it):
a fresh reset for a program (goal Θ(s0, i)) or with a uniformly drawn goal for the focus block
(phase 1), a stored state (phase 2's no-reset starts), or a state along a demonstration with its
goal (Nair et al. 2018's resets). All randomness of an episode comes from its spec's seed, so the
same specs give the same episodes however they are split among workers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from asg.learning.goal_policy.config import ExploreConfig
from asg.learning.goal_policy.normalizer import NormStats


@dataclass(frozen=True)
class EpisodeSpec:
    """How one episode starts (see the module docstring)."""

    seed: int
    program: str | None = None  # atomic program: goal Θ(s0, program); None = uniform goal for the focus
    focus: int | None = None  # focus block of a uniform goal or a demo reset (None = drawn)
    state: Any = None  # restorable state to start from (a ``SimState``); None = a fresh reset
    goal: np.ndarray | None = None  # a fixed goal in env frame (demo resets), with ``state``
    progress: float = 0.0  # annealing of the start distribution (D.1), in [0, 1]


@dataclass(frozen=True)
class Episodes:
    """n finished episodes, policy frame (float32) plus what the trainer and Algorithm 3 keep."""

    o: np.ndarray  # (n, T+1, od)
    ag: np.ndarray  # (n, T+1, gd)
    g: np.ndarray  # (n, gd)
    u: np.ndarray  # (n, T, ad)
    success: np.ndarray  # (n,) goal reached at the last step
    programs: tuple[str | None, ...]
    start_obs: np.ndarray  # (n, raw) env frame, float64
    final_obs: np.ndarray  # (n, raw)
    final_states: tuple[Any, ...]

    def __len__(self) -> int:
        return int(self.o.shape[0])

    @staticmethod
    def concat(parts: Sequence[Episodes]) -> Episodes:
        """Episodes of several batches, in order."""
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
        return Episodes(cat("o"), cat("ag"), cat("g"), cat("u"), cat("success"),
                        tuple(x for p in parts for x in p.programs), cat("start_obs"), cat("final_obs"),
                        tuple(x for p in parts for x in p.final_states))


class BatchEnv(Protocol):
    """n envs stepped together; observations in the policy frame (achieved goal first)."""

    n: int
    horizon: int

    def start(self, specs: Sequence[EpisodeSpec]) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Start len(specs) <= n episodes: observations (m, od), goals (m, gd), programs."""

    def step(self, actions: np.ndarray) -> np.ndarray:
        """Apply actions (m, ad); the next observations (m, od)."""

    def raw_obs(self) -> np.ndarray:
        """The active envs' observations in env frame (m, raw)."""

    def states(self) -> list[Any]:
        """Restorable states of the active envs."""

    def reached(self, ag: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Whether achieved goals reach goals (batched)."""


class GoalTask(Protocol):
    """A goal-reaching task the trainer can learn (the Fetch world, or a toy in tests)."""

    obs_dim: int
    goal_dim: int
    act_dim: int
    horizon: int
    programs: tuple[str, ...]  # goal-setter programs; () = uniform goals only

    def make_batch(self, n_envs: int, threads: int = 1) -> BatchEnv: ...

    def compute_reward(self, ag: np.ndarray, g: np.ndarray, info: Any = None) -> np.ndarray: ...

    def applicable(self, raw_obs: np.ndarray, program: str) -> bool: ...


@dataclass(frozen=True)
class PolicySnapshot:
    """The actor as numpy arrays plus the normaliser statistics: what rollout workers run."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]  # (W (out, in), b (out,)), ReLU between, tanh last
    o_stats: NormStats
    g_stats: NormStats
    clip_obs: float

    def act(self, o: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Deterministic actions for observations (m, od) and goals (m, gd), float32 (m, ad)."""
        return self.act_normalized(self.o_stats.normalize(np.clip(o, -self.clip_obs, self.clip_obs)),
                                   self.g_stats.normalize(np.clip(g, -self.clip_obs, self.clip_obs)))

    def act_normalized(self, o_norm: np.ndarray, g_norm: np.ndarray) -> np.ndarray:
        """Actions for already normalised inputs."""
        x = np.concatenate([o_norm, g_norm], axis=-1).astype(np.float32, copy=False)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            x = np.maximum(x, 0.0) if i < len(self.layers) - 1 else np.tanh(x)
        return x


def _explore_tables(specs: Sequence[EpisodeSpec], horizon: int, act_dim: int, explore: ExploreConfig):
    """Per-episode noise, random-action masks and random actions, drawn from each spec's seed."""
    noise = np.empty((len(specs), horizon, act_dim), dtype=np.float32)
    mask = np.empty((len(specs), horizon), dtype=bool)
    rand = np.empty((len(specs), horizon, act_dim), dtype=np.float32)
    for i, spec in enumerate(specs):
        rng = np.random.default_rng([spec.seed, 1])
        noise[i] = rng.normal(size=(horizon, act_dim)) * explore.noise_eps
        mask[i] = rng.random(horizon) < explore.random_eps
        rand[i] = rng.uniform(-1.0, 1.0, size=(horizon, act_dim))
    return noise, mask, rand


def run_episodes(batch: BatchEnv, specs: Sequence[EpisodeSpec], policy: PolicySnapshot,
                 explore: ExploreConfig | None = None) -> Episodes:
    """Play len(specs) <= batch.n episodes of ``batch.horizon`` steps (greedy when ``explore`` is None)."""
    o0, g, programs = batch.start(specs)
    start_obs = batch.raw_obs()
    m, horizon = len(specs), batch.horizon
    o = np.empty((m, horizon + 1, o0.shape[1]), dtype=np.float32)
    o[:, 0] = o0
    g = np.asarray(g, dtype=np.float32)
    g_norm = policy.g_stats.normalize(np.clip(g, -policy.clip_obs, policy.clip_obs))
    act_dim = policy.layers[-1][0].shape[0]
    u = np.empty((m, horizon, act_dim), dtype=np.float32)
    tables = _explore_tables(specs, horizon, act_dim, explore) if explore is not None else None
    for t in range(horizon):
        o_norm = policy.o_stats.normalize(np.clip(o[:, t], -policy.clip_obs, policy.clip_obs))
        a = policy.act_normalized(o_norm, g_norm)
        if tables is not None:
            noise, mask, rand = tables
            a = np.clip(a + noise[:, t], -1.0, 1.0)
            a = np.where(mask[:, t, None], rand[:, t], a)
        u[:, t] = a
        o[:, t + 1] = batch.step(a)
    ag = o[:, :, :g.shape[1]].copy()
    success = np.asarray(batch.reached(ag[:, -1], g), dtype=bool)
    return Episodes(o, ag, g, u, success, tuple(programs), start_obs, batch.raw_obs(), tuple(batch.states()))


class RolloutWorker:
    """Runs any number of specs through one batch env of ``n_envs`` (locally or as a Ray actor)."""

    def __init__(self, task: GoalTask, n_envs: int, threads: int = 1) -> None:
        self.task = task
        self.batch = task.make_batch(n_envs, threads)

    def run(self, specs: Sequence[EpisodeSpec], policy: PolicySnapshot,
            explore: ExploreConfig | None = None) -> Episodes:
        """Episodes of all specs, in order, ``n_envs`` at a time."""
        n = self.batch.n
        parts = [run_episodes(self.batch, specs[i:i + n], policy, explore) for i in range(0, len(specs), n)]
        return Episodes.concat(parts)

    def close(self) -> None:
        close = getattr(self.batch, "close", None)
        if close is not None:
            close()
