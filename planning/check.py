"""The model check: what FD and unified-planning reject and ``pddl`` 0.5.1 lets through.

Works on the position-carrying shapes of ``structure``, so each finding names
``FILE:LINE:COL``: undeclared predicates, wrong arity, unknown objects, variables or types,
unused declarations (warnings). The relaxed-reachability check of the goal needs a
grounded task and lives in ``grounding``.
"""
from __future__ import annotations

from dataclasses import dataclass

from asg.planning.sexpr import SList, Token
from asg.planning.structure import DomainShape, ProblemShape, Use, atom_uses, typed_list


@dataclass(frozen=True)
class Diagnostic:
    """One finding of the model check."""

    severity: str  # "error" | "warning"
    message: str
    path: str | None
    line: int | None
    col: int | None
    code: str = ""  # machine-readable kind, e.g. "undeclared-predicate"

    def format(self) -> str:
        place = ":".join(str(p) for p in (self.path, self.line, self.col) if p is not None)
        return f"{place}: {self.severity}: {self.message}" if place else f"{self.severity}: {self.message}"


def _diag(severity: str, code: str, message: str, path: str | None, token: Token | None) -> Diagnostic:
    return Diagnostic(severity, message, path,
                      token.line if token else None, token.col if token else None, code)


def _type_closure(domain: DomainShape) -> set[str]:
    known = {"object"}
    for typed in domain.types:
        known.add(typed.name)
    return known


def check_domain(domain: DomainShape, path: str | None) -> list[Diagnostic]:
    """Findings inside the domain: actions use declared predicates, parameters and types."""
    out: list[Diagnostic] = []
    types = _type_closure(domain)
    for typed in domain.types:
        for parent in typed.types:
            if parent not in types:
                out.append(_diag("error", "unknown-type", f"unknown type '{parent}'", path, typed.token))
    for name, (token, params) in domain.predicates.items():
        for param in params:
            for kind in param.types:
                if kind not in types:
                    out.append(_diag("error", "unknown-type", f"unknown type '{kind}' in predicate '{name}'",
                                     path, param.token))
    constants = {c.name for c in domain.constants}
    for const in domain.constants:
        for kind in const.types:
            if kind not in types:
                out.append(_diag("error", "unknown-type", f"unknown type '{kind}'", path, const.token))
    used_predicates: set[str] = set()
    used_types: set[str] = {parent for t in domain.types for parent in t.types}
    used_types |= {k for c in domain.constants for k in c.types}
    for action in domain.actions:
        name = action.name.text.lower()
        params = {p.name for p in action.parameters}
        seen: set[str] = set()
        for param in action.parameters:
            if param.name in seen:
                out.append(_diag("error", "duplicate-parameter",
                                 f"parameter '{param.name}' repeated in action '{name}'", path, param.token))
            seen.add(param.name)
            for kind in param.types:
                used_types.add(kind)
                if kind not in types:
                    out.append(_diag("error", "unknown-type", f"unknown type '{kind}' in action '{name}'",
                                     path, param.token))
        scoped = params | _quantified_variables(action.precondition) | _quantified_variables(action.effect)
        uses = (atom_uses(action.precondition, f"action '{name}' precondition")
                + atom_uses(action.effect, f"action '{name}' effect"))
        for use in uses:
            used_predicates.add(use.predicate.text.lower())
            out.extend(_check_use(use, domain, path, variables=scoped, objects=constants))
        for use in _equalities(action.precondition, f"action '{name}' precondition"):
            out.extend(_check_terms(use, path, scoped, constants))
    for name, (token, params) in domain.predicates.items():
        for param in params:
            used_types.update(param.types)
    for name, (token, _) in sorted(domain.predicates.items()):
        if name not in used_predicates:
            out.append(_diag("warning", "unused-predicate",
                             f"predicate '{name}' is declared but no action uses it", path, token))
    for typed in domain.types:
        if typed.name not in used_types:
            out.append(_diag("warning", "unused-type", f"type '{typed.name}' is declared but never used",
                             path, typed.token))
    return out


def check_problem(domain: DomainShape, problem: ProblemShape, path: str | None) -> list[Diagnostic]:
    """Findings inside the problem: objects, init and goal against the domain."""
    out: list[Diagnostic] = []
    types = _type_closure(domain)
    if problem.domain_name is not None and problem.domain_name.text.lower() != domain.name.text.lower():
        out.append(_diag("warning", "domain-mismatch",
                         f"problem names domain '{problem.domain_name.text.lower()}' but the domain is "
                         f"'{domain.name.text.lower()}'", path, problem.domain_name))
    for obj in problem.objects:
        for kind in obj.types:
            if kind not in types:
                out.append(_diag("error", "unknown-type", f"unknown type '{kind}' of object '{obj.name}'",
                                 path, obj.token))
    objects = {o.name for o in problem.objects} | {c.name for c in domain.constants}
    for item in problem.init:
        for use in atom_uses(item, "init"):
            out.extend(_check_use(use, domain, path, variables=set(), objects=objects))
    goal_vars = _quantified_variables(problem.goal)
    for use in atom_uses(problem.goal, "goal"):
        out.extend(_check_use(use, domain, path, variables=goal_vars, objects=objects))
    if problem.goal is None:
        out.append(Diagnostic("error", "missing goal: the problem has no (:goal ...)", path,
                              problem.node.line, problem.node.col, "missing-goal"))
    return out


def _check_use(use: Use, domain: DomainShape, path: str | None, variables: set[str],
               objects: set[str]) -> list[Diagnostic]:
    name = use.predicate.text.lower()
    declared = domain.predicates.get(name)
    if declared is None:
        return [_diag("error", "undeclared-predicate",
                      f"predicate '{name}' is used in {use.where} but not declared in :predicates",
                      path, use.predicate)]
    out: list[Diagnostic] = []
    arity = len(declared[1])
    if len(use.args) != arity:
        out.append(_diag("error", "wrong-arity",
                         f"predicate '{name}' takes {arity} argument(s), {len(use.args)} given in {use.where}",
                         path, use.predicate))
    out.extend(_check_terms(use, path, variables, objects))
    return out


def _check_terms(use: Use, path: str | None, variables: set[str], objects: set[str]) -> list[Diagnostic]:
    out = []
    for arg in use.args:
        text = arg.text.lower()
        if text.startswith("?"):
            if text not in variables:
                out.append(_diag("error", "unknown-variable", f"unknown variable '{text}' in {use.where}",
                                 path, arg))
        elif text not in objects:
            out.append(_diag("error", "unknown-object", f"unknown object or constant '{text}' in {use.where}",
                             path, arg))
    return out


def _equalities(node, where: str) -> list[Use]:
    if not isinstance(node, SList):
        return []
    found = []
    for sub in node.walk():
        if sub.head() == "=":
            found.append(Use(sub.items[0], [t for t in sub.items[1:] if isinstance(t, Token)], where))
    return found


def _quantified_variables(node) -> set[str]:
    if not isinstance(node, SList):
        return set()
    names: set[str] = set()
    for sub in node.walk():
        if sub.head() in ("forall", "exists") and len(sub.items) > 1 and isinstance(sub.items[1], SList):
            try:
                names |= {t.name for t in typed_list(sub.items[1].items, None)}
            except Exception:  # malformed quantifier: reported by the parser later
                pass
    return names
