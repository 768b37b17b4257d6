"""Landmark factories: h^m landmarks and orderings, optional reasonable orderings.

``compute_landmarks(task, m, reasonable)`` is the one entry point; the factories are
listed in ``METHODS`` so the CLI builds its choices from them.
"""
from __future__ import annotations

import heapq
import time

from asg.planning.errors import AsgError
from asg.planning.landmark_graph import Landmark, LandmarkGraph, Ordering
from asg.planning.landmarks.hm import HmResult, hm_landmarks
from asg.planning.landmarks.reasonable import reasonable_orderings
from asg.planning.task import Task

METHODS = {"hm": hm_landmarks}


def compute_landmarks(task: Task, m: int = 1, reasonable: bool = False, method: str = "hm") -> LandmarkGraph:
    """Fact (m=1) or fact and conjunctive (m=2) landmarks of ``task`` with their orderings."""
    if method not in METHODS:
        raise ValueError(f"unknown landmark method {method!r}; choose from {sorted(METHODS)}")
    start = time.perf_counter()
    result = METHODS[method](task, m)
    graph = _build_graph(task, result, m, method)
    if reasonable:
        graph.reasonable = reasonable_orderings(graph)
    graph.seconds = time.perf_counter() - start
    return graph


def _build_graph(task: Task, result: HmResult, m: int, method: str) -> LandmarkGraph:
    reached_goal = all(g in result.labels for g in result.goal_msets)
    nodes: set[int] = set(result.goal_msets)
    if reached_goal:
        for g in result.goal_msets:
            nodes.update(result.members(result.labels[g]))
    edges: dict[tuple[int, int], str] = {}

    def orderable(u: int, v: int) -> bool:
        return u in nodes and u != v

    if reached_goal:
        for v in nodes:
            for u in result.members(result.labels.get(v, 0)):
                if orderable(u, v):
                    edges[(u, v)] = "natural"
            for u in result.members(result.greedy_necessary.get(v, 0)):
                if orderable(u, v):
                    edges[(u, v)] = "greedy-necessary"

    def name(i: int) -> str:
        return " ".join(sorted(str(result.facts[f]) for f in result.msets[i]))

    order = _lexicographic_topological_order(nodes, edges, name)
    kept = _without_implied_natural(order, edges)
    new_id = {old: new for new, old in enumerate(order)}
    goal_set = set(result.goal_msets)
    landmarks = [
        Landmark(
            id=new_id[old],
            atoms=frozenset(result.facts[f] for f in result.msets[old]),
            kind="fact" if len(result.msets[old]) == 1 else "conjunctive",
            initially_true=old in result.init_msets,
            goal=old in goal_set,
        )
        for old in order
    ]
    orderings = sorted(
        (Ordering(new_id[u], new_id[v], kind) for (u, v), kind in kept.items()),
        key=lambda o: (o.source, o.target),
    )
    return LandmarkGraph(task, landmarks, orderings, m=m, method=method, relaxed_solvable=reached_goal)


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


__all__ = ["METHODS", "Landmark", "LandmarkGraph", "Ordering", "compute_landmarks"]
