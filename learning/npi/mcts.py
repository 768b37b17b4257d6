"""Recursive MCTS over programs (AlphaNPI, as AlphaNPI-X uses it: B.2, §2.3 of reference_code.md).

Small functions over a tree of :class:`Node`; the environment model and the prior/value function
(an :class:`Evaluator`, e.g. a :class:`~asg.learning.npi.network.NetSnapshot`) come in through a
:class:`SearchContext`.

- A node is a state reached by the program being executed (its *task*) after ``depth`` calls;
  one evaluator call gives its priors, its value and the LSTM state its children continue from.
- Masks: a task may call the programs its ``calls`` list names whose pre-condition holds, and
  Stop (:meth:`ProgramTable.legal`); after :meth:`SearchContext.call_limit` calls (``max_calls``,
  or its level's ``level_max_calls`` entry), only Stop. Priors are renormalised over the legal
  actions; if the evaluator gives them no mass at all they become uniform over the legal actions.
- Selection: argmax over legal actions of Q + c_puct·P·sqrt(N)/(1 + n) + L, with the level
  term L = c_level·exp(-(level(task) - level(callee))) and c_level·exp(-1) for Stop.
- Expansion: an atomic call steps the model; a non-atomic call runs a *new search* for the
  callee from the same state (exploit mode, ``sub_simulations``); Stop ends the branch.
- Values: Stop is worth γ**depth when the task's ψ holds, else ``failure_value`` (−1); a failed
  sub-call is worth −1; any other new node the evaluator's value.
- Acting: the tree policy is N**τ normalised; exploring samples from it, exploiting takes the
  argmax; the chosen child becomes the next root (the tree is reused).

Dirichlet noise (ε, α) is mixed into the priors of every node expanded while exploring, as in
the reference code. Randomness comes only from ``SearchContext.rng``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from asg.learning.errors import ConfigError
from asg.learning.npi.config import SearchConfig
from asg.learning.npi.table import ProgramTable
from asg.learning.world_models.program_models import EnvironmentModel
from asg.planning.task import Atom

MIN_PROBABILITY = 1e-6  # floor of a call's success probability under success_weighting (log 0 is -inf)


class Evaluator(Protocol):
    """The prior/value function: one recurrent step per node."""

    def initial_hidden(self) -> tuple[np.ndarray, np.ndarray]:
        """The recurrent state a program starts from."""

    def evaluate(self, state: np.ndarray, task: int, h: np.ndarray, c: np.ndarray
                 ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """Logits over actions (A,), a value in [-1, 1] and the next recurrent state."""


@dataclass(frozen=True, eq=False)
class Step:
    """One decision of a program: where it was taken, what was legal, the tree policy, the call."""

    action: int
    state: np.ndarray  # (D,) the state the decision was taken in
    legal: np.ndarray  # (A,) bool
    policy: np.ndarray  # (A,) the tree policy π_mcts (the training target)
    call: Trace | None = None  # the callee's own trace, for a non-atomic call


@dataclass(frozen=True, eq=False)
class Trace:
    """One execution of a program: its decisions, the end state and the outcome."""

    task: int
    steps: tuple[Step, ...]
    final_state: np.ndarray
    success: bool
    value: float  # γ**calls on success (times the calls' success probabilities with weighting), failure_value otherwise
    log_p: float = 0.0  # Σ log P(success) of its atomic calls (``SearchConfig.success_weighting``; else 0)

    @property
    def calls(self) -> int:
        """Calls the program made (every step but a final Stop)."""
        return sum(1 for s in self.steps if s.action != len(s.policy) - 1)

    def atomic_actions(self) -> list[int]:
        """The atomic programs of the whole call tree, in execution order."""
        out: list[int] = []
        for step in self.steps:
            if step.call is not None:
                out.extend(step.call.atomic_actions())
            elif step.action != len(step.policy) - 1:
                out.append(step.action)
        return out

    def to_json(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The call tree: {"program", "success", "calls": [...]} (atomic calls are strings)."""
        calls: list[Any] = []
        for step in self.steps:
            if step.call is not None:
                calls.append(step.call.to_json(names))
            elif step.action < len(names):
                calls.append(names[step.action])
        return {"program": names[self.task], "success": self.success, "calls": calls}


@dataclass(eq=False)
class Node:
    """A state of the executing task; statistics of its children are arrays over actions."""

    task: int
    state: np.ndarray | None
    atoms: frozenset[Atom] | None
    depth: int
    h: np.ndarray | None = None  # recurrent state after this node's evaluation
    c: np.ndarray | None = None
    prior: np.ndarray | None = None  # (A,)
    legal: np.ndarray | None = None  # (A,) bool
    value: float = 0.0
    visits: np.ndarray | None = None  # (A,) int
    value_sum: np.ndarray | None = None  # (A,)
    exp_sum: np.ndarray | None = None  # (A,) Σ exp(v), for the softmax Q
    exp_value_sum: np.ndarray | None = None  # (A,) Σ exp(v)·v
    children: dict[int, Node] = field(default_factory=dict)
    count: int = 1  # simulations through this node, its own expansion included
    terminal: bool = False
    terminal_value: float = 0.0
    call: Trace | None = None  # the sub-trace of the non-atomic call that led here
    landmarks: Any = None  # landmark progress (landmark_guidance.LandmarkProgress)
    log_p: float = 0.0  # Σ log P(success) of the atomic calls from the search's root (success_weighting)
    achievers: np.ndarray | None = None  # (A,) bool: calls that reach a next landmark


@dataclass
class SearchContext:
    """Everything a search needs besides the tree."""

    model: EnvironmentModel
    evaluator: Evaluator
    config: SearchConfig
    rng: np.random.Generator
    guide: Any = None  # a landmark_guidance.LandmarkGuide, or None
    sub_traces: dict = field(default_factory=dict)  # (callee, state bytes) -> Trace (exploit is deterministic)
    _levels: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_call_limits(self.config, self.table)

    @property
    def table(self):
        return self.model.table

    def call_limit(self, task: int) -> int:
        """The calls ``task`` may make before only Stop is legal (``SearchConfig.call_limit`` of its level)."""
        return self.config.call_limit(int(self.table.levels[task]))

    def level_term(self, task: int) -> np.ndarray:
        """(A,) the level term of each action for ``task`` (constant, §2.3)."""
        if task not in self._levels:
            table, c = self.table, self.config
            term = c.c_level * np.exp(-(table.levels[task] - table.levels).astype(float))
            self._levels[task] = np.append(term, c.c_level * np.exp(-1.0))
        return self._levels[task]


def check_call_limits(config: SearchConfig, table: ProgramTable) -> None:
    """A ``ConfigError`` unless every level of ``config.level_max_calls`` is a level of a non-atomic
    program of ``table``'s library (a limit for any other level would never apply)."""
    if not config.level_max_calls:
        return
    levels = sorted({int(table.levels[t]) for t in table.tasks})
    for i, (level, _) in enumerate(config.level_max_calls):
        if level not in levels:
            raise ConfigError(f"search.level_max_calls[{i}]: level {level} has no non-atomic program in "
                              f"{table.library.path} (levels {', '.join(map(str, levels))})")


# -- priors -----------------------------------------------------------------------------------
def masked_priors(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """softmax(logits) restricted to ``legal`` and renormalised; uniform if that leaves no mass."""
    z = np.exp(logits - np.max(logits))
    p = np.where(legal, z / z.sum(), 0.0)
    total = p.sum()
    if not np.isfinite(total) or total <= 1e-12:
        count = legal.sum()
        return legal / count if count else np.zeros_like(p)
    return p / total


def add_dirichlet(prior: np.ndarray, legal: np.ndarray, rng: np.random.Generator, eps: float,
                  alpha: float) -> np.ndarray:
    """(1 - ε)·P + ε·Dir(α) over the legal actions."""
    idx = np.flatnonzero(legal)
    if eps == 0.0 or len(idx) < 2:
        return prior
    out = prior * (1.0 - eps)
    out[idx] += eps * rng.dirichlet(np.full(len(idx), alpha))
    return out


def stop_value(ctx: SearchContext, task: int, atoms: frozenset[Atom], depth: int) -> float:
    """γ**depth if the task's ψ holds, else the failure value."""
    if ctx.table.post_holds(task, atoms):
        return ctx.config.gamma ** depth
    return ctx.config.failure_value


# -- nodes ------------------------------------------------------------------------------------
def evaluate_node(node: Node, ctx: SearchContext, h: np.ndarray, c: np.ndarray, explore: bool) -> Node:
    """Fill a non-terminal node: legal actions, priors (masked, guided, noised), value, LSTM state."""
    table, cfg = ctx.table, ctx.config
    n_actions = table.n_actions
    node.legal = table.legal(node.task, node.atoms, node.depth, ctx.call_limit(node.task), cfg.psi_prunings)
    logits, node.value, node.h, node.c = ctx.evaluator.evaluate(node.state, table.task_row(node.task), h, c)
    prior = masked_priors(np.asarray(logits, dtype=float), node.legal)
    if ctx.guide is not None:
        node.achievers = ctx.guide.achievers(node.landmarks, node.legal)
        if cfg.landmark == "prior" and node.achievers.any():
            prior = (1.0 - cfg.landmark_weight) * prior + cfg.landmark_weight * node.achievers / node.achievers.sum()
    if explore:
        prior = add_dirichlet(prior, node.legal, ctx.rng, cfg.dirichlet_eps, cfg.dirichlet_alpha)
    node.prior = prior
    node.visits = np.zeros(n_actions, dtype=int)
    node.value_sum = np.zeros(n_actions)
    node.exp_sum = np.zeros(n_actions)
    node.exp_value_sum = np.zeros(n_actions)
    if cfg.stop_at_expansion and node.legal[table.stop]:
        score_stop(node, ctx)
    return node


def score_stop(node: Node, ctx: SearchContext) -> None:
    """``SearchConfig.stop_at_expansion`` (ours): add ``node``'s Stop child, scored, as one visit."""
    stop = ctx.table.stop
    child = expand(node, stop, ctx, explore=False)
    node.children[stop] = child
    backup([(node, stop)], child.terminal_value)


def new_root(task: int, state: np.ndarray, ctx: SearchContext, explore: bool, h: np.ndarray | None = None,
             c: np.ndarray | None = None, depth: int = 0, landmarks: Any = None) -> Node:
    """The root of a search for ``task`` from ``state`` (recurrent state ``h, c``; zeros by default)."""
    if h is None or c is None:
        h, c = ctx.evaluator.initial_hidden()
    atoms = ctx.model.atoms(state)
    if ctx.guide is not None and landmarks is None:
        landmarks = ctx.guide.start(ctx.table.programs[task].name, atoms)
    node = Node(task, np.asarray(state, dtype=float), atoms, depth, landmarks=landmarks)
    return evaluate_node(node, ctx, h, c, explore)


def expand(parent: Node, action: int, ctx: SearchContext, explore: bool) -> Node:
    """The child reached by ``action``: Stop, an atomic step or a sub-search for a non-atomic call."""
    table = ctx.table
    if action == table.stop:
        value = stop_value(ctx, parent.task, parent.atoms, parent.depth)
        if value > 0.0 and ctx.config.success_weighting:
            value *= float(np.exp(parent.log_p))
        return Node(parent.task, parent.state, parent.atoms, parent.depth, terminal=True, terminal_value=value,
                    log_p=parent.log_p)
    call = None
    log_p = parent.log_p
    if table.is_atomic(action):
        if ctx.config.success_weighting:
            log_p += float(np.log(max(ctx.model.success_probability(parent.state, action), MIN_PROBABILITY)))
        state = ctx.model.step(parent.state, action)
    else:
        call = sub_search(action, parent.state, ctx)
        if not call.success:
            return Node(parent.task, call.final_state, None, parent.depth + 1, terminal=True,
                        terminal_value=ctx.config.failure_value, call=call)
        state, log_p = call.final_state, log_p + call.log_p
    atoms = ctx.model.atoms(state)
    progress = None if ctx.guide is None else ctx.guide.advance(parent.landmarks, atoms)
    child = Node(parent.task, state, atoms, parent.depth + 1, call=call, landmarks=progress, log_p=log_p)
    return evaluate_node(child, ctx, parent.h, parent.c, explore)


def sub_search(callee: int, state: np.ndarray, ctx: SearchContext) -> Trace:
    """A new search executing non-atomic ``callee`` from ``state`` in exploit mode (memoised)."""
    key = (callee, np.asarray(state, dtype=float).tobytes())
    if key not in ctx.sub_traces:
        ctx.sub_traces[key] = execute(callee, state, ctx, explore=False, simulations=ctx.config.sub_simulations)
    return ctx.sub_traces[key]


# -- simulations ------------------------------------------------------------------------------
def q_values(node: Node, mode: str) -> np.ndarray:
    """(A,) Q of each child: softmax-weighted or plain mean of its backed-up values; 0 if unvisited."""
    seen = node.visits > 0
    if mode == "mean":
        return np.where(seen, node.value_sum / np.maximum(node.visits, 1), 0.0)
    return np.where(seen, node.exp_value_sum / np.where(seen, node.exp_sum, 1.0), 0.0)


def scores(node: Node, ctx: SearchContext) -> np.ndarray:
    """(A,) P-UCT score plus the level term (and the landmark bonus); -inf where illegal."""
    cfg = ctx.config
    explore = cfg.c_puct * node.prior * np.sqrt(node.count) / (1.0 + node.visits)
    out = q_values(node, cfg.q_estimate) + explore + ctx.level_term(node.task)
    if cfg.landmark == "bonus" and node.achievers is not None:
        out = out + cfg.landmark_weight * node.achievers / (1.0 + node.visits)
    return np.where(node.legal, out, -np.inf)


def select(node: Node, ctx: SearchContext) -> int:
    """The action to follow from ``node`` (first of the best on ties)."""
    return int(np.argmax(scores(node, ctx)))


def backup(path: list[tuple[Node, int]], value: float) -> None:
    """Add ``value`` to every (node, action) edge of the path."""
    weight = np.exp(value)
    for node, action in path:
        node.visits[action] += 1
        node.value_sum[action] += value
        node.exp_sum[action] += weight
        node.exp_value_sum[action] += weight * value
        node.count += 1


def simulate(root: Node, ctx: SearchContext, explore: bool) -> float:
    """One simulation: select down to a new or terminal node, evaluate it, back the value up."""
    node, path = root, []
    while True:
        if node.terminal:
            value = node.terminal_value
            break
        action = select(node, ctx)
        path.append((node, action))
        child = node.children.get(action)
        if child is None:
            child = expand(node, action, ctx, explore)
            node.children[action] = child
            value = child.terminal_value if child.terminal else child.value
            break
        node = child
    backup(path, value)
    return value


def run_simulations(root: Node, n: int, ctx: SearchContext, explore: bool) -> None:
    """``n`` simulations from ``root`` (none if the root is terminal)."""
    if root.terminal:
        return
    for _ in range(n):
        simulate(root, ctx, explore)


def tree_policy(root: Node, temperature: float) -> np.ndarray:
    """(A,) visits**τ normalised (the legal prior when nothing was visited)."""
    visits = root.visits.astype(float)
    if visits.sum() == 0:
        return root.prior.copy()
    weights = visits ** temperature
    return weights / weights.sum()


def most_visited(root: Node) -> int:
    """The most visited action, ties broken by the prior (the argmax prior before any visit)."""
    best = root.visits == root.visits.max()
    return int(np.argmax(np.where(best & root.legal, root.prior, -1.0)))


def choose(root: Node, policy: np.ndarray, ctx: SearchContext, explore: bool) -> int:
    """Sample from the tree policy while exploring, else the most visited action."""
    if explore:
        return int(ctx.rng.choice(len(policy), p=policy))
    return most_visited(root)


# -- a whole program ------------------------------------------------------------------------
def execute(task: int, state: np.ndarray, ctx: SearchContext, explore: bool,
            simulations: int | None = None) -> Trace:
    """Run program ``task`` from ``state`` in the model: a search before every call, tree reused."""
    cfg = ctx.config
    n = simulations if simulations is not None else (cfg.simulations if explore else cfg.simulations_exploit)
    root = new_root(task, state, ctx, explore)
    steps: list[Step] = []
    while True:
        run_simulations(root, n, ctx, explore)
        policy = tree_policy(root, cfg.temperature)
        action = choose(root, policy, ctx, explore)
        child = root.children.get(action) or expand(root, action, ctx, explore)
        steps.append(Step(action, root.state, root.legal, policy, child.call))
        if child.terminal:
            success = action == ctx.table.stop and child.terminal_value > 0
            end = root.state if child.call is None else child.call.final_state
            return Trace(task, tuple(steps), end, success, child.terminal_value, child.log_p)
        root = child
