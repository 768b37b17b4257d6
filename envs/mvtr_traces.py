"""Traces for the MVTR check: episodes of a domain's env seen through its labeler.

Three kinds of trace, all starting at an initial state s_0 of the env (Def. 4.3 asks for traces
from s_0):

* ``solver``: the scripted solver's route to the goal (domains with a ``solver``);
* ``random``: uniformly random actions, ``episodes`` episodes of ``max_steps`` steps; episode
  ``e`` resets with its own seed (``episode_seeds``), so an env that draws its layout anew
  (Minigrid's DoorKey) shows one layout per episode, the same ones on every run;
* ``branch``: the solver's route up to each of its states, then ``branch_steps`` random
  actions, so that states deep in the task (key in hand, door open...) are met too (needs the
  solver and the env's ``set_state``).

A plug-in env (``asg.envs.plugins``) has no solver, ``hashable_state`` or ``set_state``: it is
explored by the random episodes alone, and condition 2 is checked on those of them that reach
the goal (``unknown`` when none does).

Goal states (S_G, what condition 1 compares the model's goal atoms with): the state after a step
whose ``info["is_success"]`` is true, when the env reports that key (asg's own envs do); for an
env that does not, the state after a step that ends the episode (``terminated``, not
``truncated``) with a reward > 0 (``is_goal_step``). A state's identity (for counting distinct
states) is ``hashable_state()`` where the env has it; otherwise what was observed: the
observation's bytes (Markov for a Minigrid env, whose observation ``make_env`` turns into its full
state) together with the true atoms and the goal verdict, so that no two states with different
verdicts are merged.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asg.envs.domains import DomainSpec
from asg.envs.plugins import PluginDomain
from asg.planning.errors import AsgError
from asg.planning.hints import HintConfig, HintReport, suggest
from asg.planning.landmarks import compute_landmarks
from asg.planning.mvtr import AtomTrace, MVTRReport, check_mvtr
from asg.planning.parse import parse_files
from asg.planning.repair import RepairResult, atom_orderings, project, repair
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


def episode_seeds(config: ExplorationConfig) -> list[int]:
    """The reset seed of each random episode, derived from ``config.seed``."""
    return [int(s) for s in np.random.SeedSequence(config.seed).generate_state(config.episodes)]


def is_goal_step(info: Mapping[str, Any], reward: float, terminated: bool) -> bool:
    """The env's verdict on the state a step led to: ``info["is_success"]`` if given, else a
    terminating step with reward > 0."""
    if "is_success" in info:
        return bool(info["is_success"])
    return bool(terminated) and float(reward) > 0


@dataclass(frozen=True)
class ObservedState:
    """A state of an env without ``hashable_state``, known by what was observed of it."""

    key: Hashable
    """Observation bytes, true atoms, goal verdict: equal keys are one state."""
    text: str = field(compare=False)
    """How a report shows it (what the agent is at, the episode's reset seed)."""

    def __str__(self) -> str:
        return self.text


def _observation_key(obs: Any) -> Hashable:
    if isinstance(obs, np.ndarray):
        return (obs.dtype.str, obs.shape, obs.tobytes())
    if isinstance(obs, Mapping):
        return tuple(sorted((str(k), _observation_key(v)) for k, v in obs.items()))
    if isinstance(obs, (tuple, list)):
        return tuple(_observation_key(v) for v in obs)
    try:
        hash(obs)
    except TypeError:
        return repr(obs)
    return obs


def _describe(base: Any, obs: Any) -> str:
    """A one-line view of an env state: a Minigrid agent's cell, heading and load; else the observation."""
    if hasattr(base, "agent_pos") and hasattr(base, "grid"):  # a Minigrid env, read without importing it
        carrying = getattr(base, "carrying", None)
        load = f"{carrying.color} {carrying.type}" if carrying is not None else "nothing"
        x, y = (int(v) for v in base.agent_pos)
        return f"agent at ({x}, {y}) facing {int(base.agent_dir)}, carrying {load}"
    if isinstance(obs, np.ndarray):
        flat = obs.ravel()
        more = " ..." if flat.size > 16 else ""
        return f"observation {np.array2string(flat[:16], separator=' ')}{more}"
    text = repr(obs)
    return f"observation {text[:80]}{' ...' if len(text) > 80 else ''}"


class _Recorder:
    """Labels env states (once per ``hashable_state`` where the env has one) and builds ``AtomTrace``s."""

    def __init__(self, spec: DomainSpec | PluginDomain, vocabulary: frozenset[Atom]) -> None:
        self.labeler = spec.labeler
        self.vocabulary = vocabulary
        self.cache: dict[Hashable, frozenset[Atom]] = {}

    def observe(self, env: Any, obs: Any, goal: bool, seed: int | None) -> tuple[Hashable, frozenset[Atom]]:
        """The current state of ``env`` (its identity) and the model's atoms true in it."""
        base = env.unwrapped
        if hasattr(base, "hashable_state"):
            state = base.hashable_state()
            if self.labeler.reads == "state":
                if state not in self.cache:
                    self.cache[state] = self.labeler.atoms_of(state) & self.vocabulary
                return state, self.cache[state]
            return state, self.labeler(env) & self.vocabulary
        atoms = self.labeler(env) & self.vocabulary
        where = "" if seed is None else f" (reset seed {seed})"
        return ObservedState((_observation_key(obs), atoms, goal), _describe(base, obs) + where), atoms


@dataclass
class _Episode:
    """One trace being recorded: env states, their atoms, goal flags."""

    states: list[Hashable] = field(default_factory=list)
    atoms: list[frozenset[Atom]] = field(default_factory=list)
    goals: list[bool] = field(default_factory=list)

    def add(self, seen: tuple[Hashable, frozenset[Atom]], goal: bool) -> None:
        self.states.append(seen[0])
        self.atoms.append(seen[1])
        self.goals.append(goal)

    def prefix(self, cut: int) -> _Episode:
        return _Episode(self.states[:cut], self.atoms[:cut], self.goals[:cut])

    def trace(self, source: str, index: int) -> AtomTrace:
        return AtomTrace(source, index, tuple(self.atoms), tuple(self.goals), tuple(self.states))


def _run(env: Any, recorder: _Recorder, choose: Callable[[int], int], steps: int, episode: _Episode,
         seed: int | None) -> _Episode:
    """Take up to ``steps`` actions ``choose(i)``, recording each state; stops at the episode's end."""
    for i in range(steps):
        obs, reward, terminated, truncated, info = env.step(choose(i))
        goal = is_goal_step(info, reward, terminated)
        episode.add(recorder.observe(env, obs, goal, seed), goal)
        if terminated or truncated:
            break
    return episode


def _start(env: Any, recorder: _Recorder, seed: int | None) -> _Episode:
    obs, _ = env.reset(seed=seed)
    episode = _Episode()
    episode.add(recorder.observe(env, obs, False, seed), False)
    return episode


def collect_traces(spec: DomainSpec | PluginDomain, task: Task, config: ExplorationConfig = ExplorationConfig(),
                   vocabulary: frozenset[Atom] | None = None) -> list[AtomTrace]:
    """Solver (if ``spec`` has one), random and branching traces of ``spec``'s env, labelled with
    ``task``'s fluents, or with ``vocabulary`` when given (``spec.labeler.atoms``: every atom the
    labeler knows, which repair hints read). ``spec``: a ``DomainSpec`` or a plug-in ``PluginDomain``."""
    if vocabulary is None:
        vocabulary = frozenset(a.positive() for a in task.facts)
    recorder = _Recorder(spec, vocabulary)
    rng = np.random.default_rng(config.seed)
    env = spec.make_env(max_steps=max(config.max_steps, 10_000))
    traces: list[AtomTrace] = []
    try:
        n_actions = int(env.action_space.n)  # type: ignore[attr-defined]  # Discrete (checked by load_task)

        def random_action(_: int) -> int:
            return int(rng.integers(n_actions))

        route = None
        solver = getattr(spec, "solver", None)
        if solver is not None and hasattr(env.unwrapped, "hashable_state"):
            route = _start(env, recorder, config.seed)
            plan = solver.plan(env)
            _run(env, recorder, plan.__getitem__, len(plan), route, config.seed)
            traces.append(route.trace("solver", 0))
        for index, seed in enumerate(episode_seeds(config)):
            episode = _run(env, recorder, random_action, config.max_steps, _start(env, recorder, seed), seed)
            traces.append(episode.trace("random", index))
        if route is not None and config.branch_steps and hasattr(env.unwrapped, "set_state"):
            for cut in range(1, len(route.states) - 1):
                env.reset(seed=config.seed)
                env.unwrapped.set_state(route.states[cut])
                branch = _run(env, recorder, random_action, config.branch_steps, route.prefix(cut + 1),
                              config.seed)
                traces.append(branch.trace("branch", cut))
    finally:
        env.close()
    return traces


def landmark_orderings(task: Task) -> list[tuple[frozenset[Atom], frozenset[Atom], str]]:
    """The model's landmark orderings as (source atoms, target atoms, kind)."""
    return atom_orderings(compute_landmarks(task))


def _exploration_notes(traces: list[AtomTrace], config: ExplorationConfig) -> tuple[str, ...]:
    notes = [f"{sum(len(t.states) for t in traces)} states in {len(traces)} traces "
             f"(seed {config.seed}); atom truth is the labeler's, per state"]
    if not any(t.source == "solver" for t in traces):
        notes.append(f"no scripted solver: {config.episodes} random episodes of up to {config.max_steps} "
                     "steps, each reset with its own seed; a goal state is one the env reports as "
                     "info['is_success'], or else one where the episode terminates with reward > 0")
    return tuple(notes)


def run_mvtr(spec: DomainSpec | PluginDomain, model: str | Path | None = None,
             config: ExplorationConfig = ExplorationConfig()) -> MVTRReport:
    """Check a model (the domain's own by default) against the domain's env.

    ``spec``: a ``DomainSpec`` or a plug-in ``PluginDomain`` (``asg.envs.plugins``). The
    report's ``exit_code``: 0 both conditions hold, 1 one fails, 3 condition 2 unknown (no
    trace reached the goal)."""
    task = spec.load_task(model)
    traces = collect_traces(spec, task, config)
    return check_mvtr(task, traces, domain=spec.name,
                      model=str(model) if model is not None else spec.model,
                      landmark_orderings=landmark_orderings(task),
                      notes=_exploration_notes(traces, config))


@dataclass(frozen=True)
class Suggestion:
    """``asg mvtr --suggest``: the MVTR report, the repair hints, and the traces both came from
    (labelled with the labeler's whole vocabulary; ``project`` them onto a model to check it)."""

    report: MVTRReport
    hints: HintReport
    traces: tuple[AtomTrace, ...]

    def to_json(self) -> dict:
        """The MVTR report's JSON with a ``hints`` key added."""
        return {**self.report.to_json(), "hints": self.hints.to_json()}


def run_suggest(spec: DomainSpec | PluginDomain, model: str | Path | None = None,
                config: ExplorationConfig = ExplorationConfig(), hints: HintConfig | None = None) -> Suggestion:
    """``run_mvtr`` and repair hints from the same traces, labelled with every atom the labeler
    knows (atoms outside the model are what a hint may name). Raises ``NoGoalTraceError`` when no
    trace reaches the goal. ``hints``: ``HintConfig()`` by default."""
    task = spec.load_task(model)
    traces = collect_traces(spec, task, config, vocabulary=spec.labeler.atoms | {a.positive() for a in task.facts})
    graph = compute_landmarks(task)
    report = check_mvtr(task, project(traces, task), domain=spec.name,
                        model=str(model) if model is not None else spec.model,
                        landmark_orderings=atom_orderings(graph),
                        notes=_exploration_notes(traces, config))
    return Suggestion(report, suggest(task, traces, graph, hints or HintConfig()), tuple(traces))


class NothingToRepair(AsgError):
    """``--write``: the suggestion has no hint to apply, or none that keeps the model an MVTR."""


def repair_model(spec: DomainSpec | PluginDomain, model: str | Path | None, found: Suggestion,
                 top: int = 3) -> RepairResult:
    """The model ``asg mvtr --suggest --write`` writes: ``found``'s top-ranked hints that keep
    ``model`` (the domain's own when None) an MVTR on its traces, at most ``top`` of them, applied
    (``planning.repair.repair``). ``NothingToRepair`` when there is no hint or none applies."""
    if found.hints.status != "ok" or not found.hints.hints:
        raise NothingToRepair(f"no hint to apply ({found.hints.message or 'none found'})")
    fixed = repair(parse_files(model if model is not None else spec.model_path()), found.hints.hints,
                   found.traces, top=top)
    if not fixed.applied:
        why = "; ".join(f"{' '.join(h.atoms)}: {reason}" for h, reason in fixed.skipped[:3])
        raise NothingToRepair(f"none of the {len(fixed.skipped)} hint(s) applies ({why})")
    return fixed
