"""Reasonable orderings (Hoffmann, Porteous & Sebastia, JAIR 2004), as FD's HPS method.

A →r B says: a plan that reaches B before A must destroy B while reaching A and then
re-establish it, so A should come first. Valid plans may violate it, so these orderings
are kept apart from the sound ones and may form cycles.

Disjunctive landmarks (rhw's) take no part, on either side, as in FD's HPS code: which of
their atoms a plan makes true is open, so nothing follows about what achieving one destroys.

Interference ("achieving A destroys B") uses mutexes. asg has no invariant synthesis, so
its mutexes are the h^2 ones: two reachable facts are mutex when no relaxed Π^2
derivation makes them true together (sound: they can never hold at once). asg's h^2 reads
neither axioms nor effect conditions, so a task with either has only the mutexes every
encoding has, ``p`` against ``(not (p))`` (what FD's binary encoding knows too).
"""
from __future__ import annotations

from asg.planning.landmark_graph import Landmark, LandmarkGraph, Ordering
from asg.planning.landmarks.hm import hm_landmarks
from asg.planning.task import Atom, Task

SOUND = ("greedy-necessary", "natural")


class Mutexes:
    """h^2 mutex pairs of a task (facts that no reachable state holds together)."""

    def __init__(self, task: Task) -> None:
        self._reached_facts: set[Atom] = set()
        self._together: set[frozenset[Atom]] = set()
        if task.axioms or task.has_conditional_effects:
            return  # h^2 here would be unsound (effect conditions) or is refused (axioms)
        result = hm_landmarks(task, m=2)
        reached = set(result.labels)
        facts = result.facts
        self._reached_facts = {facts[i] for i in reached if len(result.msets[i]) == 1}
        self._together = {frozenset(facts[f] for f in result.msets[i])
                          for i in reached if len(result.msets[i]) == 2}

    def mutex(self, a: Atom, b: Atom) -> bool:
        if a == b:
            return False
        if a.positive() == b.positive():  # p and (not p)
            return True
        if a not in self._reached_facts or b not in self._reached_facts:
            return False
        return frozenset((a, b)) not in self._together


def reasonable_orderings(graph: LandmarkGraph, mutexes: Mutexes | None = None) -> list[Ordering]:
    """The reasonable orderings of ``graph`` that no sound ordering already covers."""
    task = graph.task
    mutexes = mutexes or Mutexes(task)
    achievers = _achievers(task)
    candidates = [lm for lm in graph.landmarks if lm.kind != "disjunctive"]
    found: set[tuple[int, int]] = set()

    before = {lm.id: _sound_ancestors(graph, lm.id) for lm in candidates}

    def add(a: Landmark, b: Landmark) -> None:
        # skip pairs a sound ordering (or a chain of them) already puts in this order
        if a.kind == "disjunctive" or a.id == b.id or a.id in before[b.id]:
            return
        if _destroys(a, b, mutexes, achievers):
            found.add((a.id, b.id))

    for b in candidates:
        if b.goal:
            for a in candidates:
                add(a, b)
            continue
        for c in _gn_children(graph, b):
            ancestors: set[int] = set()
            for parent, kind in graph.in_edges(c.id).items():
                if parent != b.id and kind in SOUND and graph.by_id(parent).kind != "disjunctive":
                    ancestors.add(parent)
                    ancestors |= {u for u in _sound_ancestors(graph, parent)}
            for a_id in sorted(ancestors):
                add(graph.by_id(a_id), b)
    return [Ordering(u, v, "reasonable") for u, v in sorted(found)]


def _gn_children(graph: LandmarkGraph, b: Landmark) -> list[Landmark]:
    return [graph.by_id(v) for v, kind in sorted(graph.out_edges(b.id).items()) if kind == "greedy-necessary"]


def _sound_ancestors(graph: LandmarkGraph, node: int) -> set[int]:
    seen, stack = set(), [node]
    while stack:
        current = stack.pop()
        for parent, kind in graph.in_edges(current).items():
            if parent not in seen and kind in SOUND:
                seen.add(parent)
                stack.append(parent)
    return seen


def _achievers(task: Task) -> dict[Atom, list]:
    table: dict[Atom, list] = {}
    for op in task.operators:
        for atom in op.add:
            table.setdefault(atom, []).append(op)
    return table


def _destroys(a: Landmark, b: Landmark, mutexes: Mutexes, achievers: dict[Atom, list]) -> bool:
    """Whether achieving A always destroys B (HPS interference, as FD tests it)."""
    if a.atoms & b.atoms and not (a.kind == "conjunctive" and b.kind == "conjunctive"):
        return False
    for fa in a.atoms:
        for fb in b.atoms:
            if mutexes.mutex(fa, fb):
                return True
    if a.kind == "conjunctive":
        return False
    fa = a.atom
    ops = achievers.get(fa, [])
    if not ops:
        return False
    # Effects every achiever of fa has besides fa: deleting fb, or adding a fact mutex with it.
    common_adds = set.intersection(*(set(op.add) for op in ops)) - {fa}
    common_dels = set.intersection(*(set(op.delete) for op in ops))
    for fb in b.atoms:
        if fb in common_dels:
            return True
        if any(e != fb and mutexes.mutex(e, fb) for e in common_adds):
            return True
    return False
