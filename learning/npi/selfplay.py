"""Self-play: episodes of the recursive search in a model, in-process, on a fork pool or on Ray.

An :class:`EpisodeJob` fixes everything an episode depends on (program, seed, mode), so the
traces are the same whatever the backend and the number of workers. Workers start once with the
model (the pool's initializer, a Ray actor's constructor); each chunk of jobs carries the current
network snapshot and the search config (the paper's actors receive the learner's weights each
epoch, B.3). Backends: ``local`` (in-process for one worker, else a local fork pool) and ``ray``
(``workers`` Ray actors on a local Ray instance, or on the cluster at ``ray_address``). Ray is
optional (``pip install 'asg[distributed]'``) and imported only when asked for.
"""
from __future__ import annotations

import copy
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from asg.learning.errors import ConfigError
from asg.learning.npi.config import BACKENDS, SearchConfig
from asg.learning.npi.landmark_guidance import LandmarkGuide
from asg.learning.npi.mcts import SearchContext, Trace, execute
from asg.learning.npi.network import NetSnapshot
from asg.learning.world_models.program_models import EnvironmentModel

MAX_START_DRAWS = 1000


class StartStateError(RuntimeError):
    """No start state satisfying the program's pre-condition was drawn."""


@dataclass(frozen=True)
class EpisodeJob:
    """One episode: run ``task`` from a start state drawn with ``seed``."""

    task: int
    seed: int
    explore: bool


def start_state(model: EnvironmentModel, task: int, rng: np.random.Generator) -> np.ndarray:
    """A start state where the program's pre-condition holds (Algorithm 4: sample until φ)."""
    program = model.table.programs[task]
    for _ in range(MAX_START_DRAWS):
        state = model.initial_state(rng)
        if program.pre.holds(model.atoms(state)):
            return state
    raise StartStateError(f"no start state satisfies the pre-condition of {program.name}")


def make_guide(model: EnvironmentModel, config: SearchConfig) -> LandmarkGuide | None:
    """The landmark guide the config asks for (None when guidance is off)."""
    return None if config.landmark == "off" else LandmarkGuide(model.table)


def play(job: EpisodeJob, model: EnvironmentModel, snapshot: NetSnapshot, config: SearchConfig,
         guide: LandmarkGuide | None = None) -> Trace:
    """One episode of ``job`` (exploring: noise, sampling, ``simulations``; else exploit mode)."""
    rng = np.random.default_rng(job.seed)
    state = start_state(model, job.task, rng)
    ctx = SearchContext(model, snapshot, config, rng, guide)
    return execute(job.task, state, ctx, explore=job.explore)


def resolve_backend(backend: str | None, ray_address: str | None) -> str:
    """The backend to use: ``backend`` if given, else ``ray`` exactly when an address is given."""
    if backend is None:
        return "local" if ray_address is None else "ray"
    if backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "local" and ray_address is not None:
        raise ConfigError("ray_address needs the ray backend, not backend 'local'")
    return backend


def import_ray() -> Any:
    """The ``ray`` module, or a ``ConfigError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("the ray backend (ray_address, backend 'ray') needs Ray: "
                          "pip install 'asg[distributed]'") from None
    return ray


class Player:
    """A worker's state: the model and its landmark guide (built on first use)."""

    def __init__(self, model: EnvironmentModel, single_thread: bool = False) -> None:
        if single_thread:  # worker processes: one torch thread each
            import torch

            torch.set_num_threads(1)
        self.model = model
        self._guide: LandmarkGuide | None = None

    def guide(self, config: SearchConfig) -> LandmarkGuide | None:
        """The guide ``config`` asks for (None when its guidance is off)."""
        if config.landmark == "off":
            return None
        if self._guide is None:
            self._guide = LandmarkGuide(self.model.table)
        return self._guide

    def play(self, snapshot: NetSnapshot, config: SearchConfig, jobs: list[EpisodeJob]) -> list[Trace]:
        """The traces of ``jobs`` in order."""
        guide = self.guide(config)
        return [play(job, self.model, snapshot, config, guide) for job in jobs]


_WORKER: dict[str, Player] = {}


def _init_worker(model: EnvironmentModel) -> None:
    _WORKER["player"] = Player(model, single_thread=True)


def _play_chunk(snapshot: NetSnapshot, config: SearchConfig, jobs: list[EpisodeJob]) -> list[Trace]:
    return _WORKER["player"].play(snapshot, config, jobs)


class Workers:
    """The worker processes behind a :class:`SelfPlay` and its views, started on first use."""

    def __init__(self, model: EnvironmentModel, workers: int, backend: str, ray_address: str | None) -> None:
        self.model, self.workers, self.backend, self.ray_address = model, workers, backend, ray_address
        self._pool: ProcessPoolExecutor | None = None
        self._ray: Any = None
        self._actors: list[Any] = []
        self._owns_ray = False

    def map(self, snapshot: NetSnapshot, config: SearchConfig, chunks: list[list[EpisodeJob]]) -> list[list[Trace]]:
        """The traces of each chunk, chunk ``k`` played by worker ``k``."""
        if self.backend == "ray":
            return self._map_ray(snapshot, config, chunks)
        if self._pool is None:
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init_worker,
                                             initargs=(self.model,))
        return list(self._pool.map(_play_chunk, [snapshot] * len(chunks), [config] * len(chunks), chunks))

    def _map_ray(self, snapshot: NetSnapshot, config: SearchConfig,
                 chunks: list[list[EpisodeJob]]) -> list[list[Trace]]:
        if not self._actors:
            self._start_ray()
        ray = self._ray
        ref = ray.put(snapshot)  # sent once, shared by the actors
        futures = {k: self._actors[k].play.remote(ref, config, chunk) for k, chunk in enumerate(chunks) if chunk}
        done = dict(zip(futures, ray.get(list(futures.values()))))
        return [done.get(k, []) for k in range(len(chunks))]

    def _start_ray(self) -> None:
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            options = {"log_to_driver": False, "configure_logging": False}
            try:
                if self.ray_address is None:  # a local instance sized for the actors, quiet
                    ray.init(num_cpus=self.workers, include_dashboard=False, **options)
                else:
                    ray.init(address=self.ray_address, **options)
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = "a local Ray instance" if self.ray_address is None else f"--ray-address {self.ray_address}"
                raise ConfigError(f"{where}: Ray did not start ({type(err).__name__}: {err})") from None
            self._owns_ray = True
        remote = ray.remote(num_cpus=1)(Player)
        self._actors = [remote.remote(self.model, True) for _ in range(self.workers)]

    def close(self) -> None:
        """Stop the pool or the actors, and the Ray instance if this object started it."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        ray = self._ray
        if ray is not None and ray.is_initialized():
            for actor in self._actors:
                ray.kill(actor)
            if self._owns_ray:
                ray.shutdown()
        self._actors, self._owns_ray = [], False


class SelfPlay:
    """Plays jobs with the model and search config it was built with.

    ``backend`` ``local``: in-process for ``workers`` <= 1, else a fork pool of ``workers``
    processes; ``ray``: ``workers`` Ray actors (local Ray, or the cluster at ``ray_address``).
    ``backend=None`` means ``ray`` exactly when ``ray_address`` is given.
    """

    def __init__(self, model: EnvironmentModel, config: SearchConfig, workers: int = 1,
                 backend: str | None = None, ray_address: str | None = None) -> None:
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        self.model, self.config, self.workers = model, config, workers
        self.backend = resolve_backend(backend, ray_address)
        if self.backend == "ray":
            import_ray()  # fail now, not at the first episode
        self.ray_address = ray_address
        self._player = Player(model)
        self.guide = self._player.guide(config)
        self._workers = Workers(model, workers, self.backend, ray_address)

    def with_search(self, config: SearchConfig) -> SelfPlay:
        """A self-play with another search config on the same workers (closing either closes both)."""
        view = copy.copy(self)
        view.config, view.guide = config, self._player.guide(config)
        return view

    def run(self, jobs: list[EpisodeJob], snapshot: NetSnapshot) -> list[Trace]:
        """The traces of ``jobs``, in job order."""
        if not jobs:
            return []
        if self.backend == "local" and (self.workers <= 1 or len(jobs) <= 1):
            return self._player.play(snapshot, self.config, jobs)
        chunks = [jobs[k::self.workers] for k in range(self.workers)]
        results = self._workers.map(snapshot, self.config, chunks)
        out: list[Trace | None] = [None] * len(jobs)
        for k, traces in enumerate(results):
            out[k::self.workers] = traces
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the workers (no-op in-process); a later :meth:`run` starts them again."""
        self._workers.close()

    def __enter__(self) -> SelfPlay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
