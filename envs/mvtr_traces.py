"""Traces for the MVTR check: episodes of a registered domain seen through its labeler.

Three kinds of trace, all starting at the env's initial state s_0 (Def. 4.3 asks for traces
from s_0):

* ``solver``: the scripted solver's route to the goal;
* ``random``: uniformly random actions, ``episodes`` episodes of ``max_steps`` steps;
* ``branch``: the solver's route up to each of its states, then ``branch_steps`` random
  actions, so that states deep in the task (key in hand, door open...) are met too.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asg.envs.domains import DomainSpec
from asg.planning.landmarks import compute_landmarks
from asg.planning.mvtr import AtomTrace, MVTRReport, check_mvtr
from asg.planning.task import Atom, Task


@dataclass(frozen=True)
class ExplorationConfig:
    """How many states the MVTR check looks at."""

    episodes: int = 20
    """Random episodes from s_0."""
    max_steps: int = 500
    """Length of one random episode."""
    branch_steps: int = 50
    """Random steps after each prefix of the solver's route."""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.episodes < 0 or self.max_steps < 1 or self.branch_steps < 0:
            raise ValueError("episodes and branch_steps must be >= 0, max_steps >= 1")


class _Recorder:
    """Labels env states once (by hashable state) and builds ``AtomTrace``s."""

    def __init__(self, spec: DomainSpec, vocabulary: frozenset[Atom]) -> None:
        self.spec = spec
        self.vocabulary = vocabulary
        self.cache: dict[Hashable, frozenset[Atom]] = {}

    def atoms(self, state: Hashable) -> frozenset[Atom]:
        if state not in self.cache:
            self.cache[state] = self.spec.labeler.atoms_of(state) & self.vocabulary
        return self.cache[state]

    def trace(self, source: str, index: int, states: list, goals: list[bool]) -> AtomTrace:
        return AtomTrace(source, index, tuple(self.atoms(s) for s in states), tuple(goals),
                         tuple(states))


def _run(env, choose: Callable[[int], int], steps: int, states: list, goals: list
         ) -> tuple[list, list]:
    """Take up to ``steps`` actions ``choose(i)``, appending states and goal flags; stops at episode end."""
    base = env.unwrapped
    for i in range(steps):
        _, _, terminated, truncated, info = env.step(choose(i))
        states.append(base.hashable_state())
        goals.append(bool(info["is_success"]))
        if terminated or truncated:
            break
    return states, goals


def collect_traces(spec: DomainSpec, task: Task, config: ExplorationConfig = ExplorationConfig()
                   ) -> list[AtomTrace]:
    """Solver, random and branching traces of ``spec``'s env, labelled with ``task``'s fluents."""
    recorder = _Recorder(spec, frozenset(a.positive() for a in task.facts))
    rng = np.random.default_rng(config.seed)
    env = spec.make_env(max_steps=max(config.max_steps, 10_000))
    try:
        env.reset(seed=config.seed)
        n_actions = int(env.action_space.n)
        def random_action(_: int) -> int:
            return int(rng.integers(n_actions))
        plan = spec.solver.plan(env)
        route = _run(env, plan.__getitem__, len(plan), [env.unwrapped.hashable_state()], [False])
        traces = [recorder.trace("solver", 0, *route)]
        for episode in range(config.episodes):
            env.reset()
            states, goals = _run(env, random_action, config.max_steps,
                                 [env.unwrapped.hashable_state()], [False])
            traces.append(recorder.trace("random", episode, states, goals))
        for cut in range(1, len(route[0]) - 1) if config.branch_steps else ():
            env.reset()
            env.unwrapped.set_state(route[0][cut])
            states, goals = _run(env, random_action, config.branch_steps,
                                 route[0][:cut + 1], route[1][:cut + 1])
            traces.append(recorder.trace("branch", cut, states, goals))
    finally:
        env.close()
    return traces


def landmark_orderings(task: Task) -> list[tuple[frozenset[Atom], frozenset[Atom], str]]:
    """The model's landmark orderings as (source atoms, target atoms, kind)."""
    graph = compute_landmarks(task)
    by_id = {lm.id: lm.atoms for lm in graph.landmarks}
    return [(by_id[o.source], by_id[o.target], o.kind) for o in graph.orderings]


def run_mvtr(spec: DomainSpec, model: str | Path | None = None,
             config: ExplorationConfig = ExplorationConfig()) -> MVTRReport:
    """Check a model (the domain's own by default) against the domain's env."""
    task = spec.load_task(model)
    traces = collect_traces(spec, task, config)
    notes = (f"{sum(len(t.states) for t in traces)} states in {len(traces)} traces "
             f"(seed {config.seed}); atom truth is the labeler's, per state",)
    return check_mvtr(task, traces, domain=spec.name,
                      model=str(model) if model is not None else spec.model,
                      landmark_orderings=landmark_orderings(task), notes=notes)
