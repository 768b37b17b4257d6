"""The model check: what FD and unified-planning reject and ``pddl`` 0.5.1 lets through.

Works on the position-carrying shapes of ``structure``, so each finding names
``FILE:LINE:COL``: undeclared predicates, wrong arity, unknown objects, variables or types,
unused declarations (warnings), a problem naming another domain, a type declared twice
(read as Fast Downward's translator reads it, with a warning). The relaxed-reachability
check of the goal needs a grounded task and lives in ``grounding``.
"""
from __future__ import annotations

from dataclasses import dataclass

from asg.planning.sexpr import SList, Token
from asg.planning.structure import DomainShape, ProblemShape, Typed, Use, atom_uses, typed_list


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


def type_parents(domain: DomainShape) -> dict[str, str | None]:
    """The parent of each declared type (None: ``object``), a type declared twice merged.

    Fast Downward's translator reads ``a - object`` and ``a - surface`` (IPC storage) as one
    type ``a`` below every parent given; with one parent a subtype of the other that is the
    most specific one. Parents that are not on one chain are reported by ``check_domain``;
    here the first declared one is kept.
    """
    declared: dict[str, list[str]] = {}
    for typed in domain.types:
        parents = declared.setdefault(typed.name, [])
        parents.extend(p for p in typed.types if p != "object" and p not in parents)
    out: dict[str, str | None] = {}
    for name, parents in declared.items():
        chosen = next((c for c in parents if set(parents) <= _ancestors(c, declared) | {c}), None)
        out[name] = chosen if chosen is not None else (parents[0] if parents else None)
    return out


def _ancestors(name: str, declared: dict[str, list[str]]) -> set[str]:
    """Every type above ``name`` along any declared parent edge (cycle-safe, iterative)."""
    seen: set[str] = set()
    stack = list(declared.get(name, ()))
    while stack:
        kind = stack.pop()
        if kind not in seen:
            seen.add(kind)
            stack.extend(declared.get(kind, ()))
    return seen


def _check_types(domain: DomainShape, path: str | None) -> list[Diagnostic]:
    """A type declared twice (warning, or error if asg cannot merge it), cycles, ``object``'s parent."""
    out: list[Diagnostic] = []
    first: dict[str, Typed] = {}
    parents = type_parents(domain)
    for typed in domain.types:
        if typed.name == "object" and typed.types != ("object",):
            out.append(_diag("error", "object-parent", f"type 'object' cannot have a parent ('{typed.types[0]}')",
                             path, typed.token))
        if typed.name not in first:
            first[typed.name] = typed
            continue
        every = sorted({p for t in domain.types if t.name == typed.name for p in t.types})
        chosen = parents[typed.name]
        if chosen is not None and not set(every) - {"object"} <= _chain(chosen, parents):
            out.append(_diag("error", "duplicate-type",
                             f"type '{typed.name}' declared twice with unrelated parents "
                             f"{', '.join(repr(p) for p in every)} (first at line {first[typed.name].token.line}); "
                             "asg's types have one parent each", path, typed.token))
            continue
        out.append(_diag("warning", "duplicate-type",
                         f"type '{typed.name}' declared twice (first at line {first[typed.name].token.line}): "
                         f"read as one type below {' and '.join(repr(p) for p in every)}, as Fast Downward does",
                         path, typed.token))
    for name in parents:
        if name in _chain(parents[name], parents):
            out.append(_diag("error", "type-cycle", f"type '{name}' is its own ancestor", path,
                             first[name].token))
    return out


def _chain(name: str | None, parents: dict[str, str | None]) -> set[str]:
    """``name`` and the types above it through the chosen parents."""
    seen: set[str] = set()
    while name is not None and name not in seen:
        seen.add(name)
        name = parents.get(name)
    return seen


def check_domain(domain: DomainShape, path: str | None) -> list[Diagnostic]:
    """Findings inside the domain: actions use declared predicates, parameters and types."""
    out: list[Diagnostic] = _check_types(domain, path)
    types = _type_closure(domain)
    for typed in domain.types:
        for parent in typed.types:
            if parent not in types:
                out.append(_diag("error", "unknown-type", f"unknown type '{parent}'", path, typed.token))
    for name, (_token, params) in domain.predicates.items():
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
        param_names = {p.name for p in action.parameters}
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
        scoped = param_names | _quantified_variables(action.precondition) | _quantified_variables(action.effect)
        uses = (atom_uses(action.precondition, f"action '{name}' precondition")
                + atom_uses(action.effect, f"action '{name}' effect"))
        for use in uses:
            used_predicates.add(use.predicate.text.lower())
            out.extend(_check_use(use, domain, path, variables=scoped, objects=constants))
        for use in _equalities(action.precondition, f"action '{name}' precondition"):
            out.extend(_check_terms(use, path, scoped, constants))
    derived = {rule.predicate.text.lower() for rule in domain.derived}
    for rule in domain.derived:
        name = rule.predicate.text.lower()
        where = f"derived predicate '{name}'"
        scoped = {p.name for p in rule.parameters} | _quantified_variables(rule.body)
        for param in rule.parameters:
            used_types.update(param.types)
        head = Use(rule.predicate, [p.token for p in rule.parameters], where)
        for use in [head, *atom_uses(rule.body, where)]:
            used_predicates.add(use.predicate.text.lower())
            out.extend(_check_use(use, domain, path, variables=scoped, objects=constants))
        for use in _equalities(rule.body, where):
            out.extend(_check_terms(use, path, scoped, constants))
    for action in domain.actions:
        for use in atom_uses(_without_conditions(action.effect), ""):
            if use.predicate.text.lower() in derived:
                out.append(_diag("error", "derived-effect", f"derived predicate '{use.predicate.text.lower()}' "
                                 f"is changed by action '{action.name.text.lower()}'", path, use.predicate))
    for _token, params in domain.predicates.values():
        for param in params:
            used_types.update(param.types)
    for name, (token, _) in sorted(domain.predicates.items()):
        if name not in used_predicates:
            out.append(_diag("warning", "unused-predicate",
                             f"predicate '{name}' is declared but no action uses it", path, token))
    first_declared: dict[str, Typed] = {}
    for typed in domain.types:
        first_declared.setdefault(typed.name, typed)
    for typed in first_declared.values():
        if typed.name not in used_types:
            out.append(_diag("warning", "unused-type", f"type '{typed.name}' is declared but never used",
                             path, typed.token))
    return out


def check_problem(domain: DomainShape, problem: ProblemShape, path: str | None) -> list[Diagnostic]:
    """Findings inside the problem: objects, init and goal against the domain."""
    out: list[Diagnostic] = []
    types = _type_closure(domain)
    if problem.domain_name is not None and problem.domain_name.text.lower() != domain.name.text.lower():
        out.append(_diag("error", "domain-mismatch",
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
        equals = sub.head_token()
        if equals is not None and equals.text.lower() == "=":
            found.append(Use(equals, [t for t in sub.items[1:] if isinstance(t, Token)], where))
    return found


def _without_conditions(node):
    """An effect with its ``when`` conditions cut off (what it changes, not what it reads)."""
    if not isinstance(node, SList):
        return node
    if node.head() == "when" and len(node.items) == 3:
        return _without_conditions(node.items[2])
    return SList([_without_conditions(item) for item in node.items], node.line, node.col)


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
