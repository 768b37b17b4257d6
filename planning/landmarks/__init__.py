"""Landmark factories: h^m (Keyder et al.), Richter-Helmert-Westphal and Zhu-Givan, with
optional reasonable orderings.

``compute_landmarks(task, factory, m, reasonable)`` is the one entry point; the factories are
listed in ``FACTORIES`` (name -> one-line description) so the CLI builds its choices from them.
Every factory returns a :class:`~asg.planning.landmarks.result.FactoryResult`; the graph is
built from it here, the same way for all three: ids in a lexicographic topological order,
natural orderings implied by a path of others left out.
"""
from __future__ import annotations

import heapq
import time

from asg.planning.errors import AsgError
from asg.planning.landmark_graph import Landmark, LandmarkGraph, Ordering
from asg.planning.landmarks.hm import HmResult, hm_landmarks
from asg.planning.landmarks.reasonable import reasonable_orderings
from asg.planning.landmarks.result import FactoryResult, RawLandmark
from asg.planning.landmarks.rhw import rhw_landmarks
from asg.planning.landmarks.zg import zg_landmarks
from asg.planning.task import Task

FACTORIES = {
    "hm": "h^m landmarks on the AND/OR graph of the m-compilation (Keyder, Richter & Helmert 2010); "
          "FD's lm_hm",
    "rhw": "back-chaining from the goals with first achievers, domain transition graphs and "
           "disjunctive landmarks (Richter, Helmert & Westphal 2008); FD's lm_rhw",
    "zg": "label propagation in the relaxed planning graph (Zhu & Givan 2003); FD's lm_zg",
}
METHODS = FACTORIES  # the registry's name before issue 35


def compute_landmarks(task: Task, factory: str = "hm", m: int = 1, reasonable: bool = False) -> LandmarkGraph:
    """Landmarks of ``task`` with their sound orderings (and reasonable ones if asked).

    ``m`` is h^m's: 1 gives fact landmarks, 2 adds conjunctive ones; rhw and zg take m = 1 only.
    """
    if factory not in FACTORIES:
        raise ValueError(f"unknown landmark factory {factory!r}; choose from {sorted(FACTORIES)}")
    if factory != "hm" and m != 1:
        raise ValueError(f"m={m} is h^m's option; the {factory} factory has no m")
    start = time.perf_counter()
    if factory == "hm":
        result = _from_hm(hm_landmarks(task, m), m)
    elif factory == "rhw":
        result = rhw_landmarks(task)
    else:
        result = zg_landmarks(task)
    graph = build_graph(task, result, factory, m)
    if reasonable:
        graph.reasonable = reasonable_orderings(graph)
    graph.seconds = time.perf_counter() - start
    return graph


def _from_hm(result: HmResult, m: int) -> FactoryResult:
    """The h^m fixpoint as landmarks and orderings: goal m-sets and their labels; a label member
    is a natural parent, a member of the first achievers' shared preconditions a gn parent."""
    reached_goal = all(g in result.labels for g in result.goal_msets)
    nodes: set[int] = set(result.goal_msets)
    if reached_goal:
        for g in result.goal_msets:
            nodes.update(result.members(result.labels[g]))
    edges: dict[tuple[int, int], str] = {}
    if reached_goal:
        for v in nodes:
            for u in result.members(result.labels.get(v, 0)):
                if u in nodes and u != v:
                    edges[(u, v)] = "natural"
            for u in result.members(result.greedy_necessary.get(v, 0)):
                if u in nodes and u != v:
                    edges[(u, v)] = "greedy-necessary"
    order = sorted(nodes)
    position = {old: i for i, old in enumerate(order)}
    goal_set = set(result.goal_msets)
    landmarks = tuple(
        RawLandmark(frozenset(result.facts[f] for f in result.msets[old]),
                    "fact" if len(result.msets[old]) == 1 else "conjunctive",
                    old in result.init_msets, old in goal_set)
        for old in order)
    return FactoryResult(landmarks, {(position[u], position[v]): kind for (u, v), kind in edges.items()},
                         relaxed_solvable=reached_goal)


def build_graph(task: Task, result: FactoryResult, factory: str, m: int = 1) -> LandmarkGraph:
    """The :class:`LandmarkGraph` of a factory's result (ids in a lexicographic topological order)."""
    raw = result.landmarks
    nodes = set(range(len(raw)))
    names = {i: " ".join(sorted(str(a) for a in raw[i].atoms)) for i in nodes}
    order = _lexicographic_topological_order(nodes, result.edges, names.__getitem__)
    kept = _without_implied_natural(order, result.edges)
    new_id = {old: new for new, old in enumerate(order)}
    landmarks = [Landmark(id=new_id[old], atoms=raw[old].atoms, kind=raw[old].kind,
                          initially_true=raw[old].initially_true, goal=raw[old].goal) for old in order]
    orderings = sorted(
        (Ordering(new_id[u], new_id[v], kind) for (u, v), kind in kept.items()),
        key=lambda o: (o.source, o.target),
    )
    return LandmarkGraph(task, landmarks, orderings, m=m, factory=factory,
                         relaxed_solvable=result.relaxed_solvable)


def _lexicographic_topological_order(nodes: set[int], edges: dict[tuple[int, int], str], key) -> list[int]:
    """Kahn's algorithm taking the smallest ``key`` among the available nodes each time."""
    children: dict[int, list[int]] = {n: [] for n in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for u, v in edges:
        children[u].append(v)
        indegree[v] += 1
    ready = [(key(n), n) for n, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, (key(child), child))
    if len(order) != len(nodes):
        raise AsgError("the landmark orderings form a cycle")
    return order


def _without_implied_natural(order: list[int], edges: dict[tuple[int, int], str]) -> dict[tuple[int, int], str]:
    """Drop natural edges u -> v that a longer path u -> w -> ... -> v implies (the transitive
    reduction of the whole DAG decides); greedy-necessary edges all stay."""
    position = {n: i for i, n in enumerate(order)}
    children: dict[int, list[int]] = {n: [] for n in order}
    for u, v in edges:
        children[u].append(v)
    below = [0] * len(order)  # bitset over positions: nodes reachable by a path of length >= 1
    for i in range(len(order) - 1, -1, -1):
        bits = 0
        for child in children[order[i]]:
            j = position[child]
            bits |= below[j] | (1 << j)
        below[i] = bits
    via = {}  # node -> positions reached through one of its successors: a path of length >= 2
    for u, successors in children.items():
        bits = 0
        for w in successors:
            bits |= below[position[w]]
        via[u] = bits
    return {(u, v): kind for (u, v), kind in edges.items()
            if kind == "greedy-necessary" or not (via[u] >> position[v]) & 1}


__all__ = ["FACTORIES", "METHODS", "Landmark", "LandmarkGraph", "Ordering", "build_graph", "compute_landmarks"]
