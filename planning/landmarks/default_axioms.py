"""Axioms for the default (false) value of derived atoms, as Fast Downward's landmark heuristics
add them (``tasks/default_value_axioms_task.cc``, option ``axioms=approximate_negative_cycles``).

A task's axioms only say how a derived atom becomes true; a landmark factory that needs
``(not d)`` (a goal, a precondition or an effect condition names it) needs to know how d is
false too. For every derived variable whose default value is needed, directly or through the
body of an axiom deriving a needed one, FD adds axioms ``(not d) <- C`` whose bodies C are the
non-dominated hitting sets of the negated bodies of d's axioms (one fact a variable): d is false
where every rule for d has a false body literal. A derived variable in a cycle of positive
dependencies gets ``(not d) <- {}`` instead (the exact negation would be wrong there), as does
one no axiom derives.

Works on fact ids of :mod:`asg.planning.landmarks.binary` (``2v`` false, ``2v + 1`` true; the
default value of a derived variable is false); returns (head fact, body facts) pairs.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable


def default_value_rules(rules: list[tuple[int, tuple[int, ...]]], derived: frozenset[int],
                        needed_facts: Iterable[int]) -> list[tuple[int, tuple[int, ...]]]:
    """``(not d) <- body`` rules for the derived variables whose false value is needed.

    ``rules``: (head fact, body facts) of the task's axioms; ``needed_facts``: the facts goals,
    preconditions and effect conditions name.
    """
    rules_for: dict[int, list[tuple[int, ...]]] = {v: [] for v in derived}
    nondefault: dict[int, set[int]] = {v: set() for v in derived}
    default: dict[int, set[int]] = {v: set() for v in derived}
    for head, body in rules:
        rules_for[head >> 1].append(body)
        for fact in body:
            if fact >> 1 in derived:
                (nondefault if fact & 1 else default)[head >> 1].add(fact >> 1)
    in_cycle = _in_cycles(nondefault)
    needed: set[tuple[int, bool]] = {(f >> 1, not f & 1) for f in needed_facts if f >> 1 in derived}
    queue = deque(needed)
    while queue:
        var, is_default = queue.popleft()
        if is_default and var in in_cycle:
            continue  # its rule will have an empty body: it depends on nothing
        for dep, value in [(d, is_default) for d in nondefault[var]] + [(d, not is_default) for d in default[var]]:
            if (dep, value) not in needed:
                needed.add((dep, value))
                queue.append((dep, value))
    out: list[tuple[int, tuple[int, ...]]] = []
    for var in sorted(v for v, is_default in needed if is_default):
        if var in in_cycle or not rules_for[var]:
            out.append((2 * var, ()))
            continue
        negated = [sorted({f ^ 1 for f in body}) for body in rules_for[var]]
        for hitting in sorted(_hitting_sets(negated)):
            out.append((2 * var, hitting))
    return out


def _in_cycles(successors: dict[int, set[int]]) -> set[int]:
    """Variables in a strongly connected component of more than one variable."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: set[int] = set()
    counter = 0
    for root in sorted(successors):
        if root in index:
            continue
        work = [(root, iter(sorted(successors[root])))]
        index[root] = low[root] = counter = counter + 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        scc.append(w)
                        if w == v:
                            break
                    if len(scc) > 1:
                        found.update(scc)
            elif child not in index:
                index[child] = low[child] = counter = counter + 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(successors.get(child, ())))))
            elif child in on_stack:
                low[v] = min(low[v], index[child])
    return found


def _hitting_sets(sets: list[list[int]]) -> set[tuple[int, ...]]:
    """Non-dominated hitting sets with at most one fact a variable (FD's recursion)."""
    results: set[tuple[int, ...]] = set()
    chosen: list[int] = []

    def visit(i: int) -> None:
        if i == len(sets):
            hit = set(chosen)
            needed = set()
            for s in sets:
                common = hit.intersection(s)
                if len(common) == 1:
                    needed |= common
            if needed == hit:
                results.add(tuple(sorted(hit)))
            return
        if any(f in chosen for f in sets[i]):
            visit(i + 1)
            return
        used = {f >> 1 for f in chosen}
        for fact in sets[i]:
            if fact >> 1 not in used:
                chosen.append(fact)
                visit(i + 1)
                chosen.pop()

    visit(0)
    return results
