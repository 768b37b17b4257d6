"""Self-play: episodes of the recursive search in a model, in-process or on a local process pool.

An :class:`EpisodeJob` fixes everything an episode depends on (program, seed, mode), so the
traces are the same whatever the number of workers. Workers are forked once with the model and
the search config; each chunk of jobs carries the current network snapshot (the paper's actors
receive the learner's weights each epoch, B.3).
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from asg.learning.npi.config import SearchConfig
from asg.learning.npi.landmark_guidance import LandmarkGuide
from asg.learning.npi.mcts import SearchContext, Trace, execute
from asg.learning.npi.models import EnvironmentModel
from asg.learning.npi.network import NetSnapshot

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


_WORKER: dict = {}


def _init_worker(model: EnvironmentModel, config: SearchConfig) -> None:
    import torch

    torch.set_num_threads(1)
    _WORKER.update(model=model, config=config, guide=make_guide(model, config))


def _play_chunk(snapshot: NetSnapshot, jobs: list[EpisodeJob]) -> list[Trace]:
    w = _WORKER
    return [play(job, w["model"], snapshot, w["config"], w["guide"]) for job in jobs]


class SelfPlay:
    """Plays jobs with the model and config it was built with; ``workers`` > 1 uses a fork pool."""

    def __init__(self, model: EnvironmentModel, config: SearchConfig, workers: int = 1) -> None:
        self.model, self.config, self.workers = model, config, workers
        self.guide = make_guide(model, config)
        self._pool: ProcessPoolExecutor | None = None

    def run(self, jobs: list[EpisodeJob], snapshot: NetSnapshot) -> list[Trace]:
        """The traces of ``jobs``, in job order."""
        if self.workers <= 1 or len(jobs) <= 1:
            return [play(job, self.model, snapshot, self.config, self.guide) for job in jobs]
        if self._pool is None:
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init_worker,
                                             initargs=(self.model, self.config))
        chunks = [jobs[k::self.workers] for k in range(self.workers)]
        results = list(self._pool.map(_play_chunk, [snapshot] * len(chunks), chunks))
        out: list[Trace | None] = [None] * len(jobs)
        for k, traces in enumerate(results):
            out[k::self.workers] = traces
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Shut the pool down (no-op in-process)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> "SelfPlay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
