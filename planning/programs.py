"""The program library compiler: a PDDL model plus a declared hierarchy -> ``Program`` objects.

The model's actions are the atomic programs; the non-atomic ones are declared in structured
comments (``;; @program ...``; the format is documented at the top of
``pddl_models/fetch_programs.pddl``). Compiling expands every family over the objects and
gives frozen :class:`Program` values with a level, the programs each may call, and a
pre-condition φ and post-condition ψ over ground atoms. φ and ψ are kept in disjunctive normal
form (:class:`Formula`), so a post-condition with free choices ("all four blocks in one tower,
in any order") is a real disjunction, not one fixed order.

``ProgramLibrary.landmarks(name)`` builds the planning task "reach ψ" for a program (one goal
action per disjunct of ψ, all adding ``(program-done)``) and returns the planning core's
landmark graph: the subgoals every execution must pass through. Pure Python, no numpy.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path

from asg.pddl_models import path as bundled_path
from asg.planning.errors import ModelError
from asg.planning.grounding import ground
from asg.planning.landmarks import compute_landmarks
from asg.planning.parse import parse_files, parse_text
from asg.planning.sexpr import Node, SList, Token, parse_sexprs, render
from asg.planning.structure import atom_uses, typed_list
from asg.planning.task import Atom, Task

DONE = Atom("program-done")


class ProgramError(ModelError):
    """A program declaration that cannot be compiled (bad directive, formula or hierarchy)."""


@dataclass(frozen=True, order=True)
class Clause:
    """A conjunction of literals: every ``pos`` atom true and every ``neg`` atom false."""

    pos: frozenset[Atom] = frozenset()
    neg: frozenset[Atom] = frozenset()

    def holds(self, atoms: frozenset[Atom] | set[Atom]) -> bool:
        return self.pos <= atoms and not (self.neg & atoms)

    def literals(self) -> list[str]:
        return sorted(map(str, self.pos)) + [f"(not {a})" for a in sorted(map(str, self.neg))]

    def __str__(self) -> str:
        lits = self.literals()
        return lits[0] if len(lits) == 1 else "(and" + "".join(" " + lit for lit in lits) + ")"


@dataclass(frozen=True)
class Formula:
    """A condition in disjunctive normal form; no clauses = false, one empty clause = true."""

    clauses: tuple[Clause, ...]

    @staticmethod
    def true() -> Formula:
        return Formula((Clause(),))

    def holds(self, atoms) -> bool:
        """Whether the condition is true in the state given as its set of true atoms."""
        atoms = atoms if isinstance(atoms, (set, frozenset)) else frozenset(atoms)
        return any(c.holds(atoms) for c in self.clauses)

    def atoms(self) -> frozenset[Atom]:
        """Every atom the condition mentions."""
        return frozenset(a for c in self.clauses for a in c.pos | c.neg)

    def __str__(self) -> str:
        if len(self.clauses) == 1:
            return str(self.clauses[0])
        return "(or" + "".join(" " + str(c) for c in self.clauses) + ")"


@dataclass(frozen=True)
class Program:
    """One program of the library, its arguments expanded."""

    name: str
    family: str
    level: int
    arguments: tuple[str, ...]
    calls: tuple[str, ...]
    pre: Formula
    post: Formula
    description: str = ""
    action: str | None = None  # the PDDL action call of an atomic program, e.g. "(stack b0 b1)"

    @property
    def atomic(self) -> bool:
        return self.level == 0

    def to_json(self) -> dict:
        return {"name": self.name, "family": self.family, "level": self.level,
                "arguments": list(self.arguments), "calls": list(self.calls), "pre": str(self.pre),
                "post": str(self.post), "description": self.description, "action": self.action}


@dataclass(frozen=True)
class ProgramLibrary:
    """All programs of a model, atomic first, in declaration order."""

    programs: tuple[Program, ...]
    path: str
    domain_form: SList = field(repr=False, compare=False)
    domain_name: str = ""
    static: frozenset[Atom] = field(repr=False, default=frozenset())
    init: frozenset[Atom] = field(repr=False, default=frozenset())
    predicates: tuple[str, ...] = ()
    _cache: dict = field(default_factory=dict, repr=False, compare=False, hash=False)

    def __len__(self) -> int:
        return len(self.programs)

    def __iter__(self):
        return iter(self.programs)

    def get(self, name: str) -> Program:
        """The program called ``name`` (case-insensitive); KeyError otherwise."""
        key = name.lower()
        for program in self.programs:
            if program.name.lower() == key:
                return program
        raise KeyError(name)

    def index(self, name: str) -> int:
        return self.programs.index(self.get(name))

    @property
    def atomic(self) -> tuple[Program, ...]:
        return tuple(p for p in self.programs if p.atomic)

    @property
    def non_atomic(self) -> tuple[Program, ...]:
        return tuple(p for p in self.programs if not p.atomic)

    def to_json(self) -> dict:
        return {"programs": [p.to_json() for p in self.programs]}

    def program_task(self, name: str, init: frozenset[Atom] | None = None) -> Task:
        """The STRIPS task "reach ψ(name)" from ``init`` (default: the model's :init)."""
        program = self.get(name)
        state = self.init if init is None else frozenset(a for a in init if a.predicate in self.predicates)
        domain = _goal_domain(self.domain_form, program.post)
        facts = " ".join(str(a) for a in sorted(state | self.static))
        problem = (f"(define (problem reach-{program.name.lower()}) (:domain {self.domain_name})"
                   f" (:init {facts}) (:goal {DONE}))")
        return ground(parse_text(domain, problem, name=f"{self.path}#{program.name}"))

    def landmarks(self, name: str, init: frozenset[Atom] | None = None):
        """The planning core's landmark graph of ``name`` from ``init`` (cached)."""
        key = (self.get(name).name, None if init is None else frozenset(init))
        if key not in self._cache:
            self._cache[key] = compute_landmarks(self.program_task(name, init))
        return self._cache[key]

    def subgoals(self, name: str, init: frozenset[Atom] | None = None) -> list[Atom]:
        """Atoms every execution of ``name`` must make true, in one order the graph allows."""
        return [a for lm in self.landmarks(name, init).subgoals() for a in sorted(lm.atoms) if a != DONE]


def _goal_domain(domain_form: SList, post: Formula) -> str:
    """The domain plus ``(program-done)`` and one action per disjunct of ``post``."""
    parts = []
    for item in domain_form.items:
        text = render(item)
        if isinstance(item, SList) and item.head() == ":predicates":
            text = text[:-1] + f" {DONE})"
        parts.append(text)
    for k, clause in enumerate(post.clauses):
        lits = " ".join(clause.literals())
        parts.append(f"(:action reach_{k} :parameters () :precondition (and {lits}) :effect {DONE})")
    return "(" + " ".join(parts) + ")"


# -- compiling ---------------------------------------------------------------------------
DIRECTIVE = re.compile(r"^\s*;+\s*@([a-z_-]+)\b\s*(.*)$", re.IGNORECASE)
CONTINUATION = re.compile(r"^\s*;+\s?(.*)$")
FAMILY_KEYS = {"level", "action", "calls", "pre", "post", "expand", "description"}


@dataclass
class _Directive:
    key: str
    value: str
    line: int
    col: int


def read_directives(text: str) -> list[_Directive]:
    """The ``@key value`` comment directives of a file, continuation lines joined."""
    out: list[_Directive] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = DIRECTIVE.match(line)
        if match:
            out.append(_Directive(match.group(1).lower(), match.group(2).strip(), number, match.start(2) + 1))
            continue
        more = CONTINUATION.match(line)
        if more and out and out[-1].line + out[-1].value.count("\n") == number - 1 and more.group(1).strip():
            out[-1].value += "\n" + more.group(1).strip()
    return out


def compile_library(path: str | Path) -> ProgramLibrary:
    """Parse, check and expand the program library declared in ``path``."""
    path = str(path)
    model = parse_files(path)
    directives = read_directives(Path(path).read_text())
    ctx = _Context.build(model, path, directives)
    families = sorted(_families(directives, ctx), key=lambda f: f.checked_level)
    instances = {fam.name: fam.instances(ctx) for fam in families}
    possible = _possible_atoms([p for ps in instances.values() for p in ps], ctx)
    levels = {fam.name: fam.checked_level for fam in families}
    programs = []
    for fam in families:
        callees = (fam.calls if fam.calls is not None
                   else [f.name for f in families if f.checked_level < fam.checked_level])
        for callee in callees:
            if callee not in levels:
                raise ProgramError(f"{fam.name} calls unknown program family {callee!r}", path, fam.line)
            if levels[callee] >= fam.checked_level:
                raise ProgramError(f"{fam.name} (level {fam.level}) may not call {callee} "
                                   f"(level {levels[callee]})", path, fam.line)
        calls = tuple(p.name for callee in callees for p in instances[callee])
        programs += [replace(p, calls=calls, pre=_prune(p.pre, possible), post=_prune(p.post, possible))
                     for p in instances[fam.name]]
    shape = model.domain_shape
    assert shape is not None  # parse_files always keeps the domain's shape
    return ProgramLibrary(tuple(programs), path, shape.node, shape.name.text.lower(), ctx.static,
                          ctx.init_fluents, tuple(sorted(ctx.arity)))


@cache
def load_library(path: str) -> ProgramLibrary:
    """:func:`compile_library`, cached per path."""
    return compile_library(path)


@lru_cache(maxsize=1)
def fetch_library() -> ProgramLibrary:
    """The AlphaNPI-X Fetch library (``pddl_models/fetch_programs.pddl``): 20 + 7 programs."""
    return load_library(str(bundled_path("fetch_programs")))


@dataclass
class _Context:
    """What formulas are compiled against: objects, predicate arities, static truth."""

    path: str
    objects: dict[str, str]      # object -> type
    arity: dict[str, int]
    static_preds: frozenset[str]
    static: frozenset[Atom]
    init_fluents: frozenset[Atom]
    actions: dict
    changed: frozenset[str] = frozenset()
    display: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def build(model, path: str, directives: list[_Directive]) -> _Context:
        dom, prob = model.domain_shape, model.problem_shape
        objects = {t.name: t.types[0] for t in dom.constants + (prob.objects if prob else [])}
        arity = {name: len(params) for name, (_, params) in dom.predicates.items()}
        changed = {u.predicate.text.lower() for a in dom.actions for u in atom_uses(a.effect, "effect")}
        init = _init_atoms(prob.init if prob else [])
        ctx = _Context(path, objects, arity, frozenset(), frozenset(), frozenset(),
                       {a.name.text.lower(): a for a in dom.actions}, frozenset(changed))
        observed = set()
        for d in directives:
            if d.key == "observed":
                observed |= set(d.value.lower().split())
            elif d.key == "display":
                for pair in d.value.split():
                    obj, _, shown = pair.partition("=")
                    ctx.display[obj.lower()] = shown
        ctx.static_preds = frozenset(set(arity) - changed - observed)
        ctx.static = frozenset(a for a in init if a.predicate in ctx.static_preds)
        ctx.init_fluents = init - ctx.static
        return ctx

    def objects_of(self, kind: str) -> list[str]:
        return [o for o, t in self.objects.items() if t == kind]


def _init_atoms(init: list[Node]) -> frozenset[Atom]:
    """The atoms listed true in a checked ``:init``; a ``(not ...)`` entry is dropped, as parsing drops it."""
    atoms = set()
    for node in init:
        head = node.head() if isinstance(node, SList) else None
        if isinstance(node, SList) and head is not None and head != "not":
            atoms.add(Atom(head, tuple(t.text.lower() for t in node.items[1:] if isinstance(t, Token))))
    return frozenset(atoms)


@dataclass
class _Family:
    name: str
    line: int
    params: list = field(default_factory=list)  # [(var, type)]
    level: int | None = None
    action: str | None = None
    calls: list[str] | None = None
    pre: _Directive | None = None
    post: _Directive | None = None
    expand: list[str] | None = None
    description: str = ""

    @property
    def checked_level(self) -> int:
        """``level``, which :func:`_check_family` has made sure is given."""
        assert self.level is not None, f"{self.name}: level read before _check_family"
        return self.level

    def instances(self, ctx: _Context) -> list[Program]:
        names = [v for v, _ in self.params]
        order = names if self.expand is None else self.expand
        if sorted(order) != sorted(names):
            raise ProgramError(f"@expand of {self.name} must list exactly {names}", ctx.path, self.line)
        types = dict(self.params)
        out = []
        for values in itertools.product(*(ctx.objects_of(types[v]) for v in order)):
            binding = dict(zip(order, values))
            args = tuple(binding[v] for v, _ in self.params)
            pre, post, action = self.conditions(ctx, binding)
            if not pre.clauses:
                continue  # statically impossible (Stack_0_0)
            shown = [ctx.display.get(a, a.upper()) for a in args]
            out.append(Program("_".join([self.name, *shown]), self.name, self.checked_level, args, (),
                               pre, post, self.description, action))
        return out

    def conditions(self, ctx: _Context, binding: dict[str, str]):
        if self.level == 0:
            assert self.action is not None  # _check_family: an atomic family names its action
            act = ctx.actions[self.action]
            pre = _dnf(act.precondition, binding, ctx) if act.precondition is not None else Formula.true()
            adds, dels = _effect(act.effect, binding, ctx)
            call = "(" + " ".join([self.action, *(binding[v] for v, _ in self.params)]) + ")"
            return pre, Formula((Clause(adds, dels - adds),)), call
        return self.formula(self.pre, binding, ctx), self.formula(self.post, binding, ctx), None

    def formula(self, directive: _Directive | None, binding, ctx: _Context) -> Formula:
        if directive is None:
            return Formula.true()
        forms = parse_sexprs("\n" * (directive.line - 1) + " " * (directive.col - 1) + directive.value, ctx.path)
        if len(forms) != 1:
            raise ProgramError(f"@{directive.key} of {self.name} must be one formula", ctx.path, directive.line)
        return _dnf(forms[0], binding, ctx)


def _families(directives: list[_Directive], ctx: _Context) -> list[_Family]:
    families: list[_Family] = []
    for d in directives:
        if d.key in ("display", "observed"):
            continue
        if d.key == "program":
            words = d.value.split()
            if not words:
                raise ProgramError("@program needs a name", ctx.path, d.line, d.col)
            if any(f.name == words[0] for f in families):
                raise ProgramError(f"program family {words[0]} declared twice", ctx.path, d.line, d.col)
            toks = [Token(w, d.line, d.col) for w in words[1:]]
            params = [(t.name, t.types[0]) for t in typed_list(toks, ctx.path)]
            families.append(_Family(words[0], d.line, params))
            continue
        if d.key not in FAMILY_KEYS:
            raise ProgramError(f"unknown directive @{d.key}", ctx.path, d.line, d.col)
        if not families:
            raise ProgramError(f"@{d.key} before any @program", ctx.path, d.line, d.col)
        _set(families[-1], d, ctx)
    for fam in families:
        _check_family(fam, ctx)
    return families


def _set(fam: _Family, d: _Directive, ctx: _Context) -> None:
    if d.key == "level" and not d.value.isdigit():
        raise ProgramError(f"@level must be a number, got {d.value!r}", ctx.path, d.line, d.col)
    value = {"level": lambda v: int(v), "action": str.lower, "calls": str.split,
             "expand": lambda v: v.lower().split(), "description": lambda v: " ".join(v.split())}
    setattr(fam, d.key, value[d.key](d.value) if d.key in value else d)


def _check_family(fam: _Family, ctx: _Context) -> None:
    where = (ctx.path, fam.line)
    if fam.level is None:
        raise ProgramError(f"{fam.name} has no @level", *where)
    for var, kind in fam.params:
        if kind not in set(ctx.objects.values()):
            raise ProgramError(f"{fam.name}: parameter {var} has unknown type {kind!r}", *where)
    if fam.level == 0:
        if fam.action is None or fam.action not in ctx.actions:
            raise ProgramError(f"atomic program {fam.name} needs @action naming one of "
                               f"{sorted(ctx.actions)}", *where)
        if fam.pre or fam.post or fam.calls:
            raise ProgramError(f"atomic program {fam.name} takes pre/post from its action and calls nothing",
                               *where)
        act = ctx.actions[fam.action]
        declared = [(t.name, t.types[0]) for t in act.parameters]
        if declared != fam.params:
            raise ProgramError(f"{fam.name} parameters {fam.params} differ from action {fam.action} "
                               f"{declared}", *where)
    elif fam.action is not None:
        raise ProgramError(f"{fam.name}: only level-0 programs are actions", *where)


def _effect(node: Node | None, binding, ctx: _Context) -> tuple[frozenset[Atom], frozenset[Atom]]:
    adds: set[Atom] = set()
    dels: set[Atom] = set()
    for use in atom_uses(node, "effect"):
        atom = Atom(use.predicate.text.lower(), tuple(_term(t, binding, ctx) for t in use.args))
        (dels if use.negated else adds).add(atom)
    return frozenset(adds), frozenset(dels)


def _term(tok: Node, binding, ctx: _Context) -> str:
    if isinstance(tok, SList):
        raise ProgramError("expected an object or ?variable, not a list", ctx.path, tok.line, tok.col)
    name = tok.text.lower()
    if name.startswith("?"):
        if name not in binding:
            raise ProgramError(f"unbound variable {name}", ctx.path, tok.line, tok.col)
        return binding[name]
    if name not in ctx.objects:
        raise ProgramError(f"unknown object {name}", ctx.path, tok.line, tok.col)
    return name


def _dnf(node: Node, binding: dict[str, str], ctx: _Context) -> Formula:
    """Compile a formula to DNF, deciding static atoms and equality on the spot."""
    if isinstance(node, Token) or node.head() is None:
        raise ProgramError("expected a formula", ctx.path, node.line, node.col)
    head, args = node.head(), node.items[1:]
    if head == "and":
        return _and([_dnf(a, binding, ctx) for a in args])
    if head == "or":
        return _simplify([c for a in args for c in _dnf(a, binding, ctx).clauses])
    if head == "not" and len(args) == 1:
        return _negate(_dnf(args[0], binding, ctx))
    if head == "imply" and len(args) == 2:
        return _simplify(list(_negate(_dnf(args[0], binding, ctx)).clauses) + list(_dnf(args[1], binding, ctx).clauses))
    if head in ("exists", "forall") and len(args) == 2 and isinstance(args[0], SList):
        variables = [(t.name, t.types[0]) for t in typed_list(args[0].items, ctx.path)]
        parts = []
        for values in itertools.product(*(ctx.objects_of(kind) for _, kind in variables)):
            inner = dict(binding, **{v: o for (v, _), o in zip(variables, values)})
            parts.append(_dnf(args[1], inner, ctx))
        if head == "forall":
            return _and(parts)
        return _simplify([c for p in parts for c in p.clauses])
    if head == "=" and len(args) == 2:
        return _const(_term(args[0], binding, ctx) == _term(args[1], binding, ctx))
    if head not in ctx.arity:
        raise ProgramError(f"unknown predicate {head!r}", ctx.path, node.line, node.col)
    if len(args) != ctx.arity[head] or any(isinstance(a, SList) for a in args):
        raise ProgramError(f"{head} takes {ctx.arity[head]} object arguments", ctx.path, node.line, node.col)
    atom = Atom(head, tuple(_term(a, binding, ctx) for a in args))
    if head in ctx.static_preds:
        return _const(atom in ctx.static)
    return Formula((Clause(frozenset({atom})),))


def _possible_atoms(programs: list[Program], ctx: _Context) -> frozenset[Atom]:
    """Atoms a state can hold: the init, what an atomic program adds, any observed atom."""
    added = {a for p in programs if p.atomic for c in p.post.clauses for a in c.pos}
    mentioned = {a for p in programs for a in p.pre.atoms() | p.post.atoms()}
    observed = {a for a in mentioned if a.predicate not in ctx.static_preds and a.predicate not in ctx.changed}
    return frozenset(ctx.init_fluents | added | observed)


def _prune(f: Formula, possible: frozenset[Atom]) -> Formula:
    """Drop literals that no state can falsify, e.g. ``(not (on b0 b0))``."""
    return _simplify([Clause(c.pos, c.neg & possible) for c in f.clauses if c.pos <= possible])


def _const(value: bool) -> Formula:
    return Formula.true() if value else Formula(())


def _and(parts: list[Formula]) -> Formula:
    clauses = [Clause()]
    for part in parts:
        clauses = [Clause(a.pos | b.pos, a.neg | b.neg) for a in clauses for b in part.clauses]
        clauses = list(_simplify(clauses).clauses)
    return _simplify(clauses)


def _negate(f: Formula) -> Formula:
    """¬(C1 ∨ ... ∨ Cn) = ∧ ∨ ¬l, back in DNF."""
    parts = [Formula(tuple([Clause(neg=frozenset({a})) for a in c.pos] + [Clause(pos=frozenset({a})) for a in c.neg]))
             for c in f.clauses]
    return _and(parts)


def _simplify(clauses: list[Clause]) -> Formula:
    """Drop contradictory clauses and clauses implied by smaller ones; sort."""
    unique = sorted({c for c in clauses if not (c.pos & c.neg)}, key=lambda c: (len(c.pos) + len(c.neg), str(c)))
    kept: list[Clause] = []
    for c in unique:
        if not any(k.pos <= c.pos and k.neg <= c.neg for k in kept):
            kept.append(c)
    return Formula(tuple(kept))
