"""Richter, Helmert & Westphal's landmarks (AAAI 2008), as Fast Downward's ``lm_rhw``.

Back-chaining from the goals over FD's binary finite-domain task
(:mod:`asg.planning.landmarks.binary`). For each landmark L not true initially:

1. Relaxed exploration without L: which facts are reachable before L is first true (the
   operators setting L unconditionally, and every effect setting L, are left out).
2. L's possible first achievers are the actions applicable in that exploration with an
   effect setting a fact of L whose conditions are reachable. Each contributes the facts that
   hold whenever it can make L true: its precondition; for a variable it changes but has no
   precondition on, whose initial value is not L's (all variables are two-valued here), that
   initial value, which still holds the first time L becomes true (this is where
   ``(not (p))`` landmarks true initially come from); the effect conditions shared by all its
   effects setting L. The facts all first achievers share are landmarks, greedy-necessary
   before L.
3. Domain transition graph lookahead: a value L's variable must pass through on every path
   from its initial value is a landmark, naturally before L. With two values that is the
   initial value itself.
4. Disjunctive landmarks: group the first achievers' facts by predicate; a predicate that
   every first achiever contributes a fact of gives the disjunction of those facts (2 to 4 of
   them, none true initially, none already a fact landmark, overlapping no other disjunction),
   greedy-necessary before L; one lying inside an existing disjunction orders that one before
   L. A fact landmark found later replaces a disjunction holding it (FD >= 21.12): the
   disjunction's parents become natural parents of the fact.
5. Forward orderings, once no landmark is left to expand: L is naturally before every fact
   landmark unreachable in L's exploration that no achiever of L also achieves.

Where two orderings join the same pair, the stronger kind (greedy-necessary) stays.
"""
from __future__ import annotations

from collections import deque

from asg.planning.landmarks.binary import BinaryTask, binary_task
from asg.planning.landmarks.fd_order import translator_order
from asg.planning.landmarks.result import FactoryResult
from asg.planning.task import Atom, Task

_RANK = {"natural": 1, "greedy-necessary": 2}
_MAX_DISJUNCTS = 4


def rhw_landmarks(task: Task, order: dict[Atom, int] | None = None) -> FactoryResult:
    """Fact and disjunctive landmarks of ``task`` with greedy-necessary and natural orderings.

    ``order`` numbers the variables (see :func:`binary_task`): goals and new landmarks are
    expanded in that order, which decides between overlapping disjunctions. By default it is
    the order FD's translator gives them (:func:`translator_order`).
    """
    binary = binary_task(task)
    binary = binary.renumbered(translator_order(binary) if order is None else order)
    graph = _Graph()
    chainer = _Backchainer(binary, graph)
    chainer.run()
    alive = [i for i in range(len(graph.facts)) if graph.alive[i]]
    position = {node: i for i, node in enumerate(alive)}
    nodes = [(graph.facts[i], graph.disjunctive[i]) for i in alive]
    edges = {(position[u], position[v]): kind
             for u in alive for v, kind in graph.children[u].items()}
    reachable = chainer.exploration.reached(frozenset())
    solvable = all(reachable[g] for g in binary.goal)
    return FactoryResult.of(binary, nodes, set(binary.goal), set(binary.init), edges, solvable)


class _Graph:
    """Landmark nodes (fact-id sets) and orderings, with FD's add-or-strengthen rule."""

    def __init__(self) -> None:
        self.facts: list[frozenset[int]] = []
        self.disjunctive: list[bool] = []
        self.alive: list[bool] = []
        self.children: list[dict[int, str]] = []
        self.parents: list[dict[int, str]] = []
        self.simple: dict[int, int] = {}  # fact -> its fact landmark
        self.disjunction: dict[int, int] = {}  # fact -> the disjunctive landmark holding it

    def add(self, facts: frozenset[int], disjunctive: bool) -> int:
        node = len(self.facts)
        self.facts.append(facts)
        self.disjunctive.append(disjunctive)
        self.alive.append(True)
        self.children.append({})
        self.parents.append({})
        for fact in facts:
            (self.disjunction if disjunctive else self.simple)[fact] = node
        return node

    def order(self, u: int, v: int, kind: str) -> None:
        old = self.children[u].get(v)
        if old is None or _RANK[old] < _RANK[kind]:
            self.children[u][v] = kind
            self.parents[v][u] = kind

    def remove(self, node: int) -> None:
        for child in self.children[node]:
            del self.parents[child][node]
        for parent in self.parents[node]:
            del self.children[parent][node]
        self.children[node], self.parents[node] = {}, {}
        self.alive[node] = False
        for fact in self.facts[node]:
            if self.disjunction.get(fact) == node:
                del self.disjunction[fact]


class _Exploration:
    """Relaxed reachability from the initial state with some facts excluded (FD's Exploration)."""

    def __init__(self, binary: BinaryTask) -> None:
        self.binary = binary
        self.effect: list[int] = []  # unary operator -> the fact it sets
        self.counts: list[int] = []
        self.needed_by: list[list[int]] = [[] for _ in range(binary.n_facts)]
        self.setting: list[list[int]] = [[] for _ in range(binary.n_facts)]  # unary ops setting a fact
        self.banning: list[list[int]] = [[] for _ in range(binary.n_facts)]  # their whole operators
        unary_of: list[list[int]] = []
        for action in binary.actions:
            mine = []
            for cond, fact in action.effects:
                u = len(self.effect)
                mine.append(u)
                needs = set(action.pre) | set(cond)
                self.effect.append(fact)
                self.counts.append(len(needs))
                self.setting[fact].append(u)
                for f in needs:
                    self.needed_by[f].append(u)
            unary_of.append(mine)
            for cond, fact in action.effects:
                if not cond and not action.axiom:
                    self.banning[fact].extend(mine)
        self.free = [u for u, count in enumerate(self.counts) if count == 0]

    def reached(self, excluded: frozenset[int]) -> bytearray:
        """fact -> 1 where reachable without ever making an ``excluded`` fact true."""
        effect = self.effect
        missing = list(self.counts)
        never = 1 << 40  # an excluded unary operator's count never reaches zero
        for fact in excluded:
            for u in self.setting[fact]:
                missing[u] = never
            for u in self.banning[fact]:
                missing[u] = never
        reached = bytearray(self.binary.n_facts)
        queue: deque[int] = deque()
        for fact in self.binary.init:
            if fact not in excluded:
                reached[fact] = 1
                queue.append(fact)
        for u in self.free:
            fact = effect[u]
            if not missing[u] and not reached[fact]:
                reached[fact] = 1
                queue.append(fact)
        while queue:
            for u in self.needed_by[queue.popleft()]:
                missing[u] -= 1
                if not missing[u]:
                    fact = effect[u]
                    if not reached[fact]:
                        reached[fact] = 1
                        queue.append(fact)
        return reached


class _Backchainer:
    """The back-chaining loop of ``lm_rhw`` over one graph."""

    def __init__(self, binary: BinaryTask, graph: _Graph) -> None:
        self.binary = binary
        self.graph = graph
        self.exploration = _Exploration(binary)
        self.achievers = binary.achievers()
        self.achiever_sets = [frozenset(a) for a in self.achievers]
        self.predicate = [binary.atoms[f >> 1].predicate for f in range(binary.n_facts)]
        self.init = binary.init
        self.open: deque[int] = deque()
        self.unreached: dict[int, bytearray] = {}  # node -> its exploration, for forward orderings

    def run(self) -> None:
        graph = self.graph
        for fact in dict.fromkeys(self.binary.goal):
            self.open.append(graph.add(frozenset({fact}), False))
        init = set(self.init)
        while self.open:
            node = self.open.popleft()
            if not graph.alive[node] or graph.facts[node] & init:
                continue
            self.expand(node)
        self.add_forward_orderings()

    def expand(self, node: int) -> None:
        graph = self.graph
        facts = graph.facts[node]
        reached = self.exploration.reached(facts)
        first = [k for k in sorted({k for f in facts for k in self.achievers[f]})
                 if self.possibly_reaches(k, reached, facts)]
        needs = {k: self.preconditions_for(k, facts) for k in first}
        shared = frozenset.intersection(*needs.values()) if needs else frozenset()
        for fact in sorted(shared):
            self.add_simple(fact, node, "greedy-necessary")
            if not graph.alive[node]:
                return  # a disjunction replaced by one of its own achievers' preconditions
        self.unreached[node] = reached
        if not graph.disjunctive[node]:
            (fact,) = facts
            other = fact ^ 1  # the variable's initial value: every path to `fact` starts there
            if reached[other]:
                self.add_simple(other, node, "natural")
        init = set(self.init)
        for disjunction in self.disjunctive_preconditions(first, needs):
            if len(disjunction) <= _MAX_DISJUNCTS and not disjunction & init:
                self.add_disjunctive(disjunction, node)

    def possibly_reaches(self, k: int, reached: bytearray, facts: frozenset[int]) -> bool:
        action = self.binary.actions[k]
        if not all(reached[f] for f in action.pre):
            return False
        return any(fact in facts and all(reached[c] for c in cond) for cond, fact in action.effects)

    def preconditions_for(self, k: int, facts: frozenset[int]) -> frozenset[int]:
        """What holds whenever action k makes a fact of ``facts`` true for the first time."""
        action = self.binary.actions[k]
        result = {f >> 1: f for f in action.pre}
        has_pre = set(result)
        for _, effect in action.effects:
            var = effect >> 1
            if var not in has_pre:
                for fact in facts:
                    if fact >> 1 == var and self.init[var] != fact:
                        result[var] = self.init[var]
                        break
        shared: dict[int, int] | None = None
        for cond, effect in action.effects:
            if effect not in facts:
                continue
            if not cond:
                shared = None
                break
            mine = {c >> 1: c for c in cond}
            shared = mine if shared is None else {v: c for v, c in shared.items() if mine.get(v) == c}
            if not shared:
                break
        for var, fact in (shared or {}).items():
            result.setdefault(var, fact)
        return frozenset(result.values())

    def disjunctive_preconditions(self, first: list[int], needs: dict[int, frozenset[int]]) -> list[frozenset[int]]:
        """Per predicate, the facts of it the first achievers need, where every one needs one."""
        by_predicate: dict[str, set[int]] = {}
        users: dict[str, set[int]] = {}
        for k in first:
            for fact in needs[k]:
                if fact in self.graph.simple:
                    continue
                name = self.predicate[fact]
                by_predicate.setdefault(name, set()).add(fact)
                users.setdefault(name, set()).add(k)
        return [frozenset(by_predicate[name]) for name in sorted(by_predicate)
                if len(users[name]) == len(first) and len(by_predicate[name]) > 1]

    def add_simple(self, fact: int, node: int, kind: str) -> None:
        graph = self.graph
        if fact in graph.simple:
            graph.order(graph.simple[fact], node, kind)
            return
        new = graph.add(frozenset({fact}), False)
        self.open.append(new)
        graph.order(new, node, kind)
        replaced = graph.disjunction.get(fact)
        if replaced is not None:
            parents = list(graph.parents[replaced])
            graph.remove(replaced)
            self.unreached.pop(replaced, None)
            for parent in parents:
                graph.order(parent, new, "natural")

    def add_disjunctive(self, facts: frozenset[int], node: int) -> None:
        graph = self.graph
        if any(f in graph.simple for f in facts):
            return  # the fact landmark is stronger; its ordering to `node` is not sure to hold
        holders = {graph.disjunction[f] for f in facts if f in graph.disjunction}
        if holders:
            # FD's "identical" test asks only that every atom lie in one and the same
            # disjunction, so a disjunction found again with fewer atoms still gets ordered
            if len(holders) == 1 and all(f in graph.disjunction for f in facts):
                graph.order(holders.pop(), node, "greedy-necessary")
            return
        new = graph.add(facts, True)
        self.open.append(new)
        graph.order(new, node, "greedy-necessary")

    def add_forward_orderings(self) -> None:
        graph = self.graph
        for node, reached in sorted(self.unreached.items()):
            if not graph.alive[node]:
                continue
            facts = graph.facts[node]
            theirs = frozenset().union(*(self.achiever_sets[f] for f in facts))
            for fact, target in sorted(graph.simple.items()):
                if not reached[fact] and fact not in facts and not (self.achiever_sets[fact] & theirs):
                    graph.order(node, target, "natural")
