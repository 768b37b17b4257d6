"""Reading PDDL: one tokenising pass, one normalising step, the model check, then ``pddl`` objects.

Real files are sloppy (upper-case keywords, ``=`` without ``:equality``, glued tokens such
as ``(aircraft?a)``, missing ``:requirements``, duplicate parameter names in predicate
declarations). ``pddl`` 0.5.1 rejects some of these and silently accepts undeclared
predicates. Every workaround lives in :func:`normalise`, applied to every file alike.

Each file is tokenised once, by asg's own reader (``sexpr``); :func:`build_domain` and
:func:`build_problem` then make the ``pddl`` package's objects straight from the checked
s-expressions, so its lark parser is neither imported nor run (that second parse was ~75%
of a warm parse, its import and grammar ~0.1-0.3 s of a cold one).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from pddl.action import Action
from pddl.core import Domain, Problem
from pddl.custom_types import parse_name
from pddl.exceptions import PDDLError as PDDLLibraryError
from pddl.logic.base import And, ExistsCondition, ForallCondition, Imply, Not, Or
from pddl.logic.effects import Forall, When
from pddl.logic.functions import EqualTo as NumericEqualTo
from pddl.logic.functions import Increase, Metric, NumericFunction, NumericValue
from pddl.logic.predicates import DerivedPredicate, EqualTo, Predicate
from pddl.logic.terms import Constant, Variable
from pddl.requirements import Requirements

from asg.planning.check import Diagnostic, check_domain, check_problem, type_parents
from asg.planning.errors import ModelError, PDDLError, PDDLSyntaxError, UnsupportedRequirementError
from asg.planning.sexpr import Node, SList, Token, parse_sexprs, read_text, render
from asg.planning.structure import (
    ActionShape,
    DomainShape,
    ProblemShape,
    Typed,
    atom_uses,
    define_kind,
    read_domain,
    read_problem,
    typed_list,
)

log = logging.getLogger(__name__)

# What asg reads: what Fast Downward's translator reads (STRIPS, ADL, derived predicates, action
# costs); the planning core compiles it as the translator does (``asg.planning.normalize``).
SUPPORTED = (":strips", ":typing", ":negative-preconditions", ":equality", ":disjunctive-preconditions",
             ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions",
             ":conditional-effects", ":adl", ":derived-predicates", ":action-costs")

# Keyword -> the requirement that keyword needs; asg refuses all of these, as Fast Downward does.
UNSUPPORTED_KEYWORDS = {
    "decrease": ":numeric-fluents",
    "assign": ":numeric-fluents",
    "scale-up": ":numeric-fluents",
    "scale-down": ":numeric-fluents",
    "<": ":numeric-fluents",
    ">": ":numeric-fluents",
    "<=": ":numeric-fluents",
    ">=": ":numeric-fluents",
    ":durative-action": ":durative-actions",
    ":constraints": ":constraints",
    "preference": ":preferences",
    "oneof": ":non-deterministic",
}

# What ``lenient=True`` turns from an error into a warning, and how it repairs the model.
LENIENT = {
    "undeclared-predicate": "declared with the arity of its first use",
    "domain-mismatch": "accepted",
}


@dataclass
class Model:
    """A parsed planning model: the ``pddl`` objects plus the checked source shapes."""

    domain: Domain
    problem: Problem | None
    domain_path: str | None
    problem_path: str | None
    warnings: list[Diagnostic] = field(default_factory=list)
    domain_shape: DomainShape | None = None
    problem_shape: ProblemShape | None = None

    @property
    def name(self) -> str:
        return str(self.problem.name) if self.problem is not None else str(self.domain.name)


def parse_files(domain_path: str | Path, problem_path: str | Path | None = None, *,
                lenient: bool = False, require_problem: bool = True) -> Model:
    """Parse a domain and its problem (both may stand in ``domain_path``).

    ``lenient`` accepts what asg can repair, each with a warning instead of an error
    (see ``LENIENT``): undeclared predicates are declared, a problem naming another domain
    is read against this one.
    """
    dpath = str(domain_path)
    ppath = str(problem_path) if problem_path is not None else None
    forms = _split(dpath, read_text(dpath))
    if ppath is not None:
        extra = _split(ppath, read_text(ppath))
        if extra["domain"]:
            form = extra["domain"][0]
            raise PDDLSyntaxError("expected a problem but this file defines a domain", ppath, form.line, form.col)
        if forms["problem"]:
            form = forms["problem"][0]
            raise PDDLSyntaxError("this file already holds a problem; give the domain alone with PROBLEM",
                                  dpath, form.line, form.col)
        forms["problem"] = extra["problem"]
        problem_source = ppath
    else:
        problem_source = dpath
    if not forms["domain"]:
        form = forms["problem"][0]
        raise PDDLSyntaxError("no domain: this file defines only a problem; give DOMAIN first",
                              dpath, form.line, form.col)
    if len(forms["problem"]) > 1:
        form = forms["problem"][1]
        raise PDDLSyntaxError("more than one problem in one file", problem_source, form.line, form.col)
    if require_problem and not forms["problem"]:
        raise PDDLError("missing problem: the file defines a domain but no problem; "
                        "give PROBLEM as a second file or append (define (problem ...)) to this one", dpath)
    problem_form = forms["problem"][0] if forms["problem"] else None
    return _build(forms["domain"][0], dpath, problem_form, problem_source, lenient)


def parse_text(domain_text: str, problem_text: str | None = None, *, name: str = "<string>",
               lenient: bool = False, require_problem: bool = False) -> Model:
    """Parse PDDL given as strings (a domain, optionally with its problem in the same text)."""
    forms = _split(name, domain_text)
    if problem_text is not None:
        forms["problem"] = _split(name, problem_text)["problem"]
    if not forms["domain"]:
        raise PDDLSyntaxError("no (define (domain ...)) found", name)
    if require_problem and not forms["problem"]:
        raise PDDLError("missing problem", name)
    problem_form = forms["problem"][0] if forms["problem"] else None
    return _build(forms["domain"][0], name, problem_form, name, lenient)


def _split(path: str, text: str) -> dict[str, list[SList]]:
    forms: dict[str, list[SList]] = {"domain": [], "problem": []}
    top = parse_sexprs(text, path)
    if not top:
        raise PDDLSyntaxError("empty file: no (define ...) found", path)
    for form in top:
        kind, _ = define_kind(form, path)
        forms[kind].append(form)
    if len(forms["domain"]) > 1:
        form = forms["domain"][1]
        raise PDDLSyntaxError("more than one domain in one file", path, form.line, form.col)
    return forms


def _build(domain_form: SList, dpath: str, problem_form: SList | None, ppath: str, lenient: bool) -> Model:
    normalise(domain_form)
    if problem_form is not None:
        normalise(problem_form)
    _refuse_unsupported(domain_form, dpath)
    if problem_form is not None:
        _refuse_unsupported(problem_form, ppath)
    dshape = read_domain(domain_form, dpath)
    pshape = read_problem(problem_form, ppath) if problem_form is not None else None
    _dedupe_predicate_parameters(dshape)
    diagnostics = check_domain(dshape, dpath)
    if pshape is not None:
        diagnostics += check_problem(dshape, pshape, ppath)
    if lenient:
        diagnostics = _relax(dshape, diagnostics)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        first = errors[0]
        raise ModelError(first.message, first.path, first.line, first.col)
    requirements = _set_requirements(dshape, pshape)
    domain = build_domain(dshape, requirements, dpath)
    problem = None
    if pshape is not None:
        problem, notes = build_problem(pshape, dshape, ppath)
        diagnostics += notes
    warnings = [d for d in diagnostics if d.severity == "warning"]
    for warning in warnings:
        log.info(warning.format())
    return Model(domain, problem, dpath, ppath if problem_form is not None else None, warnings, dshape, pshape)


def normalise(form: SList) -> None:
    """Lower-case every symbol and split glued tokens such as ``aircraft?a`` (in place)."""
    for node in form.walk():
        items: list = []
        for item in node.items:
            if isinstance(item, Token):
                text = item.text.lower()
                cut = text.find("?", 1)
                if cut > 0 and not text.startswith("?"):
                    items.append(Token(text[:cut], item.line, item.col))
                    items.append(Token(text[cut:], item.line, item.col + cut))
                    continue
                item.text = text
            items.append(item)
        node.items = items


def _refuse_unsupported(form: SList, path: str) -> None:
    """What Fast Downward's translator refuses, refused with the requirement named and the place."""
    for node in form.walk():
        head = node.head()
        if head in UNSUPPORTED_KEYWORDS and node is not form:
            requirement = UNSUPPORTED_KEYWORDS[head]
            raise UnsupportedRequirementError(
                f"unsupported requirement {requirement}: '{head}' is not supported (asg reads what Fast "
                "Downward's translator reads: STRIPS, ADL, derived predicates, action costs)",
                path, node.line, node.col)
        if head == "increase" and not _is_cost_increase(node):
            raise UnsupportedRequirementError(
                "unsupported requirement :numeric-fluents: only (increase (total-cost) NUMBER-OR-FUNCTION) "
                "is read, as in Fast Downward", path, node.line, node.col)


def _is_cost_increase(node: SList) -> bool:
    if len(node.items) != 3 or not isinstance(node.items[1], SList) or node.items[1].head() != "total-cost":
        return False
    amount = node.items[2]
    if isinstance(amount, Token):
        return _number(amount.text) is not None
    return amount.head() is not None and all(isinstance(t, Token) for t in amount.items)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _effect_parts(form: SList) -> list[SList]:
    """The :effect formulas of every action in ``form``."""
    out = []
    for node in form.walk():
        for key, value in zip(node.items, node.items[1:]):
            if isinstance(key, Token) and key.text == ":effect" and isinstance(value, SList):
                out.append(value)
    return out


def _dedupe_predicate_parameters(domain: DomainShape) -> None:
    """``(in ?obj ?obj)`` declares arity 2: rename repeats so every parser agrees."""
    for _, (_, params) in domain.predicates.items():
        seen: dict[str, int] = {}
        for param in params:
            count = seen.get(param.name, 0)
            seen[param.name] = count + 1
            if count:
                param.token.text = f"{param.name}-{count + 1}"
                param.name = param.token.text


def _relax(domain: DomainShape, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """``lenient``: repair what ``LENIENT`` names and report it as a warning."""
    out: list[Diagnostic] = []
    declared: set[str] = set()
    arities = _first_use_arities(domain)
    for diag in diagnostics:
        if diag.code not in LENIENT or diag.severity != "error":
            out.append(diag)
            continue
        if diag.code == "undeclared-predicate":
            name = diag.message.split("'")[1]
            if name not in declared:
                declared.add(name)
                _declare(domain, name, arities.get(name, 0))
            note = " (declared by --lenient)"
        else:
            note = " (accepted by --lenient)"
        out.append(Diagnostic("warning", diag.message + note, diag.path, diag.line, diag.col, diag.code))
    return out


def _declare(domain: DomainShape, name: str, arity: int) -> None:
    node = domain.predicates_node
    if node is None:
        node = SList([Token(":predicates", domain.node.line, domain.node.col)], domain.node.line, domain.node.col)
        domain.node.items.insert(2, node)
        domain.predicates_node = node
    predicate = Token(name, node.line, node.col)
    params = [Token(f"?x{i}", node.line, node.col) for i in range(arity)]
    decl = SList([predicate, *params], node.line, node.col)
    node.items.append(decl)
    domain.predicates[name] = (predicate, [Typed(param.text, ("object",), param) for param in params])


def _first_use_arities(domain: DomainShape) -> dict[str, int]:
    arities: dict[str, int] = {}
    for action in domain.actions:
        for use in atom_uses(action.precondition, "") + atom_uses(action.effect, ""):
            arities.setdefault(use.predicate.text, len(use.args))
    return arities


def _set_requirements(domain: DomainShape, problem: ProblemShape | None) -> tuple[str, ...]:
    """Declare exactly the supported requirements the files use (``pddl`` checks them)."""
    used = {":strips"}
    if domain.types or any(p.types != ("object",) for p in _all_typed(domain, problem)):
        used.add(":typing")
    needs = {"=": ":equality", "not": ":negative-preconditions", "or": ":disjunctive-preconditions",
             "imply": ":disjunctive-preconditions", "exists": ":existential-preconditions",
             "forall": ":universal-preconditions", "when": ":conditional-effects",
             "increase": ":action-costs"}
    for form in (domain.node, problem.node if problem else None):
        if form is None:
            continue
        for node in form.walk():
            head = node.head()
            if head in needs:
                used.add(needs[head])
    if any(head == "forall" for eff in _effect_parts(domain.node) for head in (n.head() for n in eff.walk())):
        used.add(":conditional-effects")
    if domain.derived:
        used.add(":derived-predicates")
    if domain.functions:
        used.add(":action-costs")
    if set(domain.functions) - {"total-cost"}:
        used.add(":numeric-fluents")  # for ``pddl``: static functions that give action costs
    tokens = [Token(req, domain.node.line, domain.node.col) for req in (*SUPPORTED, ":numeric-fluents")
              if req in used]
    if domain.requirements is not None:
        domain.requirements.items = [domain.requirements.items[0]] + [
            Token(t.text, domain.requirements.line, domain.requirements.col) for t in tokens]
    else:
        header = domain.node.items[1]
        section = SList([Token(":requirements", header.line, header.col), *tokens], header.line, header.col)
        domain.node.items.insert(2, section)
        domain.requirements = section
    if problem is not None:
        problem.node.items = [item for item in problem.node.items
                              if not (isinstance(item, SList) and item.head() == ":requirements")]
    return tuple(t.text for t in tokens)


def _all_typed(domain: DomainShape, problem: ProblemShape | None):
    yield from domain.constants
    for _, params in domain.predicates.values():
        yield from params
    for action in domain.actions:
        yield from action.parameters
    if problem is not None:
        yield from problem.objects


# -- the pddl package's objects, built from the checked s-expressions ---------------------------
# The formula builders recurse, one Python frame per level: the reader's depth limit
# (sexpr.MAX_DEPTH) bounds them, as it bounds the ``pddl`` validators that walk the result.
# Untyped and ``- object`` names both get no type tag (``pddl``'s parser keeps "object").

_ACTION_KEYS = (":parameters", ":precondition", ":effect")
# What ``pddl``'s constructors raise on a bad name, a type clash or an inconsistent model.
_LIBRARY_ERRORS = (ValueError, TypeError, AssertionError, PDDLLibraryError)


def build_domain(shape: DomainShape, requirements: tuple[str, ...], path: str) -> Domain:
    """A ``pddl.core.Domain`` like the one ``pddl``'s own parser makes of the same text."""
    for section in shape.other_sections:
        raise PDDLSyntaxError(f"unknown domain section ({section.head()} ...)", path, section.line, section.col)
    constants = {c.name: _named(Constant, c.token, path, c.name, _tag(c)) for c in shape.constants}
    predicates = [_named(Predicate, token, path, token.text, *(_variable(p, path) for p in params))
                  for token, params in shape.predicates.values()]
    actions = [_action(action, constants, path) for action in shape.actions]
    functions = {_named(NumericFunction, token, path, token.text, *(_variable(p, path) for p in params)): None
                 for token, params in shape.functions.values()}
    derived = [_derived(rule, constants, path) for rule in shape.derived]
    _named(parse_name, shape.name, path, shape.name.text)
    try:
        return Domain(shape.name.text, requirements=[Requirements(r[1:]) for r in requirements],
                      types=type_parents(shape), constants=list(constants.values()), predicates=predicates,
                      derived_predicates=derived, functions=functions, actions=actions)
    except _LIBRARY_ERRORS as err:
        raise ModelError(f"invalid domain: {_one_line(err)}", path, shape.name.line, shape.name.col) from None


def build_problem(shape: ProblemShape, domain: DomainShape, path: str) -> tuple[Problem, list[Diagnostic]]:
    """A ``pddl.core.Problem`` (standalone: ``domain_name`` only) and notes on what was dropped."""
    notes: list[Diagnostic] = []
    metric = None
    if shape.metric is not None:
        if _is_cost_metric(shape.metric):
            metric = Metric(NumericFunction("total-cost"), Metric.MINIMIZE)
        else:
            notes.append(Diagnostic("warning", "(:metric ...) ignored: asg reads (:metric minimize (total-cost)) "
                                    "only, as Fast Downward", path, shape.metric.line, shape.metric.col,
                                    "ignored-metric"))
    for section in shape.other_sections:
        if section.head() != ":requirements":
            raise PDDLSyntaxError(f"unknown problem section ({section.head()} ...)", path, section.line,
                                  section.col)
    objects = {o.name: _named(Constant, o.token, path, o.name, _tag(o)) for o in shape.objects}
    init, negated, _ = read_init(shape, objects, path)
    for fact, node in negated:
        if fact in init:
            raise ModelError(f"{_text(node)} contradicts the atom listed true in :init", path, node.line, node.col)
        notes.append(Diagnostic("warning", f"{_text(node)} in :init ignored (an atom not listed is false)",
                                path, node.line, node.col, "negative-init"))
    goal = _condition(shape.goal, {}, {}, path) if shape.goal is not None else And()
    name = shape.domain_name.text if shape.domain_name is not None else domain.name.text
    _named(parse_name, shape.name, path, shape.name.text)
    if shape.domain_name is not None:
        _named(parse_name, shape.domain_name, path, name)
    try:
        problem = Problem(shape.name.text, domain_name=name, objects=list(objects.values()), init=init, goal=goal,
                          metric=metric)
    except _LIBRARY_ERRORS as err:
        raise ModelError(f"invalid problem: {_one_line(err)}", path, shape.name.line, shape.name.col) from None
    return problem, notes


def _text(node: SList) -> str:
    text = render(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _tag(typed: Typed) -> str | None:
    return None if typed.types == ("object",) else typed.types[0]


def _named(factory, token: Token, path: str, *args):
    """``factory(*args)``, with a ``pddl`` complaint (a bad name, mostly) placed at ``token``."""
    try:
        return factory(*args)
    except _LIBRARY_ERRORS as err:
        raise PDDLSyntaxError(f"invalid '{token.text}': {_one_line(err)}", path, token.line, token.col) from None


def _variable(param: Typed, path: str) -> Variable:
    if not param.name.startswith("?"):
        raise PDDLSyntaxError(f"expected a ?variable, not '{param.name}'", path, param.token.line, param.token.col)
    tags = () if param.types == ("object",) else param.types
    return _named(Variable, param.token, path, param.name[1:], tags)


def _action(action: ActionShape, constants: dict[str, Constant], path: str) -> Action:
    body = action.node.items[2:]
    given: set[str] = set()
    for i in range(0, len(body), 2):
        key = body[i]
        if not isinstance(key, Token) or key.text not in _ACTION_KEYS:
            raise PDDLSyntaxError(f"expected one of {', '.join(_ACTION_KEYS)} in action '{action.name.text}'",
                                  path, key.line, key.col)
        if key.text in given:
            raise PDDLSyntaxError(f"{key.text} given twice in action '{action.name.text}'", path, key.line, key.col)
        given.add(key.text)
        value = body[i + 1] if i + 1 < len(body) else key
        if not isinstance(value, SList):
            raise PDDLSyntaxError(f"expected a list after {key.text}", path, value.line, value.col)
    params = {p.name[1:]: _variable(p, path) for p in action.parameters}
    pre = _condition(action.precondition, params, constants, path) if action.precondition is not None else None
    eff = _effect(action.effect, params, constants, path) if action.effect is not None else None
    return _named(Action, action.name, path, action.name.text, list(params.values()), pre, eff)


def _condition(node: Node, params: dict, constants: dict, path: str):
    """A precondition or goal: ``()``, ``and``, ``or``, ``not``, ``imply``, ``forall``, ``exists``,
    ``=`` and atoms."""
    return _formula(node, params, constants, path, effect=False)


def _effect(node: Node, params: dict, constants: dict, path: str):
    """An effect: ``()``, ``and`` (nested too, as Fast Downward reads it), ``not``, atoms, ``forall``,
    ``when`` and ``(increase (total-cost) ...)``."""
    return _formula(node, params, constants, path, effect=True)


_CONNECTIVE_ARITY = {"not": 1, "imply": 2, "when": 2}


def _formula(node: Node, params: dict, constants: dict, path: str, effect: bool):
    if not isinstance(node, SList):
        what = "an effect" if effect else "a formula"
        raise PDDLSyntaxError(f"expected {what} in parentheses", path, node.line, node.col)
    head = node.head()
    if not node.items:
        return And()
    if head in _CONNECTIVE_ARITY and len(node.items) != _CONNECTIVE_ARITY[head] + 1:
        raise PDDLSyntaxError(f"expected ({head} {' '.join(['FORMULA'] * _CONNECTIVE_ARITY[head])})",
                              path, node.line, node.col)
    parts = node.items[1:]
    if head == "and":
        return And(*(_formula(item, params, constants, path, effect) for item in parts))
    if head == "not":
        if effect and (not isinstance(parts[0], SList) or parts[0].head() in ("and", "or", "not", "forall",
                                                                               "exists", "imply", "when", None)):
            raise PDDLSyntaxError("expected (not ATOM) in an effect", path, node.line, node.col)
        return Not(_formula(parts[0], params, constants, path, effect))
    if head in ("forall", "exists"):
        if len(parts) != 2 or not isinstance(parts[0], SList) or (effect and head == "exists"):
            raise PDDLSyntaxError(f"expected ({head} (?VARIABLES) FORMULA)", path, node.line, node.col)
        variables = [_variable(v, path) for v in typed_list(parts[0].items, path)]
        scope = {**params, **{str(v.name): v for v in variables}}
        body = _formula(parts[1], scope, constants, path, effect)
        if effect:
            return Forall(body, variables)
        return (ForallCondition if head == "forall" else ExistsCondition)(body, variables)
    if not effect and head in ("or", "imply"):
        operands = [_formula(item, params, constants, path, effect) for item in parts]
        if head == "imply":
            return Imply(*operands)
        return Or(*operands) if operands else Or()
    if effect and head == "when":
        return When(_formula(parts[0], params, constants, path, effect=False),
                    _formula(parts[1], params, constants, path, effect))
    if effect and head == "increase":
        amount = parts[1]
        value = (NumericValue(float(amount.text)) if isinstance(amount, Token)
                 else NumericFunction(amount.head(), *_terms(amount, params, constants, path)))
        return Increase(NumericFunction("total-cost"), value)
    return _atom(node, params, constants, path, effect)


def _derived(rule, constants: dict, path: str):
    params = {p.name[1:]: _variable(p, path) for p in rule.parameters}
    head = _named(Predicate, rule.predicate, path, rule.predicate.text, *params.values())
    return _named(DerivedPredicate, rule.predicate, path, head, _condition(rule.body, params, constants, path))


def _is_cost_metric(metric: SList) -> bool:
    items = metric.items[1:]
    return (len(items) == 2 and isinstance(items[0], Token) and items[0].text == "minimize"
            and isinstance(items[1], SList) and items[1].head() == "total-cost" and len(items[1].items) == 1)


def _terms(node: SList, params: dict, constants: dict, path: str) -> list:
    terms = []
    for item in node.items[1:]:
        if isinstance(item, SList):
            raise PDDLSyntaxError("expected a name or ?variable, not a list", path, item.line, item.col)
        if item.text.startswith("?"):
            term = params.get(item.text[1:])
            terms.append(term if term is not None else _named(Variable, item, path, item.text[1:]))
        else:
            term = constants.get(item.text)
            terms.append(term if term is not None else _named(Constant, item, path, item.text))
    return terms


def _atom(node: SList, params: dict, constants: dict, path: str, effect: bool):
    """``(p t ...)`` or, in conditions, ``(= t t)``; terms are names or ``?variables``."""
    head = node.items[0]
    if not isinstance(head, Token):
        raise PDDLSyntaxError("expected a predicate name", path, head.line, head.col)
    terms = _terms(node, params, constants, path)
    if head.text == "=":
        if effect:
            raise PDDLSyntaxError("'=' cannot be an effect", path, node.line, node.col)
        if len(terms) != 2:
            raise PDDLSyntaxError("expected (= TERM TERM)", path, node.line, node.col)
        return EqualTo(*terms)
    return _named(Predicate, head, path, head.text, *terms)


def read_init(shape: ProblemShape, objects: dict[str, Constant], path: str) -> tuple[list, list, dict]:
    """The atoms of ``:init``, the negated ones (dropped by the caller) with their nodes, and the
    numeric values ``(= (f a ...) N)`` of static functions (action costs) by (function, args)."""
    init: list = []
    negated: list = []
    values: dict[tuple[str, tuple[str, ...]], float] = {}
    for item in shape.init:
        if not isinstance(item, SList) or item.head() is None:
            raise PDDLSyntaxError("expected an atom (p a ...) in :init", path, item.line, item.col)
        if item.head() == "=":
            key, value, fact = _numeric_init(item, objects, path)
            values[key] = value
            init.append(fact)
            continue
        atom = item
        if item.head() == "not":
            if len(item.items) != 2 or not isinstance(item.items[1], SList) or item.items[1].head() is None:
                raise PDDLSyntaxError("expected (not ATOM)", path, item.line, item.col)
            atom = item.items[1]
        terms = []
        for arg in atom.items[1:]:
            if isinstance(arg, SList) or arg.text.startswith("?"):
                raise PDDLSyntaxError("expected an object name in :init", path, arg.line, arg.col)
            known = objects.get(arg.text)
            terms.append(known if known is not None else _named(Constant, arg, path, arg.text))
        predicate = atom.head_token()
        assert predicate is not None  # checked above: ``item`` (or the atom it negates) has a head
        fact = _named(Predicate, predicate, path, predicate.text, *terms)
        if atom is item:
            init.append(fact)
        else:
            negated.append((fact, item))
    return init, negated, values


def _numeric_init(item: SList, objects: dict[str, Constant], path: str):
    """``(= (f a b) N)``: the value of a static function, as action costs use them."""
    parts = item.items[1:]
    if (len(parts) != 2 or not isinstance(parts[0], SList) or parts[0].head() is None
            or not isinstance(parts[1], Token) or _number(parts[1].text) is None
            or not all(isinstance(t, Token) for t in parts[0].items)):
        raise UnsupportedRequirementError("unsupported requirement :numeric-fluents: expected (= (FUNCTION "
                                          "OBJECT ...) NUMBER) in :init", path, item.line, item.col)
    function = parts[0]
    tokens = [t for t in function.items[1:] if isinstance(t, Token)]
    args = tuple(t.text for t in tokens)
    value = _number(parts[1].text)
    assert value is not None
    terms = [objects.get(t.text) or _named(Constant, t, path, t.text) for t in tokens]
    fact = NumericEqualTo(NumericFunction(function.head(), *terms), NumericValue(value))
    return (function.head(), args), value, fact


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
