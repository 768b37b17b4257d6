"""The variable order of Fast Downward's translator, for a binary task.

``lm_rhw`` expands goals and new landmarks first in first out, goals in the order of their
variables; where two disjunctions overlap, the first one found is kept. To find the same
disjunctions, asg numbers variables as FD's translator does (``variable_order.py``):

1. variables start in the order of their atoms (FD sorts its fact groups), keeping only those
   that can change value (``simplify.filter_unreachable_propositions``);
2. a weighted causal graph: for each operator effect, an arc from every precondition variable
   (a variable with an effect and a precondition counts once per such effect) and every
   effect-condition variable to the effect's variable, weight +1 each time; axioms likewise;
3. strongly connected components by Tarjan's algorithm (FD's iterative version, successors in
   ascending order), in topological order; inside a component of several variables, greedily
   the variable with the least incoming weight left (arcs into goal variables weigh 100000
   more while choosing, but removing a chosen variable only subtracts the plain weight).

Variables no goal depends on are dropped by FD; here they go last. The order is a
normalisation only: which landmarks rhw finds where disjunctions overlap depends on it, as it
does in FD.
"""
from __future__ import annotations

import heapq
from collections import defaultdict, deque

from asg.planning.landmarks.binary import BinaryTask
from asg.planning.task import Atom

_GOAL_WEIGHT = 100000


def translator_order(binary: BinaryTask) -> dict[Atom, int]:
    """atom -> rank of its variable in FD's translator output (see the module docstring)."""
    kept = _changing_variables(binary)
    number = {v: i for i, v in enumerate(kept)}
    weights: list[dict[int, int]] = [defaultdict(int) for _ in kept]
    for action in binary.actions:
        if action.added:
            continue
        pre_vars = {f >> 1: f for f in action.pre}
        effect_vars = [e >> 1 for _, e in action.effects]
        if action.axiom:
            sources = [f >> 1 for f in action.pre]
        else:
            sources = [v for v in pre_vars if v not in effect_vars] + [v for v in effect_vars if v in pre_vars]
        for cond, effect in action.effects:
            target = number.get(effect >> 1)
            if target is None:
                continue
            for source in sources + ([c >> 1 for c in cond] if not action.axiom else []):
                s = number.get(source)
                if s is not None and s != target:
                    weights[s][target] += 1
    goal_vars = {number[g >> 1] for g in binary.goal if g >> 1 in number}
    order: list[int] = []
    for scc in _sccs([sorted(w) for w in weights]):
        if len(scc) == 1:
            order.append(scc[0])
            continue
        members = set(scc)
        arcs: dict[int, list[tuple[int, int]]] = {v: [] for v in scc}
        for v in scc:
            for target, weight in sorted(weights[v].items()):
                if target in members:
                    if target in goal_vars:
                        arcs[v].append((target, _GOAL_WEIGHT + weight))
                    arcs[v].append((target, weight))
        order.extend(_max_dag(arcs, scc))
    ranks = {binary.atoms[kept[i]]: rank for rank, i in enumerate(order)}
    return ranks


def _changing_variables(binary: BinaryTask) -> list[int]:
    """Variables whose other value some effect can set, in variable order."""
    # the translator's initial state leaves derived variables at their default value (false)
    init = [2 * v if v in binary.derived else fact for v, fact in enumerate(binary.init)]
    changing = set()
    for action in binary.actions:
        if action.added:
            continue
        pre = {f >> 1: f for f in action.pre}
        for _, effect in action.effects:
            var = effect >> 1
            if effect != init[var] and pre.get(var, init[var]) == init[var]:
                changing.add(var)
    return sorted(changing)


def _sccs(graph: list[list[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components in topological order (FD's ``sccs.py`` order)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: dict[int, int] = {}
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(len(graph)):
        if root in index:
            continue
        work: list[tuple[int, int | None, int]] = [(root, None, -1)]
        while work:
            v, w, i = work.pop()
            if i == -1:  # begin
                counter += 1
                index[v] = low[v] = counter
                on_stack[v] = len(stack)
                stack.append(v)
                work.append((v, None, 0))
            elif w is not None:  # return from w
                low[v] = min(low[v], low[w])
                work.append((v, None, i + 1))
            elif i == len(graph[v]):
                if low[v] == index[v]:
                    at = on_stack[v]
                    scc = stack[at:]
                    del stack[at:]
                    for n in scc:
                        del on_stack[n]
                    out.append(scc)
            else:
                w = graph[v][i]
                if w not in index:
                    work.append((v, w, i))
                    work.append((w, None, -1))
                else:
                    if w in on_stack:
                        low[v] = min(low[v], index[w])
                    work.append((v, None, i + 1))
    out.reverse()
    return out


def _max_dag(arcs: dict[int, list[tuple[int, int]]], input_order: list[int]) -> list[int]:
    """Repeatedly take the variable with the least incoming weight (ties: input order)."""
    incoming: dict[int, int] = defaultdict(int)
    for edges in arcs.values():
        for target, weight in edges:
            incoming[target] += weight
    by_weight: dict[int, deque[int]] = defaultdict(deque)
    for node in input_order:
        by_weight[incoming[node]].append(node)
    heap = list(by_weight)
    heapq.heapify(heap)
    done: set[int] = set()
    result = []
    while heap:
        key = heap[0]
        chosen = None
        entries = by_weight[key]
        while entries and (chosen is None or chosen in done or key > incoming[chosen]):
            chosen = entries.popleft()
        if not entries:
            del by_weight[key]
            heapq.heappop(heap)
        if chosen is None or chosen in done:
            continue
        done.add(chosen)
        result.append(chosen)
        for target, weight in arcs[chosen]:
            if target in done:
                continue
            weight %= _GOAL_WEIGHT
            if weight == 0:
                continue
            incoming[target] -= weight
            if incoming[target] not in by_weight:
                heapq.heappush(heap, incoming[target])
            by_weight[incoming[target]].append(target)
    return result
