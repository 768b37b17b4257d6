"""Zhu & Givan's label propagation (ICAPS 2003 DC), as Fast Downward's ``lm_zg``.

Every fact reached in the relaxed planning graph carries a label: the facts every relaxed
derivation of it passes through. A fact of the initial state is labelled with itself; an
effect's fact, when its operator is applicable and its conditions are reached, gets

    label(f) = {f} ∪ ∩ over the effects setting f of ( ∪ labels of pre(a) ∪ cond(e) )

iterated until nothing changes (labels only shrink, so the result is the greatest fixpoint,
in whatever order the effects are evaluated). For STRIPS tasks this is h^m's m = 1 fixpoint;
unlike asg's hm it also reads effect conditions, and it treats axioms as operators.

Output, as FD's: the goal facts, every fact in a goal's label, and a natural ordering from
each label fact to that goal only. The task is FD's binary finite-domain form
(:mod:`asg.planning.landmarks.binary`), so complements true initially (``(not (p))``) show up
as landmarks where a negative precondition needs them.
"""
from __future__ import annotations

from collections import deque

from asg.planning.landmarks.binary import BinaryTask, binary_task
from asg.planning.landmarks.result import FactoryResult
from asg.planning.task import Task


def zg_landmarks(task: Task) -> FactoryResult:
    """Goal facts, the facts in their labels, label fact -> goal natural orderings."""
    binary = binary_task(task)
    labels = propagate_labels(binary)
    init = set(binary.init)
    unreached = [g for g in binary.goal if labels[g] is None]
    goals = list(dict.fromkeys(binary.goal))
    if unreached:
        nodes = [(frozenset({g}), False) for g in goals]
        return FactoryResult.of(binary, nodes, set(goals), init, {}, relaxed_solvable=False)
    node_of: dict[int, int] = {}
    nodes = []
    for fact in goals:
        node_of[fact] = len(nodes)
        nodes.append((frozenset({fact}), False))
    edges: dict[tuple[int, int], str] = {}
    for goal in goals:
        bits = labels[goal] or 0
        while bits:
            low = bits & -bits
            fact = low.bit_length() - 1
            bits ^= low
            if fact not in node_of:
                node_of[fact] = len(nodes)
                nodes.append((frozenset({fact}), False))
            edges[(node_of[fact], node_of[goal])] = "natural"
    return FactoryResult.of(binary, nodes, set(goals), init, edges)


def propagate_labels(binary: BinaryTask) -> list[int | None]:
    """fact -> its label without itself, as a bitset over fact ids (None: not reached)."""
    n_facts = binary.n_facts
    labels: list[int | None] = [None] * n_facts
    triggers: list[list[int]] = [[] for _ in range(n_facts)]  # fact -> actions reading it
    for k, action in enumerate(binary.actions):
        read = set(action.pre)
        for cond, _ in action.effects:
            read.update(cond)
        for fact in read:
            triggers[fact].append(k)
    queue: deque[int] = deque()
    queued = bytearray(len(binary.actions))

    def push(k: int) -> None:
        if not queued[k]:
            queued[k] = 1
            queue.append(k)

    for fact in binary.init:
        labels[fact] = 0
    for k in range(len(binary.actions)):
        push(k)
    while queue:
        k = queue.popleft()
        queued[k] = 0
        action = binary.actions[k]
        base = _union(action.pre, labels)
        if base is None:
            continue
        for cond, fact in action.effects:
            if labels[fact] == 0:
                continue  # only itself: initially true, or nothing left to remove
            label = _union(cond, labels)
            if label is None:
                continue
            label = (label | base) & ~(1 << fact)
            old = labels[fact]
            new = label if old is None else old & label
            if new != old:
                labels[fact] = new
                for j in triggers[fact]:
                    push(j)
    return labels


def _union(facts, labels: list[int | None]) -> int | None:
    """The union of the facts and their labels, None if one is unreached."""
    bits = 0
    for fact in facts:
        label = labels[fact]
        if label is None:
            return None
        bits |= label | (1 << fact)
    return bits
