"""The shape of a PDDL domain and problem read off the s-expressions, with positions.

This is what the normaliser and the model check work on: declared types, predicates,
constants and objects, and every atom used in actions, init and goal, each with the token
that names it (for ``FILE:LINE:COL``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from asg.planning.errors import ModelError, PDDLSyntaxError, UnsupportedRequirementError
from asg.planning.sexpr import Node, SList, Token

# Keywords of goal/precondition/effect formulas that are not predicate names.
CONNECTIVES = {"and", "not", "or", "imply", "when", "forall", "exists", "=",
               "increase", "decrease", "assign", "scale-up", "scale-down",
               "<", ">", "<=", ">=", "+", "-", "*", "/", "preference", "oneof"}

# Numeric heads: asg reads only ``(increase (total-cost) X)`` (action costs); the model check
# does not look inside them for predicate uses (they hold function terms).
NUMERIC_HEADS = {"increase", "decrease", "assign", "scale-up", "scale-down", "<", ">", "<=", ">="}

# Every requirement flag of PDDL 1.2 to 3.1, plus :non-deterministic (FOND) and Fast Downward's
# :negation; asg reads a few of them (parse.SUPPORTED) and refuses the others where used.
KNOWN_REQUIREMENTS = frozenset({
    ":strips", ":typing", ":negative-preconditions", ":disjunctive-preconditions", ":equality",
    ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions",
    ":conditional-effects", ":fluents", ":numeric-fluents", ":object-fluents", ":adl",
    ":durative-actions", ":duration-inequalities", ":continuous-effects", ":derived-predicates",
    ":timed-initial-literals", ":preferences", ":constraints", ":action-costs",
    ":action-expansions", ":foreach-expansions", ":dag-expansions", ":domain-axioms",
    ":subgoals-through-axioms", ":safety-constraints", ":expression-evaluation", ":open-world",
    ":true-negation", ":ucpop", ":non-deterministic", ":negation",
})

# Sections a domain or problem may hold once each (actions may repeat, with distinct names).
_SINGLE_SECTIONS = {":requirements", ":types", ":constants", ":predicates", ":functions",
                    ":domain", ":objects", ":init", ":goal", ":metric", ":constraints"}


@dataclass
class Typed:
    """A name declared in a typed list, its types (``either`` gives several) and its token."""

    name: str
    types: tuple[str, ...]
    token: Token


@dataclass
class Use:
    """An atom as written: predicate token and argument tokens, in an action or the problem."""

    predicate: Token
    args: list[Token]
    where: str  # e.g. "action open_door precondition", "init", "goal"
    negated: bool = False


@dataclass
class ActionShape:
    name: Token
    parameters: list[Typed]
    precondition: Node | None
    effect: Node | None
    node: SList


@dataclass
class DerivedShape:
    """A ``(:derived (p ?x - t ...) BODY)`` rule: the head's predicate and parameters, its body."""

    predicate: Token
    parameters: list[Typed]
    body: Node
    node: SList


@dataclass
class DomainShape:
    """Declarations and uses of a domain file (positions kept)."""

    name: Token
    node: SList
    requirements: SList | None = None
    types: list[Typed] = field(default_factory=list)
    types_node: SList | None = None
    constants: list[Typed] = field(default_factory=list)
    predicates: dict[str, tuple[Token, list[Typed]]] = field(default_factory=dict)
    predicates_node: SList | None = None
    actions: list[ActionShape] = field(default_factory=list)
    functions: dict[str, tuple[Token, list[Typed]]] = field(default_factory=dict)
    derived: list[DerivedShape] = field(default_factory=list)
    other_sections: list[SList] = field(default_factory=list)


@dataclass
class ProblemShape:
    name: Token
    node: SList
    domain_name: Token | None = None
    objects: list[Typed] = field(default_factory=list)
    init: list[Node] = field(default_factory=list)
    init_node: SList | None = None
    goal: Node | None = None
    metric: SList | None = None
    other_sections: list[SList] = field(default_factory=list)


def define_kind(form: SList, path: str | None) -> tuple[str, Token]:
    """Return ("domain"|"problem", name token) for a ``(define (domain X) ...)`` form."""
    if form.head() != "define" or len(form.items) < 2 or not isinstance(form.items[1], SList):
        raise PDDLSyntaxError("expected (define (domain NAME) ...) or (define (problem NAME) ...)",
                              path, form.line, form.col)
    header = form.items[1]
    kind = header.head()
    if kind not in ("domain", "problem") or len(header.items) != 2 or not isinstance(header.items[1], Token):
        raise PDDLSyntaxError("expected (domain NAME) or (problem NAME) after define", path,
                              header.line, header.col)
    return kind, header.items[1]


def typed_list(items: Sequence[Node], path: str | None, default: str = "object", *,
               allow_either: bool = True) -> list[Typed]:
    """Read ``a b - t c - (either t1 t2) d`` into Typed entries (untyped names get ``default``).

    ``allow_either=False`` (types, constants, objects: one type each) refuses ``(either ...)``.
    """
    out: list[Typed] = []
    pending: list[Token] = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Token) and item.text == "-":
            if i + 1 >= len(items):
                raise PDDLSyntaxError("'-' without a type", path, item.line, item.col)
            kind = items[i + 1]
            if isinstance(kind, SList):
                if kind.head() != "either" or not allow_either:
                    expected = "a type or (either ...)" if allow_either else "one type name here"
                    raise PDDLSyntaxError(f"expected {expected}", path, kind.line, kind.col)
                names = [t for t in kind.items[1:] if isinstance(t, Token)]
                if len(kind.items) < 2 or len(names) != len(kind.items) - 1:
                    raise PDDLSyntaxError("expected (either TYPE ...)", path, kind.line, kind.col)
                types = tuple(t.text.lower() for t in names)
            else:
                types = (kind.text.lower(),)
            out.extend(Typed(tok.text.lower(), types, tok) for tok in pending)
            pending = []
            i += 2
            continue
        if isinstance(item, SList):
            raise PDDLSyntaxError("unexpected list in a typed list", path, item.line, item.col)
        pending.append(item)
        i += 1
    out.extend(Typed(tok.text.lower(), (default,), tok) for tok in pending)
    return out


def _keyword_args(items: list[Node]) -> dict[str, Node]:
    """Read ``:key value :key value`` pairs of an action body."""
    out: dict[str, Node] = {}
    i = 0
    while i + 1 < len(items):
        key = items[i]
        if isinstance(key, Token) and key.text.startswith(":"):
            out[key.text.lower()] = items[i + 1]
            i += 2
        else:
            i += 1
    return out


def read_domain(form: SList, path: str | None) -> DomainShape:
    """Collect the declarations of a domain ``define`` form.

    An action or predicate defined twice, a section given twice and an unknown requirement
    flag are errors here, each naming its place.
    """
    _, name = define_kind(form, path)
    shape = DomainShape(name=name, node=form)
    seen = _SectionTracker(path)
    actions: dict[str, Token] = {}
    for section in form.items[2:]:
        if not isinstance(section, SList) or section.head() is None:
            raise PDDLSyntaxError("expected a (:section ...) in the domain", path, section.line, section.col)
        head = seen.enter(section)
        if head == ":requirements":
            check_requirements(section, path)
            shape.requirements = section
        elif head == ":types":
            shape.types = typed_list(section.items[1:], path, allow_either=False)
            shape.types_node = section
        elif head == ":constants":
            shape.constants = typed_list(section.items[1:], path, allow_either=False)
        elif head == ":predicates":
            shape.predicates_node = section
            for decl in section.items[1:]:
                predicate = decl.head_token() if isinstance(decl, SList) else None
                if not isinstance(decl, SList) or predicate is None:
                    raise PDDLSyntaxError("expected (predicate ?args ...)", path, decl.line, decl.col)
                predicate_name = predicate.text.lower()
                first = shape.predicates.get(predicate_name)
                if first is not None:
                    raise ModelError(f"predicate '{predicate_name}' declared twice (first at line "
                                     f"{first[0].line})", path, predicate.line, predicate.col)
                shape.predicates[predicate_name] = (predicate, typed_list(decl.items[1:], path))
        elif head == ":functions":
            _read_functions(section, shape, path)
        elif head == ":derived":
            shape.derived.append(_read_derived(section, path))
        elif head == ":action":
            if len(section.items) < 2 or not isinstance(section.items[1], Token):
                raise PDDLSyntaxError("action without a name", path, section.line, section.col)
            action_name = section.items[1]
            first_name = actions.get(action_name.text.lower())
            if first_name is not None:
                raise ModelError(f"action '{action_name.text.lower()}' defined twice (first at line "
                                 f"{first_name.line})", path, action_name.line, action_name.col)
            actions[action_name.text.lower()] = action_name
            body = _keyword_args(section.items[2:])
            params = body.get(":parameters")
            shape.actions.append(ActionShape(
                name=action_name,
                parameters=typed_list(params.items, path) if isinstance(params, SList) else [],
                precondition=body.get(":precondition"),
                effect=body.get(":effect"),
                node=section,
            ))
        else:
            shape.other_sections.append(section)
    return shape


def _read_functions(section: SList, shape: DomainShape, path: str | None) -> None:
    """``(:functions (f ?x - t) ... [- number])``: numeric functions only (no object fluents)."""
    items = section.items[1:]
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, Token) and item.text == "-":
            kind = items[i + 1] if i + 1 < len(items) else item
            if not isinstance(kind, Token) or kind.text.lower() != "number":
                raise UnsupportedRequirementError(
                    "unsupported requirement :object-fluents: functions must be of type number",
                    path, kind.line, kind.col)
            i += 2
            continue
        name = item.head_token() if isinstance(item, SList) else None
        if not isinstance(item, SList) or name is None:
            raise PDDLSyntaxError("expected (function ?args ...)", path, item.line, item.col)
        shape.functions[name.text.lower()] = (name, typed_list(item.items[1:], path))
        i += 1


def _read_derived(section: SList, path: str | None) -> DerivedShape:
    if len(section.items) != 3 or not isinstance(section.items[1], SList):
        raise PDDLSyntaxError("expected (:derived (PREDICATE ?args ...) FORMULA)", path, section.line, section.col)
    head = section.items[1]
    predicate = head.head_token()
    if predicate is None:
        raise PDDLSyntaxError("expected a predicate name", path, head.line, head.col)
    return DerivedShape(predicate, typed_list(head.items[1:], path), section.items[2], section)


class _SectionTracker:
    """Refuses a second ``(:types ...)``, ``(:init ...)``, ... in one define form."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.first: dict[str, SList] = {}

    def enter(self, section: SList) -> str:
        head = section.head() or ""
        if head in _SINGLE_SECTIONS:
            if head in self.first:
                raise PDDLSyntaxError(f"second ({head} ...) section (first at line {self.first[head].line})",
                                      self.path, section.line, section.col)
            self.first[head] = section
        return head


def check_requirements(section: SList, path: str | None) -> None:
    """Every flag of a ``(:requirements ...)`` section is a known PDDL requirement."""
    for item in section.items[1:]:
        if isinstance(item, SList):
            raise PDDLSyntaxError("expected a requirement flag such as :strips", path, item.line, item.col)
        if item.text.lower() not in KNOWN_REQUIREMENTS:
            raise PDDLSyntaxError(f"unknown requirement '{item.text.lower()}'", path, item.line, item.col)


def read_problem(form: SList, path: str | None) -> ProblemShape:
    """Collect objects, init and goal of a problem ``define`` form."""
    _, name = define_kind(form, path)
    shape = ProblemShape(name=name, node=form)
    seen = _SectionTracker(path)
    for section in form.items[2:]:
        if not isinstance(section, SList) or section.head() is None:
            raise PDDLSyntaxError("expected a (:section ...) in the problem", path, section.line, section.col)
        head = seen.enter(section)
        if head == ":domain":
            if len(section.items) != 2 or not isinstance(section.items[1], Token):
                raise PDDLSyntaxError("expected (:domain NAME)", path, section.line, section.col)
            shape.domain_name = section.items[1]
        elif head == ":requirements":
            check_requirements(section, path)
            shape.other_sections.append(section)
        elif head == ":objects":
            shape.objects = typed_list(section.items[1:], path, allow_either=False)
        elif head == ":init":
            shape.init = section.items[1:]
            shape.init_node = section
        elif head == ":goal":
            if len(section.items) > 2:
                extra = section.items[2]
                raise PDDLSyntaxError("expected one formula in (:goal ...)", path, extra.line, extra.col)
            shape.goal = section.items[1] if len(section.items) > 1 else None
        elif head == ":metric":
            shape.metric = section
        else:
            shape.other_sections.append(section)
    return shape


def atom_uses(node: Node | None, where: str, negated: bool = False) -> list[Use]:
    """Every predicate application inside a formula (connectives and quantifiers skipped).

    Iterative (an explicit stack, uses in source order), so no nesting depth can overflow it.
    """
    out: list[Use] = []
    stack: list[tuple[Node, bool]] = [(node, negated)] if node is not None else []
    while stack:
        item, neg = stack.pop()
        if isinstance(item, Token):
            continue
        predicate = item.head_token()
        head = predicate.text.lower() if predicate is not None else None
        if predicate is None:
            children, child_neg = item.items, neg
        elif head in NUMERIC_HEADS or (head == "=" and any(isinstance(t, SList) for t in item.items[1:])):
            continue  # numeric: function terms, not atoms
        elif head in ("forall", "exists"):
            children, child_neg = item.items[2:], neg
        elif head == "not":
            children, child_neg = item.items[1:], not neg
        elif head in CONNECTIVES:
            children, child_neg = item.items[1:], neg
        else:
            out.append(Use(predicate, [t for t in item.items[1:] if isinstance(t, Token)], where, neg))
            continue
        stack.extend((child, child_neg) for child in reversed(children))
    return out
