"""Grounding by relaxed reachability: a parsed model becomes a STRIPS ``Task``.

Only operators whose positive preconditions are reachable in the delete relaxation are
built. Bindings are found by joining preconditions against the facts reached so far,
triggered by each newly reached fact (semi-naive evaluation), so the work grows with the
reachable part of the task, not with the product of parameter domains.
Static relations (predicates with arguments that no action changes) are checked here and
folded out of the operators; negative preconditions on fluents become complement facts
``(not p)``, as Fast Downward's ``NegatedAtom`` values.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import product

from asg.planning.errors import ModelError, UnsupportedRequirementError
from asg.planning.parse import Model
from asg.planning.task import Atom, Operator, Task


@dataclass(frozen=True)
class Literal:
    """A lifted atom of a schema: predicate and terms (``?x`` variables or constants)."""

    predicate: str
    terms: tuple[str, ...]


@dataclass
class Schema:
    """An action schema in the flat form grounding needs."""

    name: str
    params: list[tuple[str, frozenset[str]]]  # (variable, allowed objects)
    pos: list[Literal] = field(default_factory=list)
    neg: list[Literal] = field(default_factory=list)
    equal: list[tuple[str, str, bool]] = field(default_factory=list)  # (t1, t2, must_be_equal)
    add: list[Literal] = field(default_factory=list)
    delete: list[Literal] = field(default_factory=list)


def ground(model: Model) -> Task:
    """Ground ``model`` (which must hold a problem) into a STRIPS task."""
    if model.problem is None:
        raise ModelError("missing problem: grounding needs a problem", model.domain_path)
    objects_of = _objects_by_type(model)
    schemas = [_schema(action, objects_of) for action in sorted(model.domain.actions, key=lambda a: a.name)]
    fluent_predicates = {lit.predicate for s in schemas for lit in s.add + s.delete}
    init = frozenset(_atom(p) for p in model.problem.init)
    folded = {a.predicate for a in init if a.predicate not in fluent_predicates and a.args}
    folded |= {name for name, arity in _arities(model).items() if arity and name not in fluent_predicates}
    static_facts = frozenset(a for a in init if a.predicate in folded)
    goal_pos, goal_neg = _goal_literals(model)

    ground_ops, reached = _reach(schemas, init, static_facts)

    negatable = {a for op in ground_ops for a in op[1] if a.predicate not in folded}
    negatable |= {a for a in goal_neg if a.predicate not in folded}
    negatable &= reached  # an unreachable atom stays false: its negation always holds
    operators = []
    for name, neg_pre, pos_pre, add, delete in ground_ops:
        if any(a in static_facts for a in neg_pre):
            continue
        pre = {a for a in pos_pre if a.predicate not in folded}
        pre |= {a.negate() for a in neg_pre if a in negatable}
        add_set = set(add) - pre  # adding what the precondition requires changes nothing
        del_set = {a for a in delete if a in reached} - set(add)
        add_set |= {a.negate() for a in del_set if a in negatable}
        del_set |= {a.negate() for a in add_set if a in negatable}
        if add_set or del_set:  # an operator that changes nothing is dropped, as FD's translator does
            operators.append(Operator(name, frozenset(pre), frozenset(add_set), frozenset(del_set)))
    operators.sort(key=lambda op: op.name)

    goal = frozenset(goal_pos)
    if any(a in static_facts for a in goal_neg):
        goal = goal | {a for a in goal_neg if a in static_facts}  # unsatisfiable: keep it visible
    negative_goal = frozenset(a for a in goal_neg if a not in negatable and a not in static_facts)
    goal = goal | {a.negate() for a in goal_neg if a in negatable}
    init_facts = (init - static_facts) | {a.negate() for a in negatable if a not in init}
    facts = {a for a in reached if a.predicate not in folded} | {a.negate() for a in negatable}
    facts |= {a for a in goal if a.predicate not in folded or not a.args}
    return Task(
        name=str(model.problem.name).lower(),
        domain_name=str(model.domain.name).lower(),
        facts=tuple(sorted(facts)),
        operators=tuple(operators),
        init=frozenset(init_facts),
        goal=goal,
        static_facts=static_facts,
        negative_goal=negative_goal,
    )


def _arities(model: Model) -> dict[str, int]:
    return {str(p.name).lower(): p.arity for p in model.domain.predicates}


def _objects_by_type(model: Model) -> dict[str, frozenset[str]]:
    parents = {str(k).lower(): (str(v).lower() if v else "object") for k, v in model.domain.types.items()}
    members: dict[str, set[str]] = defaultdict(set)
    things = list(model.domain.constants) + list(model.problem.objects)
    for obj in things:
        tags = [str(t).lower() for t in obj.type_tags] or ["object"]
        for tag in tags:
            seen = set()
            while tag not in seen:
                seen.add(tag)
                members[tag].add(str(obj.name).lower())
                tag = parents.get(tag, "object")
            members["object"].add(str(obj.name).lower())
    return {k: frozenset(v) for k, v in members.items()}


def _term(t) -> str:
    from pddl.logic.terms import Variable

    return f"?{t.name}".lower() if isinstance(t, Variable) else str(t.name).lower()


def _literal(pred) -> Literal:
    return Literal(str(pred.name).lower(), tuple(_term(t) for t in pred.terms))


def _atom(pred) -> Atom:
    return Atom(str(pred.name).lower(), tuple(str(t.name).lower() for t in pred.terms))


def _conjuncts(formula) -> list:
    from pddl.logic.base import And

    if formula is None:
        return []
    if isinstance(formula, And):
        return [c for op in formula.operands for c in _conjuncts(op)]
    return [formula]


def _schema(action, objects_of: dict[str, frozenset[str]]) -> Schema:
    from pddl.logic.base import Not
    from pddl.logic.predicates import EqualTo, Predicate

    params = []
    for var in action.parameters:
        tags = [str(t).lower() for t in var.type_tags] or ["object"]
        allowed = frozenset().union(*(objects_of.get(tag, frozenset()) for tag in tags))
        params.append((f"?{var.name}".lower(), allowed))
    schema = Schema(str(action.name).lower(), params)
    for part in _conjuncts(action.precondition):
        if isinstance(part, Predicate):
            schema.pos.append(_literal(part))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            schema.neg.append(_literal(part.argument))
        elif isinstance(part, EqualTo):
            schema.equal.append((_term(part.left), _term(part.right), True))
        elif isinstance(part, Not) and isinstance(part.argument, EqualTo):
            schema.equal.append((_term(part.argument.left), _term(part.argument.right), False))
        else:
            raise UnsupportedRequirementError(
                f"unsupported precondition in action '{schema.name}': {part}")
    for part in _conjuncts(action.effect):
        if isinstance(part, Predicate):
            schema.add.append(_literal(part))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            schema.delete.append(_literal(part.argument))
        else:
            raise UnsupportedRequirementError(f"unsupported effect in action '{schema.name}': {part}")
    return schema


def _goal_literals(model: Model) -> tuple[set[Atom], set[Atom]]:
    from pddl.logic.base import Not
    from pddl.logic.predicates import Predicate

    pos, neg = set(), set()
    for part in _conjuncts(model.problem.goal):
        if isinstance(part, Predicate):
            pos.add(_atom(part))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            neg.add(_atom(part.argument))
        else:
            raise UnsupportedRequirementError(f"unsupported goal: {part}", model.problem_path)
    return pos, neg


def _reach(schemas: list[Schema], init: frozenset[Atom], static_facts: frozenset[Atom]):
    """Relaxed reachability; returns the ground operators (name, neg, pos, add, del) and reached atoms."""
    index: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    reached: set[Atom] = set(init)
    queue: deque[Atom] = deque(sorted(init))
    triggers: dict[str, list[tuple[Schema, int]]] = defaultdict(list)
    for schema in schemas:
        for i, lit in enumerate(schema.pos):
            triggers[lit.predicate].append((schema, i))
    seen_ops: set[tuple[str, tuple[str, ...]]] = set()
    ops: list = []
    interned: dict = {(a.predicate, a.args): a for a in init}

    def emit(schema: Schema, binding: dict[str, str]) -> None:
        free = [(v, allowed) for v, allowed in schema.params if v not in binding]
        for values in product(*(sorted(allowed) for _, allowed in free)):
            full = dict(binding)
            full.update(zip((v for v, _ in free), values))
            if not all(full[v] in allowed for v, allowed in schema.params):
                continue
            if not all((_val(a, full) == _val(b, full)) == eq for a, b, eq in schema.equal):
                continue
            key = (schema.name, tuple(full[v] for v, _ in schema.params))
            if key in seen_ops:
                continue
            seen_ops.add(key)
            name = "(" + " ".join((schema.name, *key[1])) + ")"
            pos = [_ground(l, full, interned) for l in schema.pos]
            neg = [_ground(l, full, interned) for l in schema.neg]
            add = [_ground(l, full, interned) for l in schema.add]
            delete = [_ground(l, full, interned) for l in schema.delete]
            ops.append((name, neg, pos, add, delete))
            for atom in add:
                if atom not in reached:
                    reached.add(atom)
                    queue.append(atom)

    for schema in schemas:
        if not schema.pos:
            emit(schema, {})
    while queue:
        atom = queue.popleft()
        index[atom.predicate].add(atom.args)
        for schema, i in triggers.get(atom.predicate, ()):
            binding = _unify(schema.pos[i], atom.args, {})
            if binding is None:
                continue
            rest = [lit for j, lit in enumerate(schema.pos) if j != i]
            for full in _join(rest, binding, index):
                emit(schema, full)
    return ops, reached


def _val(term: str, binding: dict[str, str]) -> str:
    return binding.get(term, term) if term.startswith("?") else term


def _ground(lit: Literal, binding: dict[str, str], interned: dict) -> Atom:
    # Interned per task: the same atom recurs in many operators, and frozen dataclasses are slow to make.
    key = (lit.predicate, tuple([binding[t] if t[0] == "?" else t for t in lit.terms]))
    atom = interned.get(key)
    if atom is None:
        atom = interned[key] = Atom(*key)
    return atom


def _unify(lit: Literal, args: tuple[str, ...], binding: dict[str, str]) -> dict[str, str] | None:
    if len(lit.terms) != len(args):
        return None
    out = dict(binding)
    for term, value in zip(lit.terms, args):
        if term.startswith("?"):
            bound = out.get(term)
            if bound is None:
                out[term] = value
            elif bound != value:
                return None
        elif term != value:
            return None
    return out


def _join(literals: list[Literal], binding: dict[str, str], index) -> list[dict[str, str]]:
    """All extensions of ``binding`` that satisfy every literal against ``index``."""
    if not literals:
        return [binding]
    # Most-bound literal first keeps the intermediate results small.
    best = max(range(len(literals)),
               key=lambda j: sum(1 for t in literals[j].terms if not t.startswith("?") or t in binding))
    lit = literals[best]
    rest = literals[:best] + literals[best + 1:]
    out = []
    for args in index.get(lit.predicate, ()):
        extended = _unify(lit, args, binding)
        if extended is not None:
            out.extend(_join(rest, extended, index))
    return out
