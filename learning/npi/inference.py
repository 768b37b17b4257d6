"""Running non-atomic programs in a world: the three inference modes of AlphaNPI-X Section 4.2.

- ``network``: no search; each call is the argmax of the network's masked policy.
- ``plan``: search the whole call tree in the model (exploit mode), then execute its atomic
  programs open-loop in the world.
- ``replan``: model predictive control; before every call a new exploit-mode search runs from
  the world's current state, and a non-atomic call recursively does the same for its callee
  (only atomic programs move the world, so only they trigger re-planning; Algorithm 5).

The world is an :class:`Executor`: the real Fetch env with a controller for the atomic
programs (:class:`FetchExecutor`: the learned goal policy through :func:`policy_controller`,
or the scripted controller standing in for it), or a model itself (:class:`ModelExecutor`). A
program succeeds when its ψ holds in the world's final state. Each run returns a
:class:`CallRecord`, the call tree of Figure 1 / Figure 7.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from asg.envs.fetch import AtomicRun, FetchBlocksEnv, ScriptedController, acting_block, run_atomic
from asg.learning.errors import CheckpointError
from asg.learning.goal_policy.evaluate import PolicyController, load_policy
from asg.learning.npi.mcts import (
    Node,
    SearchContext,
    Trace,
    execute,
    masked_priors,
    most_visited,
    new_root,
    run_simulations,
)
from asg.learning.world_models.program_models import EnvironmentModel
from asg.planning.programs import fetch_library

MODES = ("network", "plan", "replan")


class Executor(Protocol):
    """The world programs run in."""

    def observe(self) -> np.ndarray:
        """The current state."""

    def run_atomic(self, program: int) -> np.ndarray:
        """Run atomic program ``program`` from the current state; the state it ends in."""


class ModelExecutor:
    """A model as the world: atomic programs do exactly what the model predicts."""

    def __init__(self, model: EnvironmentModel, state: np.ndarray) -> None:
        self.model, self.state = model, np.asarray(state, dtype=float)

    def observe(self) -> np.ndarray:
        return self.state

    def run_atomic(self, program: int) -> np.ndarray:
        if self.model.table.preconditions(self.model.atoms(self.state))[program]:
            self.state = self.model.step(self.state, program)
        return self.state


class Controller(Protocol):
    """What runs an atomic program: the scripted controller or ``PolicyController``."""

    def reset(self, obs: np.ndarray, goal: np.ndarray, block: int | None = None) -> None:
        """Pursue ``goal`` (12,) moving ``block``."""

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The action (4,) for a 70-d observation."""


class Focused:
    """A controller told which block the program moves (``run_atomic`` passes only the goal)."""

    def __init__(self, controller: Controller, block: int) -> None:
        self.controller, self.block = controller, block

    def reset(self, obs: np.ndarray, goal: np.ndarray, block: int | None = None) -> None:
        self.controller.reset(obs, goal, self.block if block is None else block)

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self.controller.act(obs)


def policy_controller(path: str | Path) -> Controller:
    """The learned goal policy of ``path`` (``policy.npz`` or its run folder) as a controller."""
    policy = load_policy(path)
    if policy.o_stats.mean.shape != (70,) or policy.g_stats.mean.shape != (12,) or policy.layers[-1][1].shape != (4,):
        raise CheckpointError(f"{path}: not a Fetch goal policy (observation 70, goal 12, action 4)")
    return PolicyController(policy)


class Noisy:
    """A controller whose actions get Gaussian noise of std ``sigma``, clipped to the action box."""

    def __init__(self, controller: Controller, sigma: float, rng: np.random.Generator) -> None:
        self.controller, self.sigma, self.rng = controller, sigma, rng

    def reset(self, obs: np.ndarray, goal: np.ndarray, block: int | None = None) -> None:
        self.controller.reset(obs, goal, block)

    def act(self, obs: np.ndarray) -> np.ndarray:
        action = self.controller.act(obs)
        return np.clip(action + self.sigma * self.rng.standard_normal(action.shape), -1.0, 1.0)


class FetchExecutor:
    """The real Fetch env; atomic programs run ``controller`` (default: scripted) for T = 50 steps,
    focused on the block the program moves (the goal policy was trained with that focus).

    ``retry_noise`` > 0 (``SearchConfig.retry_noise``, ours): a call right after a failed call of the same
    program runs the controller with that much Gaussian action noise, drawn from the episode's seed."""

    def __init__(self, env: Any = None, controller: Any = None, retry_noise: float = 0.0) -> None:
        self.env = env if env is not None else FetchBlocksEnv(initial_state="table", max_steps=None)
        self.controller = controller if controller is not None else ScriptedController()
        self.names = tuple(p.name for p in fetch_library())
        self.retry_noise = float(retry_noise)
        self.last: tuple[int, bool] | None = None  # the last atomic call of the episode and whether ψ held
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> np.ndarray:
        """A new episode from the env's start distribution."""
        obs, _ = self.env.reset(seed=seed)
        self.last, self.rng = None, np.random.default_rng([seed, 1])
        return obs["observation"]

    def observe(self) -> np.ndarray:
        return self.env.observation()["observation"]

    def run_atomic(self, program: int) -> np.ndarray:
        return self.run(program).final

    def run(self, program: int) -> AtomicRun:
        """``run_atomic`` with the whole run: whether φ held, the goal test, the final state."""
        name = self.names[program]
        controller: Controller = Focused(self.controller, acting_block(name))
        if self.retry_noise > 0 and self.last == (program, False):
            controller = Noisy(controller, self.retry_noise, self.rng)
        run = run_atomic(self.env, name, controller)
        self.last = (program, run.success)
        return run


@dataclass(frozen=True)
class CallRecord:
    """A program call as executed: its callees (atomic ones have none) and whether its ψ held."""

    program: str
    atomic: bool
    success: bool
    calls: tuple[CallRecord, ...] = ()

    def atomic_count(self) -> int:
        """Atomic programs run in this call tree."""
        return 1 if self.atomic else sum(c.atomic_count() for c in self.calls)

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program, "atomic": self.atomic, "success": self.success,
                "calls": [c.to_json() for c in self.calls]}

    def lines(self, indent: int = 0) -> list[str]:
        """An indented trace, one call per line."""
        out = ["  " * indent + self.program + ("" if self.atomic or self.success else "  (failed)")]
        for call in self.calls:
            out.extend(call.lines(indent + 1))
        return out


OnSearch = Callable[[Node, int, int], None]
"""``on_search(root, action, level)``: after each re-planning search, its root, the action taken
and how deep the program sits in the call stack (0: the task itself); for traces of a run."""


def run_program(mode: str, task: int, executor: Executor, ctx: SearchContext,
                on_search: OnSearch | None = None) -> CallRecord:
    """Run program ``task`` in ``executor`` with inference ``mode`` (network | plan | replan);
    ``on_search`` hears of every search of ``replan``."""
    if mode == "network":
        return _run_network(task, executor, ctx)
    if mode == "plan":
        return _run_plan(task, executor, ctx)
    if mode == "replan":
        return _run_replan(task, executor, ctx, on_search)
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def _atomic_record(ctx: SearchContext, program: int, executor: Executor) -> CallRecord:
    state = executor.run_atomic(program)
    ok = ctx.table.post_holds(program, ctx.model.atoms(state))
    return CallRecord(ctx.table.programs[program].name, True, ok)


def _run_network(task: int, executor: Executor, ctx: SearchContext) -> CallRecord:
    table, cfg = ctx.table, ctx.config
    h, c = ctx.evaluator.initial_hidden()
    calls: list[CallRecord] = []
    limit = ctx.call_limit(task)
    for depth in range(limit + 1):
        state = executor.observe()
        atoms = ctx.model.atoms(state)
        legal = table.legal(task, atoms, depth, limit, cfg.psi_prunings)
        logits, _, h, c = ctx.evaluator.evaluate(state, table.task_row(task), h, c)
        action = int(np.argmax(masked_priors(np.asarray(logits, dtype=float), legal)))
        if action == table.stop:
            break
        calls.append(_atomic_record(ctx, action, executor) if table.is_atomic(action)
                     else _run_network(action, executor, ctx))
    return _finish(ctx, task, executor, calls)


def _run_plan(task: int, executor: Executor, ctx: SearchContext) -> CallRecord:
    return _replay(execute(task, executor.observe(), ctx, explore=False), executor, ctx)


def _replay(trace: Trace, executor: Executor, ctx: SearchContext) -> CallRecord:
    """Execute a planned call tree open-loop, keeping its shape; each ψ judged in the world."""
    calls = []
    for step in trace.steps:
        if step.call is not None:
            calls.append(_replay(step.call, executor, ctx))
        elif ctx.table.is_atomic(step.action):
            calls.append(_atomic_record(ctx, step.action, executor))
    return _finish(ctx, trace.task, executor, calls)


def _run_replan(task: int, executor: Executor, ctx: SearchContext, on_search: OnSearch | None = None,
                level: int = 0) -> CallRecord:
    table, cfg = ctx.table, ctx.config
    h, c = ctx.evaluator.initial_hidden()
    progress = None
    calls: list[CallRecord] = []
    for depth in range(ctx.call_limit(task) + 1):
        state = executor.observe()
        if ctx.guide is not None:
            atoms = ctx.model.atoms(state)
            progress = (ctx.guide.start(table.programs[task].name, atoms) if progress is None
                        else ctx.guide.advance(progress, atoms))
        root = new_root(task, state, ctx, False, h, c, depth, progress)
        ctx.sub_traces.clear()  # the world moved: plans made from older states are stale
        run_simulations(root, cfg.simulations_exploit, ctx, False)
        action = most_visited(root)
        if on_search is not None:
            on_search(root, action, level)
        h, c = root.h, root.c
        if action == table.stop:
            break
        calls.append(_atomic_record(ctx, action, executor) if table.is_atomic(action)
                     else _run_replan(action, executor, ctx, on_search, level + 1))
    return _finish(ctx, task, executor, calls)


def _finish(ctx: SearchContext, task: int, executor: Executor, calls: list[CallRecord]) -> CallRecord:
    ok = ctx.table.post_holds(task, ctx.model.atoms(executor.observe()))
    return CallRecord(ctx.table.programs[task].name, False, ok, tuple(calls))


def call_tree_png(record: CallRecord) -> bytes:
    """The call tree drawn as a PNG (Figure 7's colours: non-atomic blue, atomic green)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    leaves: list[int] = [0]
    boxes: list[tuple[float, int, CallRecord]] = []
    edges: list[tuple[tuple[float, int], tuple[float, int]]] = []

    def place(node: CallRecord, depth: int) -> float:
        if not node.calls:
            x = float(leaves[0])
            leaves[0] += 1
        else:
            xs = [place(child, depth + 1) for child in node.calls]
            x = sum(xs) / len(xs)
            edges.extend(((x, depth), (cx, depth + 1)) for cx in xs)
        boxes.append((x, depth, node))
        return x

    place(record, 0)
    depth = max(d for _, d, _ in boxes)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.9 * leaves[0]), 1.3 * (depth + 1) + 0.6))
    for (x0, d0), (x1, d1) in edges:
        ax.plot([x0, x1], [-d0, -d1], color="0.6", zorder=1)
    for x, d, node in boxes:
        colour = "#8fd19e" if node.atomic else "#9cc3f0"
        edge = "black" if node.success else "#c0392b"
        ax.text(x, -d, node.program.replace("_", " "), ha="center", va="center", fontsize=7, zorder=2,
                bbox={"boxstyle": "round", "facecolor": colour, "edgecolor": edge})
    ax.set_xlim(-0.8, leaves[0] - 0.2)
    ax.set_ylim(-depth - 0.6, 0.6)
    ax.axis("off")
    ax.set_title(f"{record.program}: {'success' if record.success else 'failure'}", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
