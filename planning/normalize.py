"""Fast Downward's normal form on asg's parsed model: ADL and derived predicates made flat.

The grounder joins conjunctions of literals. This module brings every formula of a checked
model to that form, in the order of Fast Downward's translator (``normalize.py``):

1. **Negation normal form.** ``imply`` becomes ``or``; ``not`` is pushed to the atoms.
2. **Universal conditions become axioms.** ``(forall (?x) φ)`` in a precondition, effect
   condition, derived-predicate body or goal is replaced by ``(not (new-axiom@N ?free ...))``
   with the rule ``new-axiom@N(?free ...) :- (exists (?x) (not φ))``.
3. **Disjunctive normal form.** Disjunctions split an action (or rule, or conditional effect)
   into copies, one per disjunct; existential variables become extra parameters (of the
   operator: they are not part of its name; of the effect: ``∃x c(x) → e`` is ``∀x (c(x) → e)``).
4. **Effects** are flattened into (``forall`` variables, condition, literal), grouped by
   variables and condition; ``(increase (total-cost) X)`` is the action's cost.

Quantified variables are renamed apart (``?x@3``), so pulling them up never captures a name.
A goal that is not a conjunction of literals becomes an axiom, as the translator's
``substitute_complicated_goal`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from asg.planning.errors import UnsupportedRequirementError
from asg.planning.sexpr import Node, SList, Token
from asg.planning.structure import DomainShape, ProblemShape, typed_list

# A formula in negation normal form is a nested tuple:
#   ("lit", predicate, terms, positive) | ("eq", term, term, positive)
#   ("and", parts) | ("or", parts) | ("forall", variables, body) | ("exists", variables, body)
# with ``variables`` a tuple of renamed ``?names``; their types live in ``Normaliser.types``.
Formula = tuple
TRUE: Formula = ("and", ())
FALSE: Formula = ("or", ())

MAX_DISJUNCTS = 100_000  # a disjunctive normal form larger than this is refused, not built


@dataclass(frozen=True)
class Literal:
    """A lifted atom: predicate and terms (``?x`` variables or constants)."""

    predicate: str
    terms: tuple[str, ...]


@dataclass
class Conjunction:
    """Positive and negative literals and (in)equalities, all of which must hold."""

    pos: list[Literal] = field(default_factory=list)
    neg: list[Literal] = field(default_factory=list)
    equal: list[tuple[str, str, bool]] = field(default_factory=list)  # (t1, t2, must_be_equal)

    def is_empty(self) -> bool:
        return not (self.pos or self.neg or self.equal)


Param = tuple[str, tuple[str, ...]]  # (?variable, its types: one, or several for ``either``)


@dataclass
class EffectRule:
    """Conditional or quantified effects of an action: for every binding of ``params`` (its
    ``forall`` variables) where ``condition`` holds before the step, ``delete`` then ``add``."""

    params: list[Param]
    condition: Conjunction
    add: list[Literal] = field(default_factory=list)
    delete: list[Literal] = field(default_factory=list)


@dataclass
class ActionRule:
    """One disjunct of an action: the first ``name_arity`` params name the ground operator."""

    name: str
    params: list[Param]
    name_arity: int
    pre: Conjunction
    add: list[Literal] = field(default_factory=list)  # unconditional, no forall variables
    delete: list[Literal] = field(default_factory=list)
    effects: list[EffectRule] = field(default_factory=list)
    cost: float | Literal | None = None  # a number, a static function term, or none


@dataclass
class AxiomRule:
    """One disjunct of a derived predicate's definition: ``head`` :- ``body``."""

    head: Literal
    params: list[Param]
    body: Conjunction


@dataclass
class Normalised:
    actions: list[ActionRule]
    axioms: list[AxiomRule]
    goal: Conjunction
    derived: set[str]  # derived predicates, the translator's ``new-axiom@N`` included


def normalise_model(domain: DomainShape, problem: ProblemShape | None, path: str | None = None) -> Normalised:
    """The flat rules of a checked domain (and the goal of its problem)."""
    return Normaliser(path).run(domain, problem)


class Normaliser:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.types: dict[str, tuple[str, ...]] = {}
        self.fresh = count()
        self.axioms: list[AxiomRule] = []
        self.derived: set[str] = set()
        self._axiom_names: dict[tuple, str] = {}
        self._new_axioms = count()

    def run(self, domain: DomainShape, problem: ProblemShape | None) -> Normalised:
        self.derived = {rule.predicate.text.lower() for rule in domain.derived}
        actions = [rule for action in domain.actions for rule in self._action(action)]
        for rule in domain.derived:
            params = self._declare(rule.parameters)
            subst = dict(zip((p.name for p in rule.parameters), (v for v, _ in params)))
            head = Literal(rule.predicate.text.lower(), tuple(v for v, _ in params))
            self._add_axiom_rules(head, params, self._read(rule.body, False, subst))
        goal = Conjunction()
        if problem is not None and problem.goal is not None:
            goal = self._goal(self._without_forall(self._read(problem.goal, False, {})))
        return Normalised(actions, self.axioms, goal, self.derived)

    # -- reading formulas into negation normal form ---------------------------------------
    def _declare(self, typed) -> list[Param]:
        """Fresh names for declared variables; their types recorded."""
        out = []
        for t in typed:
            name = f"{t.name}@{next(self.fresh)}"
            self.types[name] = t.types
            out.append((name, t.types))
        return out

    def _read(self, node: Node, negate: bool, subst: dict[str, str]) -> Formula:
        if not isinstance(node, SList):
            raise UnsupportedRequirementError("expected a formula in parentheses", self.path, node.line, node.col)
        if not node.items:
            return FALSE if negate else TRUE
        head = node.head()
        parts = node.items[1:]
        if head == "and" or head == "or":
            kind = head if not negate else ("or" if head == "and" else "and")
            return (kind, tuple(self._read(p, negate, subst) for p in parts))
        if head == "not":
            return self._read(parts[0], not negate, subst)
        if head == "imply":
            left, right = self._read(parts[0], not negate, subst), self._read(parts[1], negate, subst)
            return ("and" if negate else "or", (left, right))
        if head in ("forall", "exists"):
            assert isinstance(parts[0], SList)
            params = self._declare(typed_list(parts[0].items, self.path))
            inner = {**subst, **dict(zip((t.name for t in typed_list(parts[0].items, self.path)),
                                         (v for v, _ in params)))}
            kind = head if not negate else ("exists" if head == "forall" else "forall")
            return (kind, tuple(v for v, _ in params), self._read(parts[1], negate, inner))
        terms = tuple(subst.get(t.text, t.text) for t in parts if isinstance(t, Token))
        if head == "=":
            return ("eq", terms[0], terms[1], not negate)
        return ("lit", head, terms, not negate)

    # -- universal conditions become axioms -----------------------------------------------
    def _without_forall(self, f: Formula) -> Formula:
        kind = f[0]
        if kind in ("lit", "eq"):
            return f
        if kind in ("and", "or"):
            return (kind, tuple(self._without_forall(p) for p in f[1]))
        if kind == "exists":
            return ("exists", f[1], self._without_forall(f[2]))
        body = ("exists", f[1], _negated(f[2]))  # forall x φ  ==  not (exists x (not φ))
        free = tuple(sorted(_free_variables(f), key=_source_name))
        typed = tuple((_source_name(v), self.types[v]) for v in free)
        # As the translator: an axiom is reused for the same condition over the same (source-named)
        # variables; nested universal conditions become axioms first, so they get the lower numbers;
        # the axiom is filed under its compiled condition (so a condition with a nested universal
        # part is never reused, as in the translator).
        name = self._axiom_names.get((_canonical(body), typed))
        if name is None:
            compiled = self._without_forall(body)
            name = f"new-axiom@{next(self._new_axioms)}"
            self._axiom_names[(_canonical(compiled), typed)] = name
            self.derived.add(name)
            params = [(v, self.types[v]) for v in free]
            self._add_axiom_rules(Literal(name, free), params, compiled)
        return ("lit", name, free, False)

    def _add_axiom_rules(self, head: Literal, params: list[Param], body: Formula) -> None:
        for extra, literals in self._dnf(self._without_forall(body)):
            self.axioms.append(AxiomRule(head, params + [(v, self.types[v]) for v in extra], _conjunction(literals)))

    # -- disjunctive normal form -----------------------------------------------------------
    def _dnf(self, f: Formula) -> list[tuple[tuple[str, ...], tuple[Formula, ...]]]:
        """Disjuncts of ``f`` (no ``forall`` left): (existential variables, literals)."""
        kind = f[0]
        if kind in ("lit", "eq"):
            return [((), (f,))]
        if kind == "exists":
            return [(f[1] + variables, literals) for variables, literals in self._dnf(f[2])]
        if kind == "or":
            return [d for part in f[1] for d in self._dnf(part)]
        assert kind == "and", kind
        result: list[tuple[tuple[str, ...], tuple[Formula, ...]]] = [((), ())]
        for part in f[1]:
            disjuncts = self._dnf(part)
            if len(result) * len(disjuncts) > MAX_DISJUNCTS:
                raise UnsupportedRequirementError(
                    f"a condition's disjunctive normal form exceeds {MAX_DISJUNCTS} disjuncts", self.path)
            result = [(v1 + v2, l1 + l2) for v1, l1 in result for v2, l2 in disjuncts]
        return result

    # -- actions -----------------------------------------------------------------------------
    def _action(self, action) -> list[ActionRule]:
        name = action.name.text.lower()
        params = self._declare(action.parameters)
        subst = dict(zip((p.name for p in action.parameters), (v for v, _ in params)))
        pre = self._without_forall(self._read(action.precondition, False, subst)
                                   if action.precondition is not None else TRUE)
        flat: list[tuple[tuple[str, ...], tuple[Formula, ...], Formula]] = []
        costs: list = []
        if action.effect is not None:
            self._effects(action.effect, (), (), subst, flat, costs)
        cost = costs[-1] if costs else None
        unconditional: list[Formula] = []
        grouped: dict[tuple, EffectRule] = {}
        for variables, conditions, literal in flat:
            condition = self._without_forall(("and", conditions)) if conditions else TRUE
            for extra, literals in (self._dnf(condition) if conditions else [((), ())]):
                effect_vars = variables + extra
                if not effect_vars and not literals:
                    unconditional.append(literal)
                    continue
                key = (effect_vars, literals)
                rule = grouped.get(key)
                if rule is None:
                    rule = grouped[key] = EffectRule([(v, self.types[v]) for v in effect_vars],
                                                     _conjunction(literals))
                (rule.add if literal[3] else rule.delete).append(Literal(literal[1], literal[2]))
        rules = []
        for extra, literals in self._dnf(pre):
            action = ActionRule(name, params + [(v, self.types[v]) for v in extra], len(params),
                                _conjunction(literals), cost=cost)
            for literal in unconditional:
                (action.add if literal[3] else action.delete).append(Literal(literal[1], literal[2]))
            action.effects = list(grouped.values())
            rules.append(action)
        return rules

    def _effects(self, node: Node, variables: tuple[str, ...], conditions: tuple[Formula, ...],
                 subst: dict[str, str], out: list, costs: list) -> None:
        assert isinstance(node, SList)
        head = node.head()
        parts = node.items[1:]
        if not node.items:
            return
        if head == "and":
            for part in parts:
                self._effects(part, variables, conditions, subst, out, costs)
        elif head == "forall":
            assert isinstance(parts[0], SList)
            typed = typed_list(parts[0].items, self.path)
            params = self._declare(typed)
            inner = {**subst, **dict(zip((t.name for t in typed), (v for v, _ in params)))}
            self._effects(parts[1], variables + tuple(v for v, _ in params), conditions, inner, out, costs)
        elif head == "when":
            condition = self._read(parts[0], False, subst)
            self._effects(parts[1], variables, conditions + (condition,), subst, out, costs)
        elif head == "increase":
            amount = parts[1]
            if isinstance(amount, Token):
                costs.append(float(amount.text))
            else:
                costs.append(Literal(amount.head() or "", tuple(subst.get(t.text, t.text) for t in amount.items[1:]
                                                                if isinstance(t, Token))))
        else:
            out.append((variables, conditions, self._read(node, False, subst)))

    # -- goal ---------------------------------------------------------------------------------
    def _goal(self, goal: Formula) -> Conjunction:
        literals = _flat_literals(goal)
        if literals is not None:
            return _conjunction(tuple(literals))
        name = f"new-axiom@{next(self._new_axioms)}"
        self.derived.add(name)
        self._add_axiom_rules(Literal(name, ()), [], goal)
        return Conjunction(pos=[Literal(name, ())])


def _source_name(term: str) -> str:
    """A renamed variable's name as written (``?x@3`` -> ``?x``); constants unchanged."""
    return term.split("@", 1)[0] if term.startswith("?") else term


def _canonical(f: Formula) -> Formula:
    """``f`` with every variable under its source name (the translator compares conditions so)."""
    kind = f[0]
    if kind == "lit":
        return (kind, f[1], tuple(map(_source_name, f[2])), f[3])
    if kind == "eq":
        return (kind, _source_name(f[1]), _source_name(f[2]), f[3])
    if kind in ("and", "or"):
        return (kind, tuple(_canonical(p) for p in f[1]))
    return (kind, tuple(map(_source_name, f[1])), _canonical(f[2]))


def _negated(f: Formula) -> Formula:
    kind = f[0]
    if kind in ("lit", "eq"):
        return (*f[:3], not f[3])
    if kind in ("and", "or"):
        return ("or" if kind == "and" else "and", tuple(_negated(p) for p in f[1]))
    return ("exists" if kind == "forall" else "forall", f[1], _negated(f[2]))


def _free_variables(f: Formula) -> set[str]:
    kind = f[0]
    if kind in ("lit", "eq"):
        terms = f[2] if kind == "lit" else f[1:3]
        return {t for t in terms if t.startswith("?")}
    if kind in ("and", "or"):
        return set().union(*(_free_variables(p) for p in f[1])) if f[1] else set()
    return _free_variables(f[2]) - set(f[1])


def _flat_literals(f: Formula) -> list[Formula] | None:
    """The literals of a conjunction of (positive or negative) atoms, else None."""
    if f[0] == "lit":
        return [f]
    if f[0] == "and":
        out = []
        for part in f[1]:
            inner = _flat_literals(part)
            if inner is None:
                return None
            out.extend(inner)
        return out
    return None


def _conjunction(literals: tuple[Formula, ...]) -> Conjunction:
    out = Conjunction()
    for f in literals:
        if f[0] == "eq":
            out.equal.append((f[1], f[2], f[3]))
        else:
            (out.pos if f[3] else out.neg).append(Literal(f[1], f[2]))
    return out
