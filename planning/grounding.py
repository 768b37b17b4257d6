"""Grounding by relaxed reachability: a parsed model becomes a ``Task``.

The model is first brought to Fast Downward's normal form (``asg.planning.normalize``):
actions, conditional effects and derived-predicate rules, each a conjunction of literals.
Each becomes a rule of one relaxed exploration: an action fires once its positive
preconditions are reached; a conditional or quantified effect once the action's and its
own condition's are; a derived atom once its rule's body is. Negative literals are ignored
while exploring, as the translator ignores them, and checked when the task is built.

Bindings are found by joining positive literals against the facts reached so far,
triggered by each newly reached fact (semi-naive evaluation), so the work grows with the
reachable part of the task, not with the product of parameter domains; quantifiers are
instantiated against reachable atoms only, as the translator does.

Each rule is compiled once: variables become positions in a tuple, and for every
literal that can trigger it there is a fixed join order whose steps look facts up in
hash indexes keyed by the argument positions already bound (:class:`_JoinPlan`).
Static relations (predicates with arguments that no action changes) are indexed in full
before the join starts and never trigger; they are checked here and folded out of the
operators. Negative preconditions on fluents become complement facts ``(not p)``, as Fast
Downward's ``NegatedAtom`` values.
"""
from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import product
from operator import itemgetter
from typing import TYPE_CHECKING

from asg.planning.errors import ModelError
from asg.planning.normalize import AxiomRule, Conjunction, Literal, Normalised, Param, normalise_model
from asg.planning.parse import Model, read_init
from asg.planning.task import Atom, Axiom, Effect, Operator, Task

if TYPE_CHECKING:
    from pddl.core import Problem


@dataclass
class Schema:
    """A rule in the flat form the join needs: an action, one of its effects, or an axiom."""

    name: str
    params: list[tuple[str, frozenset[str]]]  # (variable, allowed objects)
    pos: list[Literal] = field(default_factory=list)
    neg: list[Literal] = field(default_factory=list)
    equal: list[tuple[str, str, bool]] = field(default_factory=list)  # (t1, t2, must_be_equal)
    add: list[Literal] = field(default_factory=list)
    delete: list[Literal] = field(default_factory=list)
    kind: str = "action"  # "action" | "effect" | "axiom"
    own_pos: list[Literal] | None = None  # effect: its own condition (the join also needs the action's)
    owner: int = -1  # effect: index of its action's schema
    name_arity: int = -1  # action: leading params that name the operator (-1: all)
    cost: float | Literal | None = None


def ground(model: Model) -> Task:
    """Ground ``model`` (which must hold a problem) into a task."""
    from pddl.logic.predicates import Predicate

    problem = _problem_of(model)
    assert model.domain_shape is not None and model.problem_shape is not None
    normal = normalise_model(model.domain_shape, model.problem_shape, model.domain_path)
    objects_of = _objects_by_type(model)
    schemas = _schemas(normal, objects_of)
    fluent_predicates = {lit.predicate for s in schemas for lit in s.add + s.delete}
    init = frozenset(_atom(p) for p in problem.init if isinstance(p, Predicate))
    folded = {a.predicate for a in init if a.predicate not in fluent_predicates and a.args}
    folded |= {name for name, arity in _arities(model).items() if arity and name not in fluent_predicates}
    static_facts = frozenset(a for a in init if a.predicate in folded)
    goal_pos, goal_neg = _goal_atoms(normal.goal, model)

    reach = _Reachability(schemas, init, folded, objects_of.get("object", frozenset()))
    reach.run()
    reached_ids, atom_of = reach.reached, reach.atoms()

    actions, effects, rules = [], defaultdict(list), []
    for record in reach.records:
        kind = schemas[record[0]].kind
        if kind == "action":
            actions.append(record)
        elif kind == "effect":
            owner = schemas[record[0]].owner
            effects[owner, record[1][:len(schemas[owner].params)]].append(record)
        else:
            rules.append(record)

    # Ids, not atoms, until the operators are built: sets of ints hash in C.
    # The complement of fact i (``(not p)``) has id ~i.
    negatable_ids: set[int] = set()
    for record in reach.records:
        negatable_ids.update(record[2])
    negatable_ids.update(i for a in goal_neg if a.predicate not in folded and (i := reach.id_of(a)) is not None)
    negatable_ids &= reached_ids  # an unreachable atom stays false: its negation always holds
    atom = dict(enumerate(atom_of))
    atom.update((~i, atom_of[i].negate()) for i in negatable_ids)
    get = atom.__getitem__

    def changes(add: list[int], delete: list[int], keep: set[int]) -> tuple[set[int], set[int]]:
        add_set = set(add).difference(keep)  # adding what the precondition requires changes nothing
        del_set = reached_ids.intersection(delete).difference(add)
        add_set.update([~i for i in del_set if i in negatable_ids])
        del_set.update([~i for i in add_set if i in negatable_ids])
        return add_set, del_set

    use_costs = _uses_cost_metric(model)
    values = _function_values(model) if use_costs else {}
    operators = []
    for index, key, neg_pre, pre_ids, add, delete, blocked in actions:
        if blocked:  # a negative precondition on a static fact that holds: never applicable
            continue
        pre = set(pre_ids)
        pre.update([~i for i in neg_pre if i in negatable_ids])
        add_set, del_set = changes(add, delete, pre)
        conditional = set()
        for _, _, neg_cond, cond_ids, e_add, e_del, e_blocked in effects.get((index, key), ()):
            if e_blocked:
                continue
            condition = set(cond_ids).union([~i for i in neg_cond if i in negatable_ids]).difference(pre)
            e_add_set, e_del_set = changes(e_add, e_del, pre)
            e_del_set -= add_set  # an unconditional add wins over a conditional delete
            if not condition:
                add_set |= e_add_set
                del_set = (del_set | e_del_set) - add_set
            elif e_add_set or e_del_set:
                conditional.add(Effect(frozenset(map(get, condition)), frozenset(map(get, e_add_set)),
                                       frozenset(map(get, e_del_set))))
        if add_set or del_set or conditional:  # an operator that changes nothing is dropped, as FD's translator does
            schema = schemas[index]
            name = "(" + " ".join((schema.name, *key[:schema.name_arity])) + ")"
            cost = _cost(schema, key, values) if use_costs else 1
            operators.append(Operator(name, frozenset(map(get, pre)), frozenset(map(get, add_set)),
                                      frozenset(map(get, del_set)), cost=cost,
                                      conditional=tuple(sorted(conditional, key=_effect_order))))
    operators.sort(key=lambda op: op.name)

    layers = _layers(normal)
    axioms = set()
    for index, _, neg_body, body_ids, heads, _, blocked in rules:
        if blocked:
            continue
        body = frozenset(map(get, set(body_ids).union([~i for i in neg_body if i in negatable_ids])))
        for head in heads:
            axioms.add(Axiom(layers[schemas[index].add[0].predicate], get(head), body))

    reached = {atom_of[i] for i in reached_ids}
    negatable = {atom_of[i] for i in negatable_ids}
    negation = {atom_of[i]: atom[~i] for i in negatable_ids}
    goal = frozenset(a for a in goal_pos if a not in static_facts)  # holds in every state: dropped, as FD does
    if any(a in static_facts for a in goal_neg):
        goal = goal | {a for a in goal_neg if a in static_facts}  # unsatisfiable: keep it visible
    negative_goal = frozenset(a for a in goal_neg if a not in negatable and a not in static_facts)
    goal = goal | {a.negate() for a in goal_neg if a in negatable}
    derived = frozenset(a for a in reached if a.predicate in normal.derived)
    init_facts = (init - static_facts) | {negation[a] for a in negatable if a not in init and a not in derived}
    facts = {a for a in reached if a.predicate not in folded} | set(negation.values())
    facts |= {a for a in goal if a.predicate not in folded or not a.args}
    task = Task(
        name=str(problem.name).lower(),
        domain_name=str(model.domain.name).lower(),
        facts=tuple(sorted(facts)),
        operators=tuple(operators),
        init=frozenset(init_facts),
        goal=goal,
        static_facts=static_facts,
        negative_goal=negative_goal,
        axioms=tuple(sorted(axioms)),
        derived=derived,
        action_costs=use_costs,
    )
    return replace(task, init=task.closure(task.init)) if axioms else task


def _effect_order(effect: Effect) -> tuple:
    return (sorted(map(str, effect.condition)), sorted(map(str, effect.add)), sorted(map(str, effect.delete)))


def _schemas(normal: Normalised, objects_of: dict[str, frozenset[str]]) -> list[Schema]:
    """The join's rules: each action disjunct, then each of its effects, then each axiom rule."""
    def allowed(params: list[Param]) -> list[tuple[str, frozenset[str]]]:
        return [(v, frozenset().union(*(objects_of.get(t, frozenset()) for t in types))) for v, types in params]

    schemas: list[Schema] = []
    for rule in sorted(normal.actions, key=lambda r: r.name):
        owner = len(schemas)
        schemas.append(_schema(rule.name, allowed(rule.params), rule.pre, rule.add, rule.delete, "action",
                               name_arity=rule.name_arity, cost=rule.cost))
        for effect in rule.effects:
            joined = Conjunction(rule.pre.pos + effect.condition.pos, effect.condition.neg,
                                 rule.pre.equal + effect.condition.equal)
            schemas.append(_schema(rule.name, allowed(rule.params + effect.params), joined, effect.add,
                                   effect.delete, "effect", own_pos=effect.condition.pos, owner=owner))
    for axiom in normal.axioms:
        schemas.append(_schema(axiom.head.predicate, allowed(axiom.params), axiom.body, [axiom.head], [], "axiom"))
    return schemas


def _schema(name: str, params, condition: Conjunction, add, delete, kind: str, **extra) -> Schema:
    return Schema(name, params, list(condition.pos), list(condition.neg), list(condition.equal), list(add),
                  list(delete), kind, **extra)


def _layers(normal: Normalised) -> dict[str, int]:
    """Stratify the derived predicates: a rule's head sits at or above the layers of the derived
    atoms its body needs, strictly above those it negates (refused where impossible)."""
    layer = dict.fromkeys(normal.derived, 0)
    rules: list[AxiomRule] = normal.axioms
    for _ in range(len(layer) + 1):
        changed = False
        for rule in rules:
            need = max([layer[lit.predicate] for lit in rule.body.pos if lit.predicate in layer]
                       + [layer[lit.predicate] + 1 for lit in rule.body.neg if lit.predicate in layer] + [0])
            if need > layer[rule.head.predicate]:
                layer[rule.head.predicate] = need
                changed = True
        if not changed:
            return layer
    raise ModelError("the derived predicates are not stratified: one depends on its own negation")


def _goal_atoms(goal: Conjunction, model: Model) -> tuple[set[Atom], set[Atom]]:
    for literal in goal.pos + goal.neg:
        if any(t.startswith("?") for t in literal.terms):
            raise ModelError(f"free variable in the goal: ({literal.predicate} {' '.join(literal.terms)})",
                             model.problem_path)
    return ({Atom(lit.predicate, lit.terms) for lit in goal.pos}, {Atom(lit.predicate, lit.terms) for lit in goal.neg})


def _uses_cost_metric(model: Model) -> bool:
    """Action costs count under ``(:metric minimize (total-cost))``, as in Fast Downward's translator;
    without it every operator costs 1."""
    return model.problem is not None and model.problem.metric is not None


def _function_values(model: Model) -> dict[tuple[str, tuple[str, ...]], float]:
    assert model.problem_shape is not None
    return read_init(model.problem_shape, {}, model.problem_path or "")[2]


def _cost(schema: Schema, key: tuple[str, ...], values: dict) -> int:
    if schema.cost is None:
        return 0
    if isinstance(schema.cost, float):
        amount = schema.cost
    else:
        position = {v: i for i, (v, _) in enumerate(schema.params)}
        args = tuple(key[position[t]] if t in position else t for t in schema.cost.terms)
        found = values.get((schema.cost.predicate, args))
        if found is None:
            raise ModelError(f"no value for ({schema.cost.predicate} {' '.join(args)}) in :init: the cost of "
                             f"({schema.name} {' '.join(key[:schema.name_arity])}) is unknown")
        amount = found
    if amount < 0 or amount != int(amount):
        raise ModelError(f"action cost {amount:g} of ({schema.name} {' '.join(key[:schema.name_arity])}) is not a "
                         "non-negative integer (Fast Downward's translator needs one)")
    return int(amount)


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


def _atom(pred) -> Atom:
    return Atom(str(pred.name).lower(), tuple(str(t.name).lower() for t in pred.terms))


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

    def __init__(self, index: int, schema: Schema, folded: set[str], everything: frozenset[str], indexes: dict,
                 interner) -> None:
        self.index = index
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
        # (In)equalities are checked while exploring. Fast Downward's translator ignores inequalities
        # there (every negative literal) and so reaches atoms and builds operators no binding allows;
        # asg's exploration is the tighter one (docs/planning.md says where that shows).
        self.equal = [(layout[a], layout[b], eq) for a, b, eq in schema.equal]

        def recipe(literals: list[Literal]) -> list:
            # (ids of the predicate's facts, binding -> the literal's arguments)
            return [(interner(lit.predicate), _getter(tuple(layout[t] for t in lit.terms))) for lit in literals]

        own = schema.own_pos if schema.own_pos is not None else schema.pos
        self.fluent_pre = recipe([lit for lit in own if lit.predicate not in folded])
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
        self.compiled = [_CompiledSchema(i, s, folded, everything, self.indexes, self._interner)
                         for i, s in enumerate(schemas)]
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
        self.records: list = []
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
        """Reach the fixpoint; afterwards ``records`` holds (schema index, binding key, fluent neg
        ids, fluent pre ids, add ids, delete ids, blocked) per ground rule and ``reached`` the
        reached fact ids."""
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
        """Record the ground rules of ``bindings`` not seen before; queue their new add effects."""
        seen, index, reached, static, queue = c.seen, c.index, self.reached, self.static, self.queue
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
                self.records.append((
                    index,
                    key,
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
