"""The exact symbolic behaviour model Ω and a hierarchical planner over it.

``ExactBehaviourModel.predict(s, i)`` is what a perfect atomic program would do: when φ_i(s)
holds, the blocks jump to Θ(s, i) (the moved block upright and still, the gripper just above
it, fingers open); otherwise nothing moves. It stands in for the learned self-model Ω_w of
AlphaNPI-X (Section 4.1), so a meta-controller can be developed and tested in seconds.

``plan_program`` finds, for any program of the library, a call tree that reaches its ψ in the
model. A program whose callees include non-atomic ones first looks for a plan made of those
alone, cheapest in atomic programs run (so Clean_Table is Move_All_To_Zone twice, in the better
order); otherwise, or failing that, it searches breadth-first over all its callees (fewest
calls). Non-atomic callees are planned recursively.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numpy as np

from asg.envs.fetch import goal_setter, labeler
from asg.envs.fetch.layout import (
    BLOCK_EULER,
    BLOCK_POS,
    BLOCK_REL_POS,
    BLOCK_VELP,
    BLOCK_VELR,
    FINGER_POS,
    FINGER_VEL,
    GRIP_POS,
    GRIP_VEL,
    N_BLOCKS,
)
from asg.envs.fetch.scripted import ScriptedConfig
from asg.planning.programs import Program, ProgramLibrary, fetch_library

# Where the scripted controller leaves the gripper: above the placed block, fingers open.
RETREAT = ScriptedConfig.retreat
FINGER_OPEN = ScriptedConfig.finger_open


class ExactBehaviourModel:
    """Ω(s, i): the state an ideal atomic program ``i`` leaves (70-d in, 70-d out)."""

    def predict(self, obs: np.ndarray, program: str | int,
                atoms: frozenset | None = None) -> tuple[np.ndarray, bool]:
        """The predicted next state and whether φ held (if not, the state is returned unchanged).

        ``atoms`` may pass the labels of ``obs`` when the caller has them already.
        """
        obs = np.asarray(obs, dtype=float)
        atoms = labeler.atoms(obs) if atoms is None else atoms
        if not goal_setter.program(program).pre.holds(atoms):
            return obs.copy(), False
        goal = goal_setter.goal(obs, program).reshape(N_BLOCKS, 3)
        moved = goal_setter.acting_block(program)
        return state_with_blocks(obs, goal, moved), True

    def predict_batch(self, obs: np.ndarray, programs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` over a batch: states (N, 70), program indices (N,)."""
        out = [self.predict(o, int(p)) for o, p in zip(np.asarray(obs), np.asarray(programs))]
        return np.stack([s for s, _ in out]), np.array([ok for _, ok in out])


def state_with_blocks(obs: np.ndarray, blocks: np.ndarray, moved: int) -> np.ndarray:
    """``obs`` with the blocks at ``blocks`` (4, 3), everything at rest, gripper above ``moved``."""
    out = np.asarray(obs, dtype=float).copy()
    grip = blocks[moved] + np.array([0.0, 0.0, RETREAT])
    out[BLOCK_POS] = blocks.ravel()
    out[GRIP_POS] = grip
    out[FINGER_POS] = FINGER_OPEN
    out[GRIP_VEL] = out[FINGER_VEL] = 0.0
    out[BLOCK_REL_POS] = (blocks - grip).ravel()
    euler = out[BLOCK_EULER].reshape(N_BLOCKS, 3)
    euler[moved] = 0.0
    out[BLOCK_EULER] = euler.ravel()
    out[BLOCK_VELP] = out[BLOCK_VELR] = 0.0
    return out


@dataclass(frozen=True)
class CallTree:
    """A program and the calls that carry it out (empty for an atomic program)."""

    program: str
    calls: tuple[CallTree, ...] = ()
    atomic: bool = False

    def atomic_sequence(self) -> list[str]:
        """The atomic programs of the tree, in execution order."""
        if self.atomic:
            return [self.program]
        return [name for call in self.calls for name in call.atomic_sequence()]

    def lines(self, indent: int = 0) -> list[str]:
        """An indented trace, one program per line."""
        out = ["  " * indent + self.program]
        for call in self.calls:
            out.extend(call.lines(indent + 1))
        return out


def plan_program(obs: np.ndarray, name: str, library: ProgramLibrary | None = None,
                 model: ExactBehaviourModel | None = None, max_calls: int = 6) -> CallTree | None:
    """A call tree for ``name`` from ``obs`` that reaches ψ in the exact model, or None."""
    library = library or fetch_library()
    planner = _Planner(library, model or ExactBehaviourModel(), max_calls)
    found = planner.plan(library.get(name), np.asarray(obs, dtype=float))
    return None if found is None else found[0]


class _Planner:
    def __init__(self, library: ProgramLibrary, model: ExactBehaviourModel, max_calls: int) -> None:
        self.library, self.model, self.max_calls = library, model, max_calls
        self.memo: dict[tuple[str, frozenset], CallTree | None] = {}
        self._labels: dict[bytes, frozenset] = {}

    def atoms(self, obs: np.ndarray) -> frozenset:
        """Labels of a state, cached (a search labels the same state many times)."""
        key = obs[:FINGER_POS.stop].tobytes()  # blocks, gripper and fingers decide every label
        if key not in self._labels:
            self._labels[key] = labeler.atoms(obs)
        return self._labels[key]

    def replay(self, tree: CallTree, obs: np.ndarray) -> np.ndarray | None:
        """End state of ``tree``'s atomic programs from ``obs``; None if one is not applicable."""
        for name in tree.atomic_sequence():
            obs, ok = self.model.predict(obs, name, self.atoms(obs))
            if not ok:
                return None
        return obs

    def plan(self, program: Program, obs: np.ndarray) -> tuple[CallTree, np.ndarray] | None:
        """A call tree for ``program`` from ``obs`` and the state it ends in, or None."""
        if not program.pre.holds(self.atoms(obs)):
            return None
        if program.atomic:
            nxt, ok = self.model.predict(obs, program.name, self.atoms(obs))
            return (CallTree(program.name, atomic=True), nxt) if ok else None
        callees = [self.library.get(c) for c in program.calls]
        composite = [c for c in callees if not c.atomic]
        found = self.search(program, obs, composite, cheapest=True) if composite else None
        return found or self.search(program, obs, callees, cheapest=False)

    def search(self, program: Program, obs: np.ndarray, callees: list[Program],
               cheapest: bool) -> tuple[CallTree, np.ndarray] | None:
        """Best-first over sequences of ``callees``: fewest atomic programs run (``cheapest``,
        goal tested when popped) or fewest calls (breadth-first, goal tested when generated)."""
        tie = itertools.count()
        frontier = [(0, 0, next(tie), obs, ())]
        best = {self.atoms(obs): 0}  # cheapest cost at which each labelled state was reached
        if program.post.holds(self.atoms(obs)):
            return CallTree(program.name), obs
        while frontier:
            cost, n_calls, _, state, calls = heapq.heappop(frontier)
            key = self.atoms(state)
            if cost > best[key]:
                continue
            if cheapest and calls and program.post.holds(key):
                return CallTree(program.name, calls), state
            if n_calls >= self.max_calls:
                continue
            for callee in callees:
                step = self.sub_plan(callee, state)
                if step is None:
                    continue
                tree, nxt = step
                new_cost = cost + (len(tree.atomic_sequence()) if cheapest else 1)
                nxt_key = self.atoms(nxt)
                if best.get(nxt_key, new_cost + 1) <= new_cost:
                    continue
                best[nxt_key] = new_cost
                if not cheapest and program.post.holds(nxt_key):
                    return CallTree(program.name, calls + (tree,)), nxt
                heapq.heappush(frontier, (new_cost, n_calls + 1, next(tie), nxt, calls + (tree,)))
        return None

    def sub_plan(self, callee: Program, obs: np.ndarray) -> tuple[CallTree, np.ndarray] | None:
        if callee.atomic:
            return self.plan(callee, obs)
        key = (callee.name, self.atoms(obs))
        if key in self.memo:
            tree = self.memo[key]
            end = None if tree is None else self.replay(tree, obs)
            if tree is None or (end is not None and callee.post.holds(self.atoms(end))):
                return None if tree is None else (tree, end)
        found = self.plan(callee, obs)
        self.memo[key] = None if found is None else found[0]
        return found
