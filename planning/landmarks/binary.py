"""A task as Fast Downward's translator leaves it with every fluent a binary variable.

``lm_zg`` and ``lm_rhw`` read FD's finite-domain task, not STRIPS. With invariant synthesis
off (``--invariant-generation-max-candidates 0``, the ``binary`` encoding of
:mod:`asg.planning.peer`) each fluent ``p`` is a variable with the two values ``Atom p`` and
``NegatedAtom p``. This module builds that task from asg's :class:`~asg.planning.task.Task`:

* fact ids: variable ``v`` (the atom ``atoms[v]``) has the facts ``2v`` (``NegatedAtom``) and
  ``2v + 1`` (``Atom``); every variable holds exactly one of them in each state, so the initial
  state names a value for every variable, ``NegatedAtom`` ones included;
* an operator is a precondition (at most one fact a variable) and a list of effects, each a
  fact with the conditions (read before the step) under which it happens;
* an axiom is an action with its body, and the head's default value (FD's axiom rules name the
  value they change from), as precondition and its head as one effect; FD's landmark heuristics
  add axioms for the default (false) values of derived atoms that something needs
  (:mod:`asg.planning.landmarks.default_axioms`), and so does this module.

The effects follow the translator (``translate.py``, ``translate_strips_operator_aux`` and
``build_sas_operator``), because which operator achieves what under which condition is what
both factories reason about: an add wins over a delete of the same atom; a delete gets the
deleted atom as condition, and the add conditions negated, unless the variable is binary and
nothing else sets it true (then the condition is pointless and dropped); an effect that
restates the precondition is dropped; conditions the precondition implies are dropped, and an
effect whose condition contradicts it is gone; an operator with no effect left is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from asg.planning.landmarks.default_axioms import default_value_rules
from asg.planning.task import Atom, Task

Fact = int  # 2 * variable + (1 if the atom holds else 0)


@dataclass(frozen=True)
class BinaryAction:
    """An operator (``axiom`` False) or axiom: precondition facts and (conditions, fact) effects."""

    name: str
    pre: tuple[Fact, ...]
    effects: tuple[tuple[tuple[Fact, ...], Fact], ...]
    axiom: bool = False
    added: bool = False  # a default-value axiom FD's search adds; not in the translator's task


@dataclass(frozen=True)
class BinaryTask:
    """Variables (one per fluent atom), the initial value of each, goal facts, actions."""

    atoms: tuple[Atom, ...]
    init: tuple[Fact, ...]  # init[v]: the fact of variable v that holds initially
    goal: tuple[Fact, ...]
    actions: tuple[BinaryAction, ...]
    derived: frozenset[int] = frozenset()  # variables of derived atoms (default value: false)

    @property
    def n_facts(self) -> int:
        return 2 * len(self.atoms)

    def atom(self, fact: Fact) -> Atom:
        """The asg atom of a fact: ``(p)`` or its complement ``(not (p))``."""
        atom = self.atoms[fact >> 1]
        return atom if fact & 1 else atom.negate()

    def renumbered(self, order: dict[Atom, int]) -> BinaryTask:
        """The same task with variables numbered by ``order`` (atom -> rank; others after)."""
        atoms = sorted(self.atoms, key=lambda a: (order.get(a, len(order)), a))
        new = {atom: v for v, atom in enumerate(atoms)}
        move = [0] * self.n_facts
        for v, atom in enumerate(self.atoms):
            move[2 * v] = 2 * new[atom]
            move[2 * v + 1] = 2 * new[atom] + 1
        actions = tuple(BinaryAction(a.name, tuple(sorted(move[f] for f in a.pre)),
                                     tuple((tuple(sorted(move[c] for c in cond)), move[f]) for cond, f in a.effects),
                                     a.axiom, a.added)
                        for a in self.actions)
        init = [0] * len(atoms)
        for fact in self.init:
            init[move[fact] >> 1] = move[fact]
        return BinaryTask(tuple(atoms), tuple(init), tuple(sorted(move[g] for g in self.goal)), actions,
                          frozenset(move[2 * v] >> 1 for v in self.derived))

    def achievers(self) -> list[list[int]]:
        """fact -> indices of the actions with an effect setting it (conditional ones too)."""
        table: list[list[int]] = [[] for _ in range(self.n_facts)]
        for k, action in enumerate(self.actions):
            for fact in sorted({f for _, f in action.effects}):
                table[fact].append(k)
        return table


def binary_task(task: Task, order: dict[Atom, int] | None = None) -> BinaryTask:
    """``task`` in FD's binary finite-domain form (see the module docstring).

    Variables are numbered by ``order`` (atom -> rank; FD's translator numbers them along its
    causal graph, and the order reaches rhw's output where disjunctions overlap), else by atom.
    """
    positives = {a.positive() for a in task.facts} | {a.positive() for a in task.goal}
    positives |= {a.positive() for a in task.derived}
    rank = order or {}
    atoms = tuple(sorted(positives, key=lambda a: (rank.get(a, len(rank)), a)))
    var = {atom: v for v, atom in enumerate(atoms)}
    state = task.closure(task.init) if task.axioms else task.init
    init = tuple(2 * v + (1 if atom in state else 0) for v, atom in enumerate(atoms))
    static_true = task.static_facts

    def fact_of(atom: Atom) -> Fact | bool:
        """The fact of a literal, or True/False for a literal on a constant atom."""
        v = var.get(atom.positive())
        if v is None:
            holds = atom.positive() in static_true
            return holds != atom.negated
        return 2 * v + (0 if atom.negated else 1)

    def condition(literals) -> dict[int, int] | None:
        """variable -> value of a conjunction, None if it cannot hold."""
        out: dict[int, int] = {}
        for literal in literals:
            fact = fact_of(literal)
            if fact is True:
                continue
            if fact is False or out.get(fact >> 1, fact & 1) != fact & 1:
                return None
            out[fact >> 1] = fact & 1
        return out

    goal = set()
    for atom in list(task.goal) + [a.negate() for a in task.negative_goal]:
        fact = fact_of(atom)
        if not isinstance(fact, bool):
            goal.add(fact)
    actions = []
    for op in task.operators:
        pre = condition(list(op.pre) + [a.negate() for a in op.neg_pre])
        if pre is None:
            continue
        if op.conditional:
            parts: list[tuple[frozenset[Atom], frozenset[Atom], frozenset[Atom]]] = [(frozenset(), op.add, op.delete)]
            parts += [(e.condition, e.add, e.delete) for e in op.conditional]
            effects = _translate_effects(pre, parts, var, condition)
        else:
            effects = _strips_effects(pre, op.add, op.delete, var)
        if effects:
            actions.append(BinaryAction(op.name, _facts(pre), effects))
    rules: list[tuple[int, tuple[int, ...]]] = []  # (head, body) of each axiom
    for rule in task.axioms:
        body = condition(rule.body)
        head = fact_of(rule.head)
        if body is None or isinstance(head, bool) or body.get(head >> 1, 1 - (head & 1)) != 1 - (head & 1):
            continue
        rules.append((head, _facts(body)))
        body[head >> 1] = 1 - (head & 1)  # FD's axiom rule names the head's old (default) value too
        actions.append(BinaryAction(f"axiom {rule.head}", _facts(body), (((), head),), axiom=True))
    derived = frozenset(var[a.positive()] for a in task.derived if a.positive() in var)
    if derived:
        needed = set(goal)
        for action in actions:
            if not action.axiom:
                needed.update(action.pre)
                needed.update(f for cond, _ in action.effects for f in cond)
        for head, condition_facts in default_value_rules(rules, derived, needed):
            rule_pre = tuple(sorted((head + 1,) + condition_facts))
            actions.append(BinaryAction(f"default {atoms[head >> 1].negate()}", rule_pre, (((), head),),
                                        axiom=True, added=True))
    return BinaryTask(atoms, init, tuple(sorted(goal)), tuple(actions), derived)


def _facts(values: dict[int, int]) -> tuple[Fact, ...]:
    return tuple(sorted(2 * v + value for v, value in values.items()))


def _strips_effects(pre: dict[int, int], add, delete, var: dict[Atom, int]) -> tuple:
    """:func:`_translate_effects` for an operator without conditional effects (the same result):
    an add wins over a delete, an effect restating the precondition goes, and a delete's
    guard is pointless on a two-valued variable nothing sets true."""
    added = {var[a] for a in add if not a.negated and a in var}
    out = [((), 2 * v + 1) for v in added if pre.get(v) != 1]
    out += [((), 2 * v) for v in {var[a] for a in delete if not a.negated and a in var} - added
            if pre.get(v) != 0]
    return tuple(sorted(out, key=lambda e: e[1]))


def _translate_effects(pre: dict[int, int], effects, var: dict[Atom, int], condition):
    """(conditions, fact) effects of one operator, as the translator builds them."""
    adds: dict[int, list[dict[int, int]]] = {}
    deletes: dict[int, list[dict[int, int]]] = {}
    for literals, add, delete in effects:
        cond = condition(literals)
        if cond is None:
            continue
        for table, atoms in ((adds, add), (deletes, delete)):
            for atom in atoms:
                if not atom.negated and atom in var:  # complements mirror the positive effect
                    table.setdefault(var[atom], []).append(cond)
    by_var: dict[int, dict[int, list[dict[int, int]]]] = {}
    for v, conds in adds.items():
        by_var.setdefault(v, {})[1] = list(conds)
    for v, conds in deletes.items():
        no_add = _negation(adds.get(v, []))
        if no_add is None:  # some add always fires: the delete never takes effect
            continue
        for cond in conds:
            if cond.get(v, 1) != 1:
                continue  # the deleted atom would be false already
            guarded = {**cond, v: 1}
            for extra in no_add:
                merged = dict(guarded)
                if all(merged.setdefault(x, value) == value for x, value in extra.items()):
                    by_var.setdefault(v, {}).setdefault(0, []).append(merged)
    out: list[tuple[tuple[int, ...], int]] = []
    for v in sorted(by_var):
        on_var = by_var[v]
        for value in sorted(on_var):
            if pre.get(v) == value:
                continue  # restates the precondition
            conds = [dict(c) for c in on_var[value]]
            if 1 - value not in on_var:  # binary: "v has the other value" is a pointless condition
                for c in conds:
                    if c.get(v) == 1 - value:
                        del c[v]
                if any(not c for c in conds):
                    conds = [{}]
            for cond in conds:
                if any(pre.get(x, value_x) != value_x for x, value_x in cond.items()):
                    continue  # contradicts the precondition
                kept = tuple(sorted(2 * x + value_x for x, value_x in cond.items() if x not in pre))
                effect = (kept, 2 * v + value)
                if effect not in out:
                    out.append(effect)
    return tuple(out)


def _negation(conditions: list[dict[int, int]]) -> list[dict[int, int]] | None:
    """The negation of a disjunction of conjunctions, as a disjunction (None: it never holds)."""
    if any(not c for c in conditions):
        return None
    out: list[dict[int, int]] = []
    for choice in product(*(sorted(c.items()) for c in conditions)):
        combo: dict[int, int] = {}
        if all(combo.setdefault(x, 1 - value) == 1 - value for x, value in choice):
            if combo not in out:
                out.append(combo)
    return out
