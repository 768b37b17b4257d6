"""Reading PDDL: one normalising step, the model check, then the ``pddl`` package.

Real files are sloppy (upper-case keywords, ``=`` without ``:equality``, glued tokens such
as ``(aircraft?a)``, missing ``:requirements``, duplicate parameter names in predicate
declarations). ``pddl`` 0.5.1 rejects some of these and silently accepts undeclared
predicates. Every workaround lives in :func:`normalise`, applied to every file alike.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from asg.planning.check import Diagnostic, check_domain, check_problem
from asg.planning.errors import ModelError, PDDLError, PDDLSyntaxError, UnsupportedRequirementError
from asg.planning.sexpr import SList, Token, parse_sexprs, read_text, render_with_lines
from asg.planning.structure import (DomainShape, ProblemShape, atom_uses, define_kind, read_domain,
                                   read_problem)

log = logging.getLogger(__name__)

SUPPORTED = (":strips", ":typing", ":negative-preconditions", ":equality")

# Keyword -> the requirement that keyword needs; asg refuses all of these.
UNSUPPORTED_KEYWORDS = {
    "when": ":conditional-effects",
    "forall": ":universal-preconditions",
    "exists": ":existential-preconditions",
    "or": ":disjunctive-preconditions",
    "imply": ":disjunctive-preconditions",
    "increase": ":numeric-fluents",
    "decrease": ":numeric-fluents",
    "assign": ":numeric-fluents",
    "scale-up": ":numeric-fluents",
    "scale-down": ":numeric-fluents",
    ":functions": ":numeric-fluents",
    ":derived": ":derived-predicates",
    ":durative-action": ":durative-actions",
    ":constraints": ":constraints",
    "preference": ":preferences",
    "oneof": ":non-deterministic",
}


@dataclass
class Model:
    """A parsed planning model: the ``pddl`` objects plus the checked source shapes."""

    domain: object  # pddl.core.Domain
    problem: object | None  # pddl.core.Problem
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
    """Parse a domain and its problem (both may stand in ``domain_path``)."""
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
        diagnostics = _declare_undeclared(dshape, diagnostics)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        first = errors[0]
        raise ModelError(first.message, first.path, first.line, first.col)
    _set_requirements(dshape, pshape)
    domain = _pddl_parse("domain", render_with_lines(domain_form), dpath)
    problem = _pddl_parse("problem", render_with_lines(problem_form), ppath) if problem_form else None
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
    effects = {id(sub) for eff in _effect_parts(form) for sub in eff.walk()}
    for node in form.walk():
        head = node.head()
        if head in UNSUPPORTED_KEYWORDS and node is not form:
            if head == "or" and _inside_requirements(form, node):
                continue
            requirement = UNSUPPORTED_KEYWORDS[head]
            if head == "forall" and id(node) in effects:
                requirement = ":conditional-effects"
            raise UnsupportedRequirementError(
                f"unsupported requirement {requirement}: '{head}' is not supported "
                f"(asg reads STRIPS with {', '.join(SUPPORTED[1:])})", path, node.line, node.col)
        if head == "not" and len(node.items) == 2 and isinstance(node.items[1], SList):
            inner = node.items[1].head()
            if inner in ("and", "or", "not", "imply", "forall", "exists"):
                raise UnsupportedRequirementError(
                    f"unsupported requirement :disjunctive-preconditions: negation of '{inner}'",
                    path, node.line, node.col)


def _effect_parts(form: SList) -> list[SList]:
    """The :effect formulas of every action in ``form``."""
    out = []
    for node in form.walk():
        for key, value in zip(node.items, node.items[1:]):
            if isinstance(key, Token) and key.text == ":effect" and isinstance(value, SList):
                out.append(value)
    return out


def _inside_requirements(form: SList, node: SList) -> bool:
    return any(sub.head() == ":requirements" and node in sub.items for sub in form.walk())


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


def _declare_undeclared(domain: DomainShape, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """--lenient: declare each undeclared predicate with the arity of its first use."""
    out: list[Diagnostic] = []
    declared: set[str] = set()
    arities = _first_use_arities(domain)
    for diag in diagnostics:
        if diag.code != "undeclared-predicate":
            out.append(diag)
            continue
        name = diag.message.split("'")[1]
        if name not in declared:
            declared.add(name)
            arity = arities.get(name, 0)
            node = domain.predicates_node
            if node is None:
                node = SList([Token(":predicates", domain.node.line, domain.node.col)],
                             domain.node.line, domain.node.col)
                domain.node.items.insert(2, node)
                domain.predicates_node = node
            decl = SList([Token(name, node.line, node.col)] +
                         [Token(f"?x{i}", node.line, node.col) for i in range(arity)], node.line, node.col)
            node.items.append(decl)
            domain.predicates[name] = (decl.items[0], [])
        out.append(Diagnostic("warning", diag.message + " (declared by --lenient)", diag.path, diag.line,
                              diag.col, diag.code))
    return out


def _first_use_arities(domain: DomainShape) -> dict[str, int]:
    arities: dict[str, int] = {}
    for action in domain.actions:
        for use in atom_uses(action.precondition, "") + atom_uses(action.effect, ""):
            arities.setdefault(use.predicate.text, len(use.args))
    return arities


def _set_requirements(domain: DomainShape, problem: ProblemShape | None) -> None:
    """Declare exactly the supported requirements the files use (``pddl`` checks them)."""
    used = {":strips"}
    if domain.types or any(p.types != ("object",) for p in _all_typed(domain, problem)):
        used.add(":typing")
    for form in (domain.node, problem.node if problem else None):
        if form is None:
            continue
        for node in form.walk():
            if node.head() == "=":
                used.add(":equality")
            if node.head() == "not":
                used.add(":negative-preconditions")
    tokens = [Token(req, domain.node.line, domain.node.col) for req in SUPPORTED if req in used]
    if domain.requirements is not None:
        domain.requirements.items = [domain.requirements.items[0]] + [
            Token(t.text, domain.requirements.line, domain.requirements.col) for t in tokens]
    else:
        header = domain.node.items[1]
        section = SList([Token(":requirements", header.line, header.col)] + tokens, header.line, header.col)
        domain.node.items.insert(2, section)
        domain.requirements = section
    if problem is not None:
        problem.node.items = [item for item in problem.node.items
                              if not (isinstance(item, SList) and item.head() == ":requirements")]


def _all_typed(domain: DomainShape, problem: ProblemShape | None):
    yield from domain.constants
    for _, params in domain.predicates.values():
        yield from params
    for action in domain.actions:
        yield from action.parameters
    if problem is not None:
        yield from problem.objects


def _pddl_parse(kind: str, text: str, path: str):
    from lark.exceptions import LarkError, UnexpectedInput

    parser = _parser(kind)
    try:
        return parser(text)
    except UnexpectedInput as err:
        detail = str(err).splitlines()[0]
        raise PDDLSyntaxError(f"cannot parse {kind}: {detail}", path, err.line, err.column) from None
    except LarkError as err:
        cause = err.__context__ or err
        raise ModelError(f"invalid {kind}: {_one_line(cause)}", path) from None
    except Exception as err:  # pddl raises plain exceptions for semantic problems
        raise ModelError(f"invalid {kind}: {_one_line(err)}", path) from None


_PARSERS: dict[str, object] = {}


def _parser(kind: str):
    """One ``pddl`` parser per kind: building its grammar costs more than parsing a file."""
    if kind not in _PARSERS:
        from lark import Lark, Transformer
        from pddl.parser import GRAMMAR_FILE, PARSERS_DIRECTORY
        from pddl.parser.domain import DomainParser
        from pddl.parser.problem import ProblemParser

        cls = DomainParser if kind == "domain" else ProblemParser
        parser = cls.__new__(cls)
        Transformer.__init__(parser)
        parser._transformer = cls.transformer_cls()
        # Same grammar and options as pddl's own constructor, plus lark's on-disk cache of the
        # LALR tables: building them dominates a short `asg` run (~0.4 s per parser).
        parser._parser = Lark(GRAMMAR_FILE.read_text(), parser="lalr", import_paths=[PARSERS_DIRECTORY],
                              start=cls.start_symbol, transformer=parser._transformer, cache=True)
        _PARSERS[kind] = parser
    return _PARSERS[kind]


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
