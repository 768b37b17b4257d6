"""The landmark graph: a small class around ``networkx.DiGraph``.

Node schema (``graph.nodes[id]``): ``landmark`` -> :class:`Landmark` (``atoms``, ``kind``
"fact" | "conjunctive" | "disjunctive", ``initially_true``, ``goal``).
Edge schema (``graph.edges[u, v]``): ``kind`` -> "greedy-necessary" | "natural"; u must be
achieved before v. These two kinds are sound and form a DAG (checked on construction).
Reasonable orderings (``kind`` "reasonable") can contradict others and may form cycles; they
live apart in ``reasonable`` and in :meth:`full_graph`.
Natural orderings implied by a path of other orderings are left out (the transitive
closure is unchanged), so the edges shown are the informative ones.

networkx is imported only when :attr:`LandmarkGraph.graph` (or an export that needs it) is
first used: queries, linearizations, subgoals and JSON/text/DOT export work on plain
adjacency dicts, so ``asg landmarks --format json`` never pays networkx's import time.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from asg.planning.errors import AsgError
from asg.planning.task import Atom, Task

if TYPE_CHECKING:
    import networkx as nx

ORDERING_KINDS = ("greedy-necessary", "natural", "reasonable")
LANDMARK_KINDS = ("fact", "conjunctive", "disjunctive")


@dataclass(frozen=True)
class Landmark:
    """A fact (one atom), conjunctive (several atoms true together) or disjunctive (one of several
    atoms true at some point, Fast Downward's ``lm_rhw``) landmark."""

    id: int
    atoms: frozenset[Atom]
    kind: str
    initially_true: bool
    goal: bool

    @property
    def atom(self) -> Atom:
        """The atom of a fact landmark."""
        if len(self.atoms) != 1:
            raise ValueError(f"landmark {self} is {self.kind}, not one atom")
        return next(iter(self.atoms))

    def atom_strings(self) -> list[str]:
        return sorted(str(a) for a in self.atoms)

    def __str__(self) -> str:
        names = self.atom_strings()
        if len(names) == 1:
            return names[0]
        return " | ".join(names) if self.kind == "disjunctive" else "{" + ", ".join(names) + "}"

    def label_lines(self) -> list[str]:
        """One atom a line, for boxes in pictures; disjuncts after the first start with ``| ``."""
        names = self.atom_strings()
        if self.kind != "disjunctive":
            return names
        return names[:1] + ["| " + name for name in names[1:]]


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
    factory: str = "hm"
    seconds: float = 0.0
    reasonable: list[Ordering] = field(default_factory=list)
    relaxed_solvable: bool = True

    def __post_init__(self) -> None:
        self._landmark = {lm.id: lm for lm in self.landmarks}
        self._out: dict[int, dict[int, str]] = {lm.id: {} for lm in self.landmarks}  # u -> {v: kind}
        self._in: dict[int, dict[int, str]] = {lm.id: {} for lm in self.landmarks}  # v -> {u: kind}
        for o in self.orderings:
            if o.kind not in ORDERING_KINDS[:2]:
                raise ValueError(f"ordering kind {o.kind!r} belongs in `reasonable`")
            self._out.setdefault(o.source, {})[o.target] = o.kind
            self._in.setdefault(o.target, {})[o.source] = o.kind
            self._out.setdefault(o.target, {})
            self._in.setdefault(o.source, {})
        cycle = _find_cycle(self._out)
        if cycle:
            raise AsgError("natural/greedy-necessary orderings form a cycle: "
                           + " -> ".join(str(self.by_id(u)) for u in cycle))
        self._graph: nx.DiGraph | None = None

    @property
    def method(self) -> str:
        """The factory's name (the field's name before issue 35)."""
        return self.factory

    def describe(self) -> str:
        """The factory in words: ``h^m, m=1``, ``rhw`` or ``zg``."""
        return f"h^m, m={self.m}" if self.factory == "hm" else self.factory

    @property
    def graph(self) -> nx.DiGraph:
        """The sound orderings as a ``networkx.DiGraph`` (node attr ``landmark``, edge attr ``kind``),
        built on first use."""
        if self._graph is None:
            import networkx as nx

            graph = nx.DiGraph()
            for lm in self.landmarks:
                graph.add_node(lm.id, landmark=lm)
            for o in self.orderings:
                graph.add_edge(o.source, o.target, kind=o.kind)
            self._graph = graph
        return self._graph

    # -- queries ---------------------------------------------------------------------
    def by_id(self, landmark_id: int) -> Landmark:
        return self._landmark[landmark_id]

    def in_edges(self, landmark_id: int) -> dict[int, str]:
        """Sound orderings into ``landmark_id``: predecessor id -> kind."""
        return self._in[landmark_id]

    def out_edges(self, landmark_id: int) -> dict[int, str]:
        """Sound orderings out of ``landmark_id``: successor id -> kind."""
        return self._out[landmark_id]

    def find(self, atom: str | Atom) -> Landmark:
        """The fact landmark of ``atom`` (e.g. ``"(has-key)"``)."""
        target = Atom.parse(atom) if isinstance(atom, str) else atom
        for lm in self.landmarks:
            if lm.atoms == frozenset({target}):
                return lm
        raise KeyError(str(target))

    def predecessors(self, landmark: Landmark, kinds: Iterable[str] = ORDERING_KINDS[:2]) -> list[Landmark]:
        kinds = set(kinds)
        return [self.by_id(u) for u, kind in sorted(self._in[landmark.id].items()) if kind in kinds]

    def ordering_counts(self) -> dict[str, int]:
        counts = {kind: 0 for kind in ORDERING_KINDS}
        for o in self.orderings + self.reasonable:
            counts[o.kind] += 1
        return counts

    def needed_again(self) -> list[tuple[Landmark, Landmark]]:
        """(landmark, after): initially true landmarks a reasonable ordering puts after another
        landmark. The way to the goal makes them false, so they must be achieved again after it
        (``(hands-empty)`` after ``(has-key)``: the key goes down before the ball comes up; LAMA's
        landmarks "required again"). Empty unless the graph was built with reasonable orderings."""
        return [(self.by_id(o.target), self.by_id(o.source)) for o in self.reasonable
                if self.by_id(o.target).initially_true]

    def full_graph(self) -> nx.MultiDiGraph:
        """All orderings, reasonable included (may hold cycles)."""
        import networkx as nx

        full = nx.MultiDiGraph(self.graph)
        for o in self.reasonable:
            full.add_edge(o.source, o.target, kind=o.kind)
        return full

    def transitive_reduction(self) -> nx.DiGraph:
        """The sound orderings without the implied ones, for display."""
        import networkx as nx

        reduced = nx.transitive_reduction(self.graph)
        reduced.add_nodes_from(self.graph.nodes(data=True))
        for u, v in reduced.edges:
            reduced.edges[u, v]["kind"] = self.graph.edges[u, v]["kind"]
        return reduced

    # -- learner-facing views --------------------------------------------------------------
    def _precedence(self, ids: list[int]) -> dict[int, list[int]]:
        """Orderings among ``ids``, through the closure (paths via other landmarks count):
        id -> the chosen ids after it."""
        chosen = set(ids)
        order: dict[int, list[int]] = {}
        for u in ids:
            seen, stack = set(), [u]
            while stack:
                for v in self._out[stack.pop()]:
                    if v not in seen:
                        seen.add(v)
                        stack.append(v)
            order[u] = [v for v in seen if v in chosen]
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
        operator precondition, an effect condition, an axiom body or the goal, in the first
        linearization. Atoms the translator invents (``new-axiom@N``, for universal conditions)
        are never subgoals: no labeler reports them."""
        task = self.task
        needed = {a for op in task.operators for a in op.pre} | set(task.goal)
        needed.update(a for op in task.operators for e in op.conditional for a in e.condition)
        needed.update(a for axiom in task.axioms for a in axiom.body)
        chosen = [lm for lm in self.landmarks
                  if lm.kind == "fact" and not lm.initially_true and lm.atom in needed
                  and not lm.atom.predicate.startswith("new-axiom@")]
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
            "factory": self.factory,
            "method": self.factory,
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
            "notes": self.notes(),
        }

    def stats(self) -> dict:
        task = self.task
        return {"facts": len(task.facts), "operators": len(task.operators), "seconds": round(self.seconds, 6),
                "axioms": len(task.axioms), "conditional_effects": sum(len(op.conditional) for op in task.operators),
                "action_costs": task.action_costs}

    def notes(self) -> list[str]:
        """What the factory did not read of the task, as Fast Downward's factory does not."""
        if self.factory == "hm" and self.task.has_conditional_effects:
            return ["effect conditions ignored (each conditional effect read as unconditional), as Fast "
                    "Downward's lm_hm does; --factory rhw or zg reads them"]
        return []

    def to_text(self) -> str:
        """The report ``asg landmarks`` prints: landmarks with their flags, orderings by kind, subgoals."""
        lines = [f"{self.task.domain_name} / {self.task.name}: {len(self.landmarks)} landmarks "
                 f"({self.describe()}) from {len(self.task.facts)} facts and {len(self.task.operators)} operators "
                 f"in {self.seconds:.3f} s", "", "Landmarks"]
        width = max((len(str(lm)) for lm in self.landmarks), default=10)
        for lm in self.landmarks:
            flags = [flag for flag, on in (("goal", lm.goal), ("initially true", lm.initially_true),
                                           ("conjunctive", lm.kind == "conjunctive"),
                                           ("disjunctive", lm.kind == "disjunctive")) if on]
            lines.append(f"  {lm.id:3d}  {str(lm):{width}s}  {', '.join(flags)}".rstrip())
        lines += ["", "Orderings (before -> after)"]
        for kind in ("greedy-necessary", "natural", "reasonable"):
            group = [o for o in self.orderings + self.reasonable if o.kind == kind]
            if group:
                lines.append(f"  {kind} ({len(group)})")
                lines.extend(f"    {self.by_id(o.source)} -> {self.by_id(o.target)}" for o in group)
        subgoals = self.subgoals()
        if subgoals:
            lines += ["", "Subgoals for a learner: " + " -> ".join(str(lm) for lm in subgoals)]
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        """Graphviz DOT text (solid: greedy-necessary, dashed: natural, dotted: reasonable)."""
        style = {"greedy-necessary": "solid", "natural": "dashed", "reasonable": "dotted"}
        lines = [f'digraph "{self.task.name}" {{', "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
        for lm in self.landmarks:
            shape = "doubleoctagon" if lm.goal else ("ellipse" if lm.initially_true else "box")
            label = "\\n".join(lm.label_lines())
            lines.append(f'  {lm.id} [label="{label}", shape={shape}];')
        for o in self.orderings + self.reasonable:
            lines.append(f'  {o.source} -> {o.target} [style={style[o.kind]}, label="{_short(o.kind)}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"


def _short(kind: str) -> str:
    return {"greedy-necessary": "gn", "natural": "nat", "reasonable": "r"}[kind]


def _find_cycle(successors: dict[int, dict[int, str]]) -> list[int]:
    """Nodes of one cycle in order (empty if the graph is acyclic); iterative DFS."""
    state: dict[int, int] = {}  # 1: on the current path, 2: finished
    for root in successors:
        if root in state:
            continue
        path, iters = [root], [iter(successors[root])]
        state[root] = 1
        while path:
            child = next(iters[-1], None)
            if child is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(child) == 1:
                return path[path.index(child):]
            elif child not in state:
                state[child] = 1
                path.append(child)
                iters.append(iter(successors.get(child, ())))
    return []


def _topological_orders(order: dict[int, list[int]], limit: int) -> Iterator[list[int]]:
    """Topological orders of a DAG (node -> successors), smallest available id first, at most
    ``limit`` of them."""
    indegree = dict.fromkeys(order, 0)
    for successors in order.values():
        for v in successors:
            indegree[v] += 1
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
            for succ in order[node]:
                indegree[succ] -= 1
            yield from extend()
            for succ in order[node]:
                indegree[succ] += 1
            prefix.pop()
            placed.discard(node)
            if produced >= limit:
                return

    placed: set[int] = set()
    yield from extend()
