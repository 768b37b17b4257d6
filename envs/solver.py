"""Scripted solvers: a fixed route of stages, each reached by breadth-first search.

Every asg grid env exposes its deterministic dynamics as a pure function
``env.unwrapped.transition(state, action) -> (next_state, terminated)`` over its hashable
state. A ``StagedSolver`` is the scripted part (which landmarks, in which order, e.g. "both
keys with the ladder intact, then the door"); the search only fills in the moves, so the
route is the intended one even where a shorter, different one exists.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

Transition = Callable[[Any, int], "tuple[Any, bool]"]


class SolverError(RuntimeError):
    """The scripted route cannot be followed from the given state (a dead end)."""


def shortest_path(start: Hashable, goal: Callable[[Any], bool], transition: Transition,
                  n_actions: int, max_states: int = 500_000) -> list[int] | None:
    """Fewest actions from ``start`` to a state satisfying ``goal``; terminal states are not expanded."""
    if goal(start):
        return []
    parent: dict[Hashable, tuple[Hashable, int] | None] = {start: None}
    frontier = deque([start])
    while frontier:
        state = frontier.popleft()
        for action in range(n_actions):
            nxt, terminated = transition(state, action)
            if nxt in parent:
                continue
            parent[nxt] = (state, action)
            if goal(nxt):
                return _walk_back(parent, nxt)
            if not terminated:
                frontier.append(nxt)
        if len(parent) > max_states:
            raise SolverError(f"search exceeded {max_states} states")
    return None


def reachable(start: Hashable, transition: Transition, n_actions: int,
              max_states: int = 500_000) -> set:
    """Every state reachable from ``start`` (terminal states included, not expanded)."""
    seen = {start}
    frontier = [start]
    while frontier:
        state = frontier.pop()
        for action in range(n_actions):
            nxt, terminated = transition(state, action)
            if nxt not in seen:
                seen.add(nxt)
                if not terminated:
                    frontier.append(nxt)
        if len(seen) > max_states:
            raise SolverError(f"more than {max_states} reachable states")
    return seen


def _walk_back(parent: dict, state: Hashable) -> list[int]:
    actions: list[int] = []
    while parent[state] is not None:
        state, action = parent[state]
        actions.append(action)
    return actions[::-1]


@dataclass(frozen=True)
class Stage:
    """One leg of a scripted route: reach a state where ``reached`` holds."""

    name: str
    reached: Callable[[Any], bool]


@dataclass(frozen=True)
class StagedSolver:
    """A scripted solver: reach each stage in turn, by shortest path under the true dynamics."""

    stages: tuple[Stage, ...]

    def plan_from(self, state: Hashable, transition: Transition, n_actions: int) -> list[int]:
        """Actions following the route from its earliest stage still open; raises SolverError.

        From the initial state that is the whole route; from a state part-way along it (the
        key already taken, the ladder half climbed), the stages already passed are skipped.
        """
        reasons = []
        for first in range(len(self.stages)):
            try:
                return self._follow(self.stages[first:], state, transition, n_actions)
            except SolverError as err:
                reasons.append(str(err))
        raise SolverError(f"no stage of the route can be followed from {state}: {reasons[0]}")

    @staticmethod
    def _follow(stages: Sequence[Stage], state: Hashable, transition: Transition,
                n_actions: int) -> list[int]:
        actions: list[int] = []
        for stage in stages:
            path = shortest_path(state, stage.reached, transition, n_actions)
            if path is None:
                raise SolverError(f"stage {stage.name!r} is unreachable from {state}")
            for action in path:
                state, _ = transition(state, action)
            actions.extend(path)
        return actions

    def plan(self, env: Any) -> list[int]:
        """The actions that take ``env`` (from its current state) to its goal along the route."""
        base = env.unwrapped
        return self.plan_from(base.hashable_state(), base.transition, int(base.action_space.n))

    @property
    def route(self) -> Sequence[str]:
        """Stage names, in order."""
        return tuple(stage.name for stage in self.stages)
