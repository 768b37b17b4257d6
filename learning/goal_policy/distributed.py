"""Rollouts on Ray actors (``--workers N [--ray-address ADDR]``); Ray is imported only here, lazily.

Each actor is a :class:`rollout.RolloutWorker` with its own simulations. Every cycle the
learner sends the numpy policy snapshot once (``ray.put``) and a contiguous slice of the
episode specs to each actor, and concatenates the returned episodes in spec order. As every
episode's randomness comes from its spec's seed, N actors produce exactly the episodes one
local worker would (given the same envs per worker). Updates stay in the learner process,
which keeps the data flow of Algorithms 1-2. The paper averaged gradients over 28 MPI actors
instead; ``schedule.actors`` emulates that in the learner with batches of ``actors`` ×
``agent.batch_size`` (``config.ScheduleConfig``), and the workers here only share out the actors'
episodes. Install with ``pip install 'asg[distributed]'``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from asg.learning.errors import ConfigError
from asg.learning.goal_policy.config import ExploreConfig
from asg.learning.goal_policy.rollout import Episodes, EpisodeSpec, GoalTask, PolicySnapshot, RolloutWorker


def import_ray() -> Any:
    """The ``ray`` module, or a ``ConfigError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("workers > 1 and ray_address need Ray: pip install 'asg[distributed]'") from None
    return ray


def make_collector(task: GoalTask, n_envs: int, threads: int = 1, workers: int = 1,
                   ray_address: str | None = None) -> RolloutWorker | RayCollector:
    """A local worker (workers = 1, no address: no Ray needed) or Ray actors."""
    if workers <= 1 and ray_address is None:
        return RolloutWorker(task, n_envs, threads)
    return RayCollector(task, max(1, workers), n_envs, threads, ray_address)


class RayCollector:
    """``workers`` Ray actors with ``n_envs`` simulations each; the interface of ``RolloutWorker``."""

    def __init__(self, task: GoalTask, workers: int, n_envs: int, threads: int = 1,
                 address: str | None = None) -> None:
        ray = import_ray()
        self.ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            if address is None:  # a local cluster sized for the actors, quiet
                ray.init(num_cpus=workers * threads, include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        remote = ray.remote(num_cpus=threads)(RolloutWorker)
        self.actors = [remote.remote(task, n_envs, threads) for _ in range(workers)]

    def run(self, specs: Sequence[EpisodeSpec], policy: PolicySnapshot,
            explore: ExploreConfig | None = None) -> Episodes:
        """Episodes of all specs in order, the specs split contiguously over the actors."""
        bounds = np.linspace(0, len(specs), len(self.actors) + 1).astype(int)
        ref = self.ray.put(policy)
        futures = [actor.run.remote(list(specs[lo:hi]), ref, explore)
                   for actor, lo, hi in zip(self.actors, bounds[:-1], bounds[1:]) if hi > lo]
        return Episodes.concat(self.ray.get(futures))

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        if self._owns_ray and self.ray.is_initialized():
            self.ray.shutdown()
