"""Replay storage: whole episodes for HER, and the final-state buffer of Algorithm 2.

:class:`EpisodeBuffer` is a ring buffer of fixed-length episodes (float32 arrays with a leading
episode axis, the layout ``her.sample_transitions`` reads). The trainer keeps two: one for the
agent's own episodes, capacity ``buffer_size`` transitions, and one for demonstrations, which is
never overwritten (Nair et al. 2018 keep demo transitions apart). :class:`StateBuffer` keeps the
final states of past episodes, so that phase 2 can start an episode where an earlier one ended
(AlphaNPI-X Appendix E.1: "we store the final states of all episodes in a buffer").
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from asg.learning.goal_policy.her import RewardFn, Transitions, sample_transitions


class EpisodeBuffer:
    """A ring buffer of ``capacity`` episodes of ``horizon`` steps."""

    def __init__(self, capacity: int, horizon: int, obs_dim: int, goal_dim: int, act_dim: int) -> None:
        if capacity < 1 or horizon < 1:
            raise ValueError("capacity and horizon must be >= 1")
        self.capacity, self.horizon = capacity, horizon
        self.dims = (obs_dim, goal_dim, act_dim)
        self.o = np.zeros((capacity, horizon + 1, obs_dim), dtype=np.float32)
        self.ag = np.zeros((capacity, horizon + 1, goal_dim), dtype=np.float32)
        self.g = np.zeros((capacity, goal_dim), dtype=np.float32)
        self.u = np.zeros((capacity, horizon, act_dim), dtype=np.float32)
        self.size = 0  # filled episodes
        self.next = 0  # row the next episode goes to
        self.stored = 0  # episodes ever stored

    @classmethod
    def for_transitions(cls, transitions: int, horizon: int, obs_dim: int, goal_dim: int,
                        act_dim: int) -> EpisodeBuffer:
        """A buffer holding ``transitions`` transitions (rounded down to whole episodes, at least one)."""
        return cls(max(1, transitions // horizon), horizon, obs_dim, goal_dim, act_dim)

    def __len__(self) -> int:
        return self.size

    @property
    def transitions(self) -> int:
        return self.size * self.horizon

    def store(self, o: np.ndarray, ag: np.ndarray, g: np.ndarray, u: np.ndarray) -> None:
        """Add n episodes: o (n, T+1, od), ag (n, T+1, gd), g (n, gd), u (n, T, ad)."""
        n = o.shape[0]
        if o.shape[1:] != self.o.shape[1:] or u.shape[1:] != self.u.shape[1:]:
            raise ValueError(f"episodes of shape {o.shape}/{u.shape} do not fit {self.o.shape}/{self.u.shape}")
        rows = (self.next + np.arange(n)) % self.capacity
        self.o[rows], self.ag[rows], self.g[rows], self.u[rows] = o, ag, g, u
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)
        self.stored += n

    def sample(self, size: int, rng: np.random.Generator, reward_fn: RewardFn, strategy: str = "future",
               replay_k: int = 4) -> Transitions:
        """``size`` HER transitions from the stored episodes."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty buffer")
        return sample_transitions(self.o, self.ag, self.g, self.u, self.size, size, rng, reward_fn,
                                  strategy, replay_k)

    def state_dict(self) -> dict[str, Any]:
        """The filled rows and the ring position (for checkpoints)."""
        n = self.size
        return {"capacity": self.capacity, "horizon": self.horizon, "dims": self.dims, "size": n,
                "next": self.next, "stored": self.stored, "o": self.o[:n].copy(), "ag": self.ag[:n].copy(),
                "g": self.g[:n].copy(), "u": self.u[:n].copy()}

    @classmethod
    def from_state_dict(cls, data: dict[str, Any]) -> EpisodeBuffer:
        buf = cls(int(data["capacity"]), int(data["horizon"]), *map(int, data["dims"]))
        n = int(data["size"])
        buf.o[:n], buf.ag[:n], buf.g[:n], buf.u[:n] = data["o"], data["ag"], data["g"], data["u"]
        buf.size, buf.next, buf.stored = n, int(data["next"]), int(data["stored"])
        return buf


class StateBuffer:
    """A ring buffer of restorable states with the raw observation each one shows."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self.states: list[Any] = []
        self.obs: list[np.ndarray] = []
        self.next = 0

    def __len__(self) -> int:
        return len(self.states)

    def add(self, state: Any, obs: np.ndarray) -> None:
        """Keep ``state`` (e.g. a ``SimState``) and its observation, replacing the oldest when full."""
        obs = np.asarray(obs, dtype=np.float64).copy()
        if len(self.states) < self.capacity:
            self.states.append(state)
            self.obs.append(obs)
        else:
            self.states[self.next], self.obs[self.next] = state, obs
        self.next = (self.next + 1) % self.capacity

    def sample(self, rng: np.random.Generator, accept: Callable[[np.ndarray], bool] | None = None,
               tries: int = 32) -> tuple[Any, np.ndarray] | None:
        """A uniformly drawn (state, obs) whose obs passes ``accept`` (None after ``tries`` misses)."""
        if not self.states:
            return None
        for _ in range(tries):
            i = int(rng.integers(len(self.states)))
            if accept is None or accept(self.obs[i]):
                return self.states[i], self.obs[i]
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "states": list(self.states), "obs": list(self.obs), "next": self.next}

    @classmethod
    def from_state_dict(cls, data: dict[str, Any]) -> StateBuffer:
        buf = cls(int(data["capacity"]))
        buf.states, buf.obs, buf.next = list(data["states"]), list(data["obs"]), int(data["next"])
        return buf
