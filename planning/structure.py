"""The shape of a PDDL domain and problem read off the s-expressions, with positions.

This is what the normaliser and the model check work on: declared types, predicates,
constants and objects, and every atom used in actions, init and goal, each with the token
that names it (for ``FILE:LINE:COL``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from asg.planning.errors import PDDLSyntaxError
from asg.planning.sexpr import Node, SList, Token

# Keywords of goal/precondition/effect formulas that are not predicate names.
CONNECTIVES = {"and", "not", "or", "imply", "when", "forall", "exists", "=",
               "increase", "decrease", "assign", "scale-up", "scale-down",
               "<", ">", "<=", ">=", "+", "-", "*", "/", "preference", "oneof"}


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


def typed_list(items: list[Node], path: str | None, default: str = "object") -> list[Typed]:
    """Read ``a b - t c - (either t1 t2) d`` into Typed entries (untyped names get ``default``)."""
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
                if kind.head() != "either":
                    raise PDDLSyntaxError("expected a type or (either ...)", path, kind.line, kind.col)
                types = tuple(t.text.lower() for t in kind.items[1:] if isinstance(t, Token))
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
    """Collect the declarations of a domain ``define`` form."""
    _, name = define_kind(form, path)
    shape = DomainShape(name=name, node=form)
    for section in form.items[2:]:
        if not isinstance(section, SList) or section.head() is None:
            where = section if isinstance(section, Token) else section
            raise PDDLSyntaxError("expected a (:section ...) in the domain", path, where.line, where.col)
        head = section.head()
        if head == ":requirements":
            shape.requirements = section
        elif head == ":types":
            shape.types = typed_list(section.items[1:], path)
            shape.types_node = section
        elif head == ":constants":
            shape.constants = typed_list(section.items[1:], path)
        elif head == ":predicates":
            shape.predicates_node = section
            for decl in section.items[1:]:
                if not isinstance(decl, SList) or decl.head() is None:
                    raise PDDLSyntaxError("expected (predicate ?args ...)", path, decl.line, decl.col)
                shape.predicates[decl.head()] = (decl.items[0], typed_list(decl.items[1:], path))
        elif head == ":action":
            if len(section.items) < 2 or not isinstance(section.items[1], Token):
                raise PDDLSyntaxError("action without a name", path, section.line, section.col)
            body = _keyword_args(section.items[2:])
            params = body.get(":parameters")
            shape.actions.append(ActionShape(
                name=section.items[1],
                parameters=typed_list(params.items, path) if isinstance(params, SList) else [],
                precondition=body.get(":precondition"),
                effect=body.get(":effect"),
                node=section,
            ))
        else:
            shape.other_sections.append(section)
    return shape


def read_problem(form: SList, path: str | None) -> ProblemShape:
    """Collect objects, init and goal of a problem ``define`` form."""
    _, name = define_kind(form, path)
    shape = ProblemShape(name=name, node=form)
    for section in form.items[2:]:
        if not isinstance(section, SList) or section.head() is None:
            raise PDDLSyntaxError("expected a (:section ...) in the problem", path, section.line, section.col)
        head = section.head()
        if head == ":domain" and len(section.items) == 2 and isinstance(section.items[1], Token):
            shape.domain_name = section.items[1]
        elif head == ":objects":
            shape.objects = typed_list(section.items[1:], path)
        elif head == ":init":
            shape.init = section.items[1:]
            shape.init_node = section
        elif head == ":goal":
            shape.goal = section.items[1] if len(section.items) > 1 else None
        else:
            shape.other_sections.append(section)
    return shape


def atom_uses(node: Node | None, where: str, negated: bool = False) -> list[Use]:
    """Every predicate application inside a formula (connectives and quantifiers skipped)."""
    if node is None or isinstance(node, Token):
        return []
    head = node.head()
    if head is None:
        return [use for item in node.items for use in atom_uses(item, where, negated)]
    if head in ("forall", "exists"):
        return [use for item in node.items[2:] for use in atom_uses(item, where, negated)]
    if head == "not":
        return [use for item in node.items[1:] for use in atom_uses(item, where, not negated)]
    if head in CONNECTIVES:
        return [use for item in node.items[1:] for use in atom_uses(item, where, negated)]
    args = [item for item in node.items[1:] if isinstance(item, Token)]
    return [Use(node.items[0], args, where, negated)]
