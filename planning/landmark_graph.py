"""The landmark graph: a small class around ``networkx.DiGraph``.

Node schema (``graph.nodes[id]``): ``landmark`` -> :class:`Landmark` (``atoms``, ``kind``
"fact" | "conjunctive", ``initially_true``, ``goal``).
Edge schema (``graph.edges[u, v]``): ``kind`` -> "greedy-necessary" | "natural"; u must be
achieved before v. These two kinds are sound and form a DAG (checked on construction).
Reasonable orderings (``kind`` "reasonable") can contradict others and may form cycles; they
live apart in ``reasonable`` and in :meth:`full_graph`.
Natural orderings implied by a path of other orderings are left out (the transitive
closure is unchanged), so the edges shown are the informative ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import networkx as nx

from asg.planning.errors import AsgError
from asg.planning.task import Atom, Task

ORDERING_KINDS = ("greedy-necessary", "natural", "reasonable")


@dataclass(frozen=True)
class Landmark:
    """A fact (one atom) or conjunctive (several atoms true together) landmark."""

    id: int
    atoms: frozenset[Atom]
    kind: str
    initially_true: bool
    goal: bool

    @property
    def atom(self) -> Atom:
        """The atom of a fact landmark."""
        if len(self.atoms) != 1:
            raise ValueError(f"landmark {self} is conjunctive")
        return next(iter(self.atoms))

    def atom_strings(self) -> list[str]:
        return sorted(str(a) for a in self.atoms)

    def __str__(self) -> str:
        names = self.atom_strings()
        return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"


@dataclass(frozen=True)
class Ordering:
    """``source`` must (or, for "reasonable", should) be achieved before ``target``."""

    source: int
    target: int
    kind: str


@dataclass
class LandmarkGraph:
    """Landmarks and orderings of one task, with validation, linearizations and export."""

    task: Task
    landmarks: list[Landmark]
    orderings: list[Ordering]
    m: int = 1
    method: str = "hm"
    seconds: float = 0.0
    reasonable: list[Ordering] = field(default_factory=list)
    relaxed_solvable: bool = True

    def __post_init__(self) -> None:
        self.graph = nx.DiGraph()
        for lm in self.landmarks:
            self.graph.add_node(lm.id, landmark=lm)
        for o in self.orderings:
            if o.kind not in ORDERING_KINDS[:2]:
                raise ValueError(f"ordering kind {o.kind!r} belongs in `reasonable`")
            self.graph.add_edge(o.source, o.target, kind=o.kind)
        if not nx.is_directed_acyclic_graph(self.graph):
            cycle = nx.find_cycle(self.graph)
            raise AsgError("natural/greedy-necessary orderings form a cycle: "
                           + " -> ".join(str(self.by_id(u)) for u, _ in cycle))

    # -- queries ---------------------------------------------------------------------
    def by_id(self, landmark_id: int) -> Landmark:
        return self.graph.nodes[landmark_id]["landmark"]

    def find(self, atom: str | Atom) -> Landmark:
        """The fact landmark of ``atom`` (e.g. ``"(has-key)"``)."""
        target = Atom.parse(atom) if isinstance(atom, str) else atom
        for lm in self.landmarks:
            if lm.atoms == frozenset({target}):
                return lm
        raise KeyError(str(target))

    def predecessors(self, landmark: Landmark, kinds: Iterable[str] = ORDERING_KINDS[:2]) -> list[Landmark]:
        kinds = set(kinds)
        return [self.by_id(u) for u in sorted(self.graph.predecessors(landmark.id))
                if self.graph.edges[u, landmark.id]["kind"] in kinds]

    def ordering_counts(self) -> dict[str, int]:
        counts = {kind: 0 for kind in ORDERING_KINDS}
        for o in self.orderings + self.reasonable:
            counts[o.kind] += 1
        return counts

    def full_graph(self) -> nx.MultiDiGraph:
        """All orderings, reasonable included (may hold cycles)."""
        full = nx.MultiDiGraph(self.graph)
        for o in self.reasonable:
            full.add_edge(o.source, o.target, kind=o.kind)
        return full

    def transitive_reduction(self) -> nx.DiGraph:
        """The sound orderings without the implied ones, for display."""
        reduced = nx.transitive_reduction(self.graph)
        reduced.add_nodes_from(self.graph.nodes(data=True))
        for u, v in reduced.edges:
            reduced.edges[u, v]["kind"] = self.graph.edges[u, v]["kind"]
        return reduced

    # -- learner-facing views --------------------------------------------------------------
    def _precedence(self, ids: list[int]) -> nx.DiGraph:
        """Orderings among ``ids``, through the closure (paths via other landmarks count)."""
        chosen = set(ids)
        order = nx.DiGraph()
        order.add_nodes_from(ids)
        for u in ids:
            for v in nx.descendants(self.graph, u):
                if v in chosen:
                    order.add_edge(u, v)
        return order

    def linearizations(self, limit: int = 100, landmarks: list[Landmark] | None = None) -> list[list[Landmark]]:
        """Up to ``limit`` total orders of ``landmarks`` (default: fact landmarks not initially true)
        that respect every sound ordering; deterministic (smallest id first)."""
        chosen = landmarks if landmarks is not None else [
            lm for lm in self.landmarks if lm.kind == "fact" and not lm.initially_true]
        order = self._precedence([lm.id for lm in chosen])
        out: list[list[Landmark]] = []
        for ids in _topological_orders(order, limit):
            out.append([self.by_id(i) for i in ids])
        return out

    def subgoals(self) -> list[Landmark]:
        """Skill subgoals (ASGRL Sec. 4.2): fact landmarks, not initially true, that appear in an
        operator precondition or in the goal, in the first linearization."""
        needed = {a for op in self.task.operators for a in op.pre} | set(self.task.goal)
        chosen = [lm for lm in self.landmarks
                  if lm.kind == "fact" and not lm.initially_true and lm.atom in needed]
        orders = self.linearizations(limit=1, landmarks=chosen)
        return orders[0] if orders else []

    def subgoal_linearizations(self, limit: int = 100) -> list[list[Landmark]]:
        """Every order of :meth:`subgoals` that respects the sound orderings (up to ``limit``)."""
        return self.linearizations(limit=limit, landmarks=self.subgoals())

    # -- export ------------------------------------------------------------------------------
    def to_json(self, stats: dict | None = None) -> dict:
        """The JSON contract of ``asg landmarks --format json``."""
        return {
            "domain": self.task.domain_name,
            "problem": self.task.name,
            "method": self.method,
            "m": self.m,
            "landmarks": [
                {"id": lm.id, "atoms": lm.atom_strings(), "kind": lm.kind,
                 "initially_true": lm.initially_true, "goal": lm.goal}
                for lm in self.landmarks
            ],
            "orderings": [
                {"from": o.source, "to": o.target, "kind": o.kind}
                for o in self.orderings + self.reasonable
            ],
            "stats": stats if stats is not None else self.stats(),
        }

    def stats(self) -> dict:
        return {"facts": len(self.task.facts), "operators": len(self.task.operators),
                "seconds": round(self.seconds, 6)}

    def to_dot(self) -> str:
        """Graphviz DOT text (solid: greedy-necessary, dashed: natural, dotted: reasonable)."""
        style = {"greedy-necessary": "solid", "natural": "dashed", "reasonable": "dotted"}
        lines = [f'digraph "{self.task.name}" {{', "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
        for lm in self.landmarks:
            shape = "doubleoctagon" if lm.goal else ("ellipse" if lm.initially_true else "box")
            label = "\\n".join(lm.atom_strings())
            lines.append(f'  {lm.id} [label="{label}", shape={shape}];')
        for o in self.orderings + self.reasonable:
            lines.append(f'  {o.source} -> {o.target} [style={style[o.kind]}, label="{_short(o.kind)}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _short(kind: str) -> str:
    return {"greedy-necessary": "gn", "natural": "nat", "reasonable": "r"}[kind]


def _topological_orders(order: nx.DiGraph, limit: int) -> Iterator[list[int]]:
    """Topological orders of a DAG, smallest available id first, at most ``limit`` of them."""
    indegree = {n: order.in_degree(n) for n in order.nodes}
    prefix: list[int] = []
    produced = 0

    def extend() -> Iterator[list[int]]:
        nonlocal produced
        if produced >= limit:
            return
        if len(prefix) == len(indegree):
            produced += 1
            yield list(prefix)
            return
        for node in sorted(n for n, d in indegree.items() if d == 0 and n not in placed):
            placed.add(node)
            prefix.append(node)
            for succ in order.successors(node):
                indegree[succ] -= 1
            yield from extend()
            for succ in order.successors(node):
                indegree[succ] += 1
            prefix.pop()
            placed.discard(node)
            if produced >= limit:
                return

    placed: set[int] = set()
    yield from extend()
