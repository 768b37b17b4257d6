"""DAgger with the queryable scripted expert: clone the expert's action in the states the learner visits.

Demonstrations alone (``demos.py``) show the policy the expert's own states; a policy that
drifts off them (a nudged neighbour, a grasp a few millimetres off, a block still held over its
target) has never seen what to do there, and its errors compound over the 50 steps (Ross et
al. 2011, "A reduction of imitation learning and structured prediction to no-regret online
learning"). Here every state of every collected episode with a program goal is labelled with
:func:`asg.envs.fetch.expert.expert_action` (the scripted controller with its phase read off the
state) and kept in :class:`ExpertLabels`; each update adds a behaviour-cloning term on a batch of
them to the actor loss. The policy stays the DDPG actor; episodes are still collected by the
learner's own exploring policy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from asg.envs.fetch import expert_actions
from asg.learning.goal_policy.rollout import Episodes


class ExpertLabels:
    """A ring buffer of (observation, goal, expert action) rows, policy frame, float32."""

    def __init__(self, capacity: int, obs_dim: int, goal_dim: int, act_dim: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity, self.dims = capacity, (obs_dim, goal_dim, act_dim)
        self.o = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.g = np.zeros((capacity, goal_dim), dtype=np.float32)
        self.u = np.zeros((capacity, act_dim), dtype=np.float32)
        self.size = 0
        self.next = 0

    def __len__(self) -> int:
        return self.size

    def add(self, o: np.ndarray, g: np.ndarray, u: np.ndarray) -> None:
        """Add n rows: o (n, od), g (n, gd), u (n, ad); the oldest are overwritten when full."""
        n = o.shape[0]
        rows = (self.next + np.arange(n)) % self.capacity
        self.o[rows], self.g[rows], self.u[rows] = o, g, u
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` rows drawn uniformly with replacement."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty buffer")
        idx = rng.integers(self.size, size=size)
        return self.o[idx], self.g[idx], self.u[idx]

    def state_dict(self) -> dict[str, Any]:
        n = self.size
        return {"capacity": self.capacity, "dims": self.dims, "next": self.next,
                "o": self.o[:n].copy(), "g": self.g[:n].copy(), "u": self.u[:n].copy()}

    @classmethod
    def from_state_dict(cls, data: dict[str, Any]) -> ExpertLabels:
        buf = cls(int(data["capacity"]), *map(int, data["dims"]))
        n = len(data["o"])
        buf.o[:n], buf.g[:n], buf.u[:n] = data["o"], data["g"], data["u"]
        buf.size, buf.next = n, int(data["next"])
        return buf


def label_episodes(episodes: Episodes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The visited states of the episodes with a program goal and the expert's action in each.

    Episodes are in the policy frame, so the block to move is block 0. Uniform phase-1 goals
    (no program) are skipped: the expert places blocks, it does not hold them in the air.
    """
    keep = [i for i, p in enumerate(episodes.programs) if p is not None]
    od, gd = episodes.o.shape[-1], episodes.g.shape[-1]
    if not keep:
        return (np.zeros((0, od), np.float32), np.zeros((0, gd), np.float32),
                np.zeros((0, episodes.u.shape[-1]), np.float32))
    horizon = episodes.u.shape[1]
    o = episodes.o[keep, :horizon].reshape(-1, od)
    g = np.repeat(episodes.g[keep], horizon, axis=0)
    return o, g, expert_actions(o, g, block=0)
