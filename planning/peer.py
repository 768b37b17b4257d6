"""Fast Downward's own landmark factories as the peer asg must agree with.

Runs the FD build shipped in ``up-fast-downward`` on a task, reads the landmark graph it
dumps with ``verbosity=debug``, and compares it with asg's. Only what FD's translator
changes is normalised, and every normalisation is listed here:

* FD prints ``Atom on(b, a)`` / ``NegatedAtom alarm()``; asg prints ``(on b a)`` /
  ``(not (alarm))``. Conjunctive landmarks print as ``A & B``, disjunctive ones (``lm_rhw``)
  as ``A | B``; both become the set of their atoms (one factory never gives both kinds).
* The translator compiles static facts away, so asg's static landmarks (nullary
  propositions no action changes, e.g. Mario's ``at-upper-platform``) are dropped before
  comparing, together with the orderings through them.
* The translator's invariant synthesis groups facts into multi-valued variables, which
  drops operators whose preconditions it proves mutex and so changes the h^m fixpoint
  (barman: ``(handempty left)``). ``encoding="binary"`` turns invariant synthesis off
  (``--invariant-generation-max-candidates 0``), giving FD the same STRIPS semantics asg
  uses; ``encoding="default"`` keeps FD's own choice, for reporting.
* ``lm_rhw`` keeps the first of two overlapping disjunctive landmarks it finds, so its graph
  depends on the translator's variable numbering; asg's rhw computes the same numbering
  (``asg.planning.landmarks.fd_order``), and :attr:`PeerGraph.variable_order` (read from
  ``output.sas``) lets a comparison hand FD's own numbering to ``rhw_landmarks(task, order)``.
* ``lm_zg`` and ``lm_rhw`` run, as in FD's landmark heuristics, on the task with default-value
  axioms for derived atoms; asg's factories add the same axioms.
* Natural orderings are thinned by FD in an order-dependent way, so orderings are compared
  by their transitive closure; greedy-necessary edges are also compared one by one.

Each FD call gets its own working directory: the driver writes ``output.sas`` to the cwd,
and two concurrent calls in one directory corrupt each other's answer.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from asg.planning.errors import PlannerError
from asg.planning.landmark_graph import LandmarkGraph
from asg.planning.sexpr import parse_sexprs, read_text, render
from asg.planning.structure import define_kind
from asg.planning.task import Atom

_NODE = re.compile(r'^\s*lm(\d+) \[label="(.*?)"((?:, style=\w+)*)\];$')
_EDGE = re.compile(r'^\s*lm(\d+) -> lm(\d+) \[label="(\w+)"(?:, style=\w+)*\];$')
_FACT = re.compile(r"^(Atom|NegatedAtom) ([^()]+)\((.*)\)$")
_VARIABLE = re.compile(r"begin_variable\n(.*?)end_variable", re.S)
_KINDS = {"gn": "greedy-necessary", "n": "natural", "r": "reasonable", "nec": "necessary"}


@dataclass
class PeerGraph:
    """FD's landmark graph in asg's vocabulary: landmarks are frozensets of atom strings."""

    landmarks: set[frozenset[str]]
    goal: set[frozenset[str]]
    initially_true: set[frozenset[str]]
    orderings: set[tuple[frozenset[str], frozenset[str], str]]
    seconds: float  # wall time of the whole FD run (translate + factory)
    disjunctive: set[frozenset[str]] = field(default_factory=set)
    # The translator's variable numbering (atom -> variable), from output.sas: the order in
    # which lm_rhw expands goals and new landmarks (asg's rhw takes it as ``order``).
    variable_order: dict[Atom, int] = field(default_factory=dict)


@dataclass
class Comparison:
    """Where asg and FD agree and differ on one task."""

    missing: set[frozenset[str]] = field(default_factory=set)  # FD has, asg lacks
    extra: set[frozenset[str]] = field(default_factory=set)  # asg has, FD lacks
    closure_missing: set[tuple] = field(default_factory=set)
    closure_extra: set[tuple] = field(default_factory=set)
    gn_missing: set[tuple] = field(default_factory=set)
    gn_extra: set[tuple] = field(default_factory=set)
    reasonable_missing: set[tuple] = field(default_factory=set)  # beyond the sound closure
    reasonable_extra: set[tuple] = field(default_factory=set)

    @property
    def landmarks_equal(self) -> bool:
        return not self.missing and not self.extra

    @property
    def orderings_equal(self) -> bool:
        return not (self.closure_missing or self.closure_extra or self.gn_missing or self.gn_extra)


def fd_driver() -> Path:
    """Path of the Fast Downward driver inside the up-fast-downward package."""
    import up_fast_downward

    driver = Path(up_fast_downward.__file__).parent / "downward" / "fast-downward.py"
    if not driver.is_file():
        raise PlannerError(f"Fast Downward driver not found at {driver}")
    return driver


FD_FACTORIES = {"hm": "lm_hm(m={m})", "rhw": "lm_rhw()", "zg": "lm_zg()"}


def fd_factory_string(factory: str = "hm", m: int = 1, reasonable: bool = False) -> str:
    """FD's landmark factory option for asg's factory name, dumping its graph (verbosity=debug)."""
    if factory not in FD_FACTORIES:
        raise ValueError(f"unknown landmark factory {factory!r}; choose from {sorted(FD_FACTORIES)}")
    inner = FD_FACTORIES[factory].format(m=m)
    if reasonable:
        return f"lm_reasonable_orders_hps({inner}, verbosity=debug)"
    return inner[:-1] + (", " if inner[-2] != "(" else "") + "verbosity=debug)"


def fd_landmarks(domain_text: str, problem_text: str, m: int = 1, reasonable: bool = False,
                 timeout: float | None = None, encoding: str = "binary", factory: str = "hm") -> PeerGraph:
    """Run FD's ``lm_hm(m)``, ``lm_rhw`` or ``lm_zg`` (wrapped in ``lm_reasonable_orders_hps`` if
    asked) and read its graph."""
    search = f"eager_greedy([landmark_sum({fd_factory_string(factory, m, reasonable)})], bound=0)"
    if encoding not in ("binary", "default"):
        raise ValueError(f"encoding must be 'binary' or 'default', not {encoding!r}")
    translate = ["--translate-options", "--invariant-generation-max-candidates", "0"] if encoding == "binary" else []
    with tempfile.TemporaryDirectory(prefix="asg-fd-") as workdir:
        Path(workdir, "domain.pddl").write_text(domain_text)
        Path(workdir, "problem.pddl").write_text(problem_text)
        start = time.perf_counter()
        # the driver starts the translator and the search as its own children: on a timeout the
        # whole process group goes, or a translator left behind keeps growing (gigabytes on
        # organic-synthesis-sat18)
        proc = subprocess.Popen(
            [sys.executable, str(fd_driver()), "--keep-sas-file", "domain.pddl", "problem.pddl", *translate,
             "--search-options", "--search", search],
            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env={**os.environ, "PYTHONHASHSEED": "0"})
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise PlannerError(f"Fast Downward landmark run exceeded {timeout} s") from None
        except BaseException:  # Ctrl-C: nothing of FD outlives the caller
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        seconds = time.perf_counter() - start
        sas = Path(workdir, "output.sas")
        order = _variable_order(sas.read_text()) if sas.is_file() else {}
    dump = _dump_lines(stdout)
    if dump is None:
        tail = (stdout + stderr).strip().splitlines()[-3:]
        raise PlannerError(f"Fast Downward printed no landmark graph (exit {proc.returncode}): {' | '.join(tail)}")
    graph = _parse_dump(dump, seconds)
    graph.variable_order = order
    return graph


def _variable_order(sas: str) -> dict[Atom, int]:
    """atom -> its variable's number in the translator's output (positive atoms only)."""
    order: dict[Atom, int] = {}
    for number, block in enumerate(_VARIABLE.findall(sas)):
        for line in block.splitlines()[3:]:
            match = _FACT.match(line.strip())
            if match is not None and match.group(1) == "Atom":
                args = tuple(a.strip() for a in match.group(3).split(",") if a.strip())
                order.setdefault(Atom(match.group(2).strip(), args), number)
    return order


def _dump_lines(stdout: str) -> list[str] | None:
    lines = stdout.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if "Dumping landmark graph" in line)
        end = next(i for i, line in enumerate(lines) if "Landmark graph end" in line)
    except StopIteration:
        return None
    return lines[start + 1:end]


def _fact(text: str) -> str:
    match = _FACT.match(text.strip())
    if match is None:
        raise PlannerError(f"unexpected fact in FD's landmark dump: {text!r}")
    kind, predicate, args = match.groups()
    parts = [predicate.strip()] + [a.strip() for a in args.split(",") if a.strip()]
    atom = "(" + " ".join(parts) + ")"
    return f"(not {atom})" if kind == "NegatedAtom" else atom


def _parse_dump(lines: list[str], seconds: float) -> PeerGraph:
    nodes: dict[int, frozenset[str]] = {}
    goal, init, disjunctive, edges = set(), set(), set(), []
    for line in lines:
        if (node := _NODE.match(line)) is not None:
            ident, label, styles = node.groups()
            parts = label.split(" | ")
            atoms = frozenset(_fact(part) for part in (parts if len(parts) > 1 else label.split(" & ")))
            if len(parts) > 1:
                disjunctive.add(atoms)
            nodes[int(ident)] = atoms
            if "style=filled" in styles:
                goal.add(atoms)
            if "style=bold" in styles:
                init.add(atoms)
        elif (edge := _EDGE.match(line)) is not None:
            edges.append((int(edge.group(1)), int(edge.group(2)), _KINDS[edge.group(3)]))
    orderings = {(nodes[u], nodes[v], kind) for u, v, kind in edges}
    return PeerGraph(set(nodes.values()), goal, init, orderings, seconds, disjunctive)


def asg_view(graph: LandmarkGraph) -> PeerGraph:
    """asg's graph in the peer's terms, with static facts removed as FD's translator does."""
    task = graph.task
    added = {a for op in task.operators for a in op.all_add()} | {rule.head for rule in task.axioms}
    deleted = {a for op in task.operators for a in op.all_delete()} | {rule.head for rule in task.axioms}

    def constant(atom) -> bool:
        # true from the start and never deleted, or false and never added: FD drops its variable;
        # (not p) is constant where p is (rhw finds complements of atoms no precondition negates)
        atom = atom.positive()
        return (atom in task.init and atom not in deleted) or (atom not in task.init and atom not in added)

    def kept(lm) -> bool:
        return not any(constant(a) for a in lm.atoms)

    atoms = {lm.id: frozenset(lm.atom_strings()) for lm in graph.landmarks}
    keep = {lm.id for lm in graph.landmarks if kept(lm)}
    orderings = {(atoms[o.source], atoms[o.target], o.kind)
                 for o in graph.orderings + graph.reasonable if o.source in keep and o.target in keep}
    return PeerGraph(
        landmarks={atoms[i] for i in keep},
        goal={atoms[lm.id] for lm in graph.landmarks if lm.goal and lm.id in keep},
        initially_true={atoms[lm.id] for lm in graph.landmarks if lm.initially_true and lm.id in keep},
        orderings=orderings, seconds=graph.seconds,
        disjunctive={atoms[lm.id] for lm in graph.landmarks if lm.kind == "disjunctive" and lm.id in keep})


def compare(ours: PeerGraph, theirs: PeerGraph) -> Comparison:
    """Landmark sets exactly; sound orderings by transitive closure; gn edges one by one."""
    result = Comparison(missing=theirs.landmarks - ours.landmarks, extra=ours.landmarks - theirs.landmarks)
    ours_closure, theirs_closure = _closure(ours), _closure(theirs)
    result.closure_missing = theirs_closure - ours_closure
    result.closure_extra = ours_closure - theirs_closure
    ours_gn = {(u, v) for u, v, k in ours.orderings if k == "greedy-necessary"}
    theirs_gn = {(u, v) for u, v, k in theirs.orderings if k == "greedy-necessary"}
    result.gn_missing = theirs_gn - ours_gn
    result.gn_extra = ours_gn - theirs_gn
    # A reasonable edge parallel to a chain of sound orderings says nothing new; FD keeps
    # such edges when its (order-dependent) natural-edge thinning left no direct edge.
    ours_r = {(u, v) for u, v, k in ours.orderings if k == "reasonable"} - theirs_closure
    theirs_r = {(u, v) for u, v, k in theirs.orderings if k == "reasonable"} - theirs_closure
    result.reasonable_missing = theirs_r - ours_r
    result.reasonable_extra = ours_r - theirs_r
    return result


def _closure(graph: PeerGraph) -> set[tuple]:
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(graph.landmarks)
    dag.add_edges_from((u, v) for u, v, kind in graph.orderings if kind != "reasonable")
    return {(u, v) for u in dag.nodes for v in nx.descendants(dag, u)}


def pddl_texts(domain_path: str | Path, problem_path: str | Path | None = None) -> tuple[str, str]:
    """Domain and problem text for FD, splitting a file that holds both ``define`` forms."""
    domain_text = read_text(str(domain_path))
    if problem_path is not None:
        return domain_text, read_text(str(problem_path))
    forms = {define_kind(f, str(domain_path))[0]: f for f in parse_sexprs(domain_text, str(domain_path))}
    if "problem" not in forms:
        raise PlannerError(f"{domain_path}: no problem to give Fast Downward")
    return render(forms["domain"]), render(forms["problem"])
