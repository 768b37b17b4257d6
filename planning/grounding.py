"""Grounding by relaxed reachability: a parsed model becomes a STRIPS ``Task``.

Only operators whose positive preconditions are reachable in the delete relaxation are
built. Bindings are found by joining preconditions against the facts reached so far,
triggered by each newly reached fact (semi-naive evaluation), so the work grows with the
reachable part of the task, not with the product of parameter domains.

Each schema is compiled once: variables become positions in a tuple, and for every
precondition that can trigger it there is a fixed join order whose steps look facts up in
hash indexes keyed by the argument positions already bound (:class:`_JoinPlan`).
Static relations (predicates with arguments that no action changes) are indexed in full
before the join starts and never trigger; they are checked here and folded out of the
operators. Negative preconditions on fluents become complement facts ``(not p)``, as Fast
Downward's ``NegatedAtom`` values.
"""
from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product
from operator import itemgetter
from typing import TYPE_CHECKING

from asg.planning.errors import ModelError, UnsupportedRequirementError
from asg.planning.parse import Model
from asg.planning.task import Atom, Operator, Task

if TYPE_CHECKING:
    from pddl.core import Problem


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
    problem = _problem_of(model)
    objects_of = _objects_by_type(model)
    schemas = [_schema(action, objects_of) for action in sorted(model.domain.actions, key=lambda a: a.name)]
    fluent_predicates = {lit.predicate for s in schemas for lit in s.add + s.delete}
    init = frozenset(_atom(p) for p in problem.init)
    folded = {a.predicate for a in init if a.predicate not in fluent_predicates and a.args}
    folded |= {name for name, arity in _arities(model).items() if arity and name not in fluent_predicates}
    static_facts = frozenset(a for a in init if a.predicate in folded)
    goal_pos, goal_neg = _goal_literals(model)

    reach = _Reachability(schemas, init, folded, objects_of.get("object", frozenset()))
    reach.run()
    ops, reached_ids, atom_of = reach.ops, reach.reached, reach.atoms()

    # Ids, not atoms, until the operators are built: sets of ints hash in C.
    # The complement of fact i (``(not p)``) has id ~i.
    negatable_ids: set[int] = set().union(*(op[1] for op in ops))
    negatable_ids.update(i for a in goal_neg if a.predicate not in folded and (i := reach.id_of(a)) is not None)
    negatable_ids &= reached_ids  # an unreachable atom stays false: its negation always holds
    atom = dict(enumerate(atom_of))
    atom.update((~i, atom_of[i].negate()) for i in negatable_ids)
    operators = []
    for name, neg_pre, pre_ids, add, delete, blocked in ops:
        if blocked:  # a negative precondition on a static fact that holds: never applicable
            continue  # (its add effects still counted as reached above, as they always have)
        pre = set(pre_ids)
        pre.update([~i for i in neg_pre if i in negatable_ids])
        add_set = set(add).difference(pre)  # adding what the precondition requires changes nothing
        del_set = reached_ids.intersection(delete).difference(add)
        add_set.update([~i for i in del_set if i in negatable_ids])
        del_set.update([~i for i in add_set if i in negatable_ids])
        if add_set or del_set:  # an operator that changes nothing is dropped, as FD's translator does
            get = atom.__getitem__
            operators.append(Operator(name, frozenset(map(get, pre)), frozenset(map(get, add_set)),
                                      frozenset(map(get, del_set))))
    operators.sort(key=lambda op: op.name)

    reached = {atom_of[i] for i in reached_ids}
    negatable = {atom_of[i] for i in negatable_ids}
    negation = {atom_of[i]: atom[~i] for i in negatable_ids}
    goal = frozenset(goal_pos)
    if any(a in static_facts for a in goal_neg):
        goal = goal | {a for a in goal_neg if a in static_facts}  # unsatisfiable: keep it visible
    negative_goal = frozenset(a for a in goal_neg if a not in negatable and a not in static_facts)
    goal = goal | {a.negate() for a in goal_neg if a in negatable}
    init_facts = (init - static_facts) | {negation[a] for a in negatable if a not in init}
    facts = {a for a in reached if a.predicate not in folded} | set(negation.values())
    facts |= {a for a in goal if a.predicate not in folded or not a.args}
    return Task(
        name=str(problem.name).lower(),
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


def _problem_of(model: Model) -> Problem:
    """The problem of ``model``; grounding refuses a domain alone."""
    if model.problem is None:
        raise ModelError("missing problem: grounding needs a problem", model.domain_path)
    return model.problem


def _objects_by_type(model: Model) -> dict[str, frozenset[str]]:
    parents = {str(k).lower(): (str(v).lower() if v else "object") for k, v in model.domain.types.items()}
    members: dict[str, set[str]] = defaultdict(set)
    things = list(model.domain.constants) + list(_problem_of(model).objects)
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
    for part in _conjuncts(_problem_of(model).goal):
        if isinstance(part, Predicate):
            pos.add(_atom(part))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            neg.add(_atom(part.argument))
        else:
            raise UnsupportedRequirementError(f"unsupported goal: {part}", model.problem_path)
    return pos, neg


# -- the compiled join -----------------------------------------------------------------------
#
# A binding is a tuple: the schema's constants first, then variable values in the order the
# join binds them. Every position is known when the schema is compiled, so lookups and
# effect arguments are ``itemgetter`` calls on that tuple, not dictionary work per binding.

def _getter(positions: tuple[int, ...]):
    """``f(seq) -> tuple(seq[p] for p in positions)``, always a tuple (itemgetter is not for 0/1)."""
    if not positions:
        return lambda seq: ()
    if len(positions) == 1:
        only = positions[0]
        return lambda seq: (seq[only],)
    return itemgetter(*positions)


class _Index:
    """Facts of one predicate and arity, keyed by the values at ``key`` positions.

    ``table[key values]`` lists, for each matching fact, its values at ``new`` (the positions
    that bind fresh variables); ``same`` lists position pairs a fact must agree on (a
    variable repeated among the fresh ones)."""

    __slots__ = ("key", "new", "same", "table")

    def __init__(self, key: tuple[int, ...], new: tuple[int, ...], same: tuple[tuple[int, int], ...]) -> None:
        self.key, self.new, self.same = _getter(key), _getter(new), same
        self.table: dict[tuple, list[tuple]] = defaultdict(list)

    def add(self, args: tuple[str, ...]) -> None:
        if all(args[i] == args[j] for i, j in self.same):
            self.table[self.key(args)].append(self.new(args))


class _Step:
    """One literal of a join: look its bound positions up, bind its fresh variables."""

    __slots__ = ("index", "lookup", "checks")

    def __init__(self, index: _Index, lookup: Callable[[tuple], tuple],
                 checks: list[tuple[int, frozenset[str]]]) -> None:
        self.index = index
        self.lookup = lookup  # binding -> the index key
        self.checks = checks  # (binding position, allowed objects) of typed fresh variables


class _JoinPlan:
    """The join of a schema's positive preconditions, started from one triggering literal."""

    __slots__ = ("literal", "start", "same", "fixed", "checks", "steps", "canonical")

    def __init__(self, literal: Literal | None, start: Callable[[tuple], tuple], same: tuple[tuple[int, int], ...],
                 fixed: tuple[tuple[int, str], ...], checks: list[tuple[int, frozenset[str]]],
                 steps: list[_Step], canonical: Callable[[tuple], tuple]) -> None:
        self.literal = literal  # the trigger (None: the schema has no fluent precondition)
        self.start = start  # fact args -> the trigger's variables (after the constants)
        self.same = same  # trigger positions that must agree (a repeated variable)
        self.fixed = fixed  # trigger positions holding constants
        self.checks = checks
        self.steps = steps
        self.canonical = canonical  # final binding -> schema layout (constants, then params' order)


class _Interner(dict):
    """Ids of one predicate's facts by their arguments; a new fact gets the next free id."""

    __slots__ = ("predicate", "facts")

    def __init__(self, predicate: str, facts: list[tuple[str, tuple[str, ...]]]) -> None:
        super().__init__()
        self.predicate = predicate
        self.facts = facts  # id -> (predicate, args), shared by every predicate's interner

    def __missing__(self, args: tuple[str, ...]) -> int:
        ident = self[args] = len(self.facts)
        self.facts.append((self.predicate, args))
        return ident


class _CompiledSchema:
    """A schema's join plans and ground recipes over its canonical layout."""

    def __init__(self, schema: Schema, folded: set[str], everything: frozenset[str], indexes: dict,
                 interner) -> None:
        self.schema = schema
        names = [v for v, _ in schema.params]
        self.constants = tuple(sorted({t for lit in _literals(schema) for t in lit.terms if t[0] != "?"}
                                      | {t for a, b, _ in schema.equal for t in (a, b) if t[0] != "?"}))
        self.allowed = {v: allowed for v, allowed in schema.params}
        self.everything = everything
        slot = {c: i for i, c in enumerate(self.constants)}
        bound_vars = [v for v in names if any(v in lit.terms for lit in schema.pos)]
        self.free = [v for v in names if v not in bound_vars]
        self.free_domains = [sorted(self.allowed[v]) for v in self.free]
        layout = dict(slot)
        for v in bound_vars + self.free:
            layout[v] = len(layout)
        self.key = _getter(tuple(layout[v] for v in names))
        self.equal = [(layout[a], layout[b], eq) for a, b, eq in schema.equal]

        def recipe(literals: list[Literal]) -> list:
            # (ids of the predicate's facts, binding -> the literal's arguments)
            return [(interner(lit.predicate), _getter(tuple(layout[t] for t in lit.terms))) for lit in literals]

        self.fluent_pre = recipe([lit for lit in schema.pos if lit.predicate not in folded])
        self.fluent_neg = recipe([lit for lit in schema.neg if lit.predicate not in folded])
        self.static_neg = recipe([lit for lit in schema.neg if lit.predicate in folded])
        self.add = recipe(schema.add)
        self.delete = recipe(schema.delete)
        fluent = [lit for lit in schema.pos if lit.predicate not in folded]
        static = [lit for lit in schema.pos if lit.predicate in folded]
        self.plans: list[_JoinPlan] = []
        if not fluent:
            self.plans.append(self._plan(None, static, slot, bound_vars, layout, indexes))
        for i, lit in enumerate(fluent):
            rest = fluent[:i] + fluent[i + 1:] + static
            self.plans.append(self._plan(lit, rest, slot, bound_vars, layout, indexes))
        self.seen: set[tuple[str, ...]] = set()

    def _typed(self, var: str, position: int) -> list[tuple[int, frozenset[str]]]:
        allowed = self.allowed.get(var)
        return [] if allowed is None or allowed >= self.everything else [(position, allowed)]

    def _plan(self, trigger, rest, slot, bound_vars, layout, indexes) -> _JoinPlan:
        position = dict(slot)  # term -> binding position, growing as the join binds variables
        fixed, same, start, checks = [], [], [], []
        if trigger is not None:
            for j, t in enumerate(trigger.terms):
                if t[0] != "?":
                    fixed.append((j, t))
                elif t in position:
                    same.append((trigger.terms.index(t), j))
                else:
                    position[t] = len(position)
                    start.append(j)
                    checks += self._typed(t, position[t])
        steps = []
        todo = list(rest)
        while todo:
            # Most-bound literal first keeps the intermediate results small.
            lit = max(todo, key=lambda lit: (sum(t in position for t in lit.terms), -len(lit.terms)))
            todo.remove(lit)
            key, new, twins, lookup, fresh = [], [], [], [], []
            for j, t in enumerate(lit.terms):
                if t in position and t not in fresh:
                    key.append(j)
                    lookup.append(position[t])
                elif t in fresh:
                    twins.append((lit.terms.index(t), j))
                else:
                    fresh.append(t)
                    new.append(j)
            pattern = (lit.predicate, len(lit.terms), tuple(key), tuple(new), tuple(twins))
            index = indexes.get(pattern)
            if index is None:
                index = indexes[pattern] = _Index(tuple(key), tuple(new), tuple(twins))
            step_checks = []
            for t in fresh:
                position[t] = len(position)
                step_checks += self._typed(t, position[t])
            steps.append(_Step(index, _getter(tuple(lookup)), step_checks))
        order = [position[t] for t in self.constants] + [position[v] for v in bound_vars]
        return _JoinPlan(trigger, _getter(tuple(start)), tuple(same), tuple(fixed), checks, steps,
                         _getter(tuple(order)))

    def bindings(self, plan: _JoinPlan, args: tuple[str, ...] | None) -> list[tuple]:
        """Bindings (canonical layout, free parameters not yet chosen) that ``args`` completes."""
        if args is not None:
            if any(args[j] != c for j, c in plan.fixed) or any(args[i] != args[j] for i, j in plan.same):
                return []
            partial = [self.constants + plan.start(args)]
        else:
            partial = [self.constants]
        if plan.checks:
            partial = [b for b in partial if all(b[p] in ok for p, ok in plan.checks)]
        for step in plan.steps:
            table, lookup = step.index.table, step.lookup
            partial = [b + new for b in partial for new in table.get(lookup(b), ())]
            if step.checks and partial:
                partial = [b for b in partial if all(b[p] in ok for p, ok in step.checks)]
            if not partial:
                return []
        canonical = plan.canonical
        return [canonical(b) for b in partial]


def _literals(schema: Schema) -> list[Literal]:
    return schema.pos + schema.neg + schema.add + schema.delete


class _Reachability:
    """Relaxed reachability over compiled schemas, on integer fact ids (see :meth:`atoms`)."""

    def __init__(self, schemas: list[Schema], init: frozenset[Atom], folded: set[str],
                 everything: frozenset[str]) -> None:
        self.keys: list[tuple[str, tuple[str, ...]]] = []  # id -> (predicate, args)
        self.interners: dict[str, _Interner] = {}
        self.indexes: dict[tuple, _Index] = {}
        self.compiled = [_CompiledSchema(s, folded, everything, self.indexes, self._interner) for s in schemas]
        self.by_predicate: dict[tuple[str, int], list[_Index]] = defaultdict(list)
        for (predicate, arity, *_), index in self.indexes.items():
            self.by_predicate[predicate, arity].append(index)
        self.triggers: dict[tuple[str, int], list] = defaultdict(list)
        for c in self.compiled:
            for plan in c.plans:
                if plan.literal is not None:
                    self.triggers[plan.literal.predicate, len(plan.literal.terms)].append((c, plan))
        self.given = {}  # id -> the Atom object of an initial fact
        self.reached: set[int] = set()
        self.static: set[int] = set()
        self.queue: deque[int] = deque()
        self.ops: list = []
        for atom in sorted(init):
            ident = self._interner(atom.predicate)[atom.args]
            self.given[ident] = atom
            self.reached.add(ident)
            if atom.predicate in folded:  # complete from the start: index now, never a trigger
                self.static.add(ident)
                for index in self.by_predicate.get((atom.predicate, len(atom.args)), ()):
                    index.add(atom.args)
            else:
                self.queue.append(ident)

    def _interner(self, predicate: str) -> _Interner:
        found = self.interners.get(predicate)
        if found is None:
            found = self.interners[predicate] = _Interner(predicate, self.keys)
        return found

    def id_of(self, atom: Atom) -> int | None:
        """The id of a positive atom seen during grounding, else None."""
        table = self.interners.get(atom.predicate)
        return None if table is None else dict.get(table, atom.args)

    def atoms(self) -> list[Atom]:
        """id -> Atom, for every fact seen (initial facts keep their objects)."""
        given = self.given
        return [given.get(i) or Atom(p, args) for i, (p, args) in enumerate(self.keys)]

    def run(self) -> None:
        """Reach the fixpoint; afterwards ``ops`` holds (name, fluent neg ids, fluent pre ids, add
        ids, delete ids, blocked) per operator and ``reached`` the reached fact ids."""
        for c in self.compiled:
            for plan in c.plans:
                if plan.literal is None:
                    self._emit(c, c.bindings(plan, None))
        queue, keys, by_predicate, triggers = self.queue, self.keys, self.by_predicate, self.triggers
        while queue:
            predicate, args = keys[queue.popleft()]
            kind = (predicate, len(args))
            for index in by_predicate.get(kind, ()):
                index.add(args)
            for c, plan in triggers.get(kind, ()):
                found = c.bindings(plan, args)
                if found:
                    self._emit(c, found)

    def _emit(self, c: _CompiledSchema, bindings: list[tuple]) -> None:
        """Record the operators of ``bindings`` not seen before; queue their new add effects."""
        seen, name, reached, static, queue = c.seen, c.schema.name, self.reached, self.static, self.queue
        for binding in bindings:
            for values in (product(*c.free_domains) if c.free else ((),)):
                full = binding + values if values else binding
                if c.equal and not all((full[i] == full[j]) == eq for i, j, eq in c.equal):
                    continue
                key = c.key(full)
                if key in seen:
                    continue
                seen.add(key)
                add = [ids[get(full)] for ids, get in c.add]
                self.ops.append((
                    "(" + " ".join((name, *key)) + ")",
                    [ids[get(full)] for ids, get in c.fluent_neg],
                    [ids[get(full)] for ids, get in c.fluent_pre],
                    add,
                    [ids[get(full)] for ids, get in c.delete],
                    any(ids[get(full)] in static for ids, get in c.static_neg),
                ))
                for a in add:
                    if a not in reached:
                        reached.add(a)
                        queue.append(a)
