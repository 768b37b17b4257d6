"""Training the meta-controller in imagination (AlphaNPI-X Section 4.1, B.3, Algorithm 4).

One iteration: pick a non-atomic program (uniformly, the paper's default, or by learning
progress, B.3 Eq. 2–3), play ``episodes_per_iteration`` exploring episodes of it in the model
(self-play, possibly on a process pool), store the traces, run ``updates_per_episode`` gradient
steps per episode on batches of whole traces (BPTT, ``p_buf`` of each batch from positive
traces), and every ``validate_every`` iterations play ``validation_episodes`` exploit-mode
episodes of every program from fixed start states.

All randomness derives from one seed: the trainer's generator draws each episode's seed, so the
number of workers changes nothing but the wall time.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from asg.learning.npi.config import BUFFER_SCOPES, NPIConfig
from asg.learning.npi.mcts import Trace, check_call_limits
from asg.learning.npi.network import AlphaNPINet, make_batch, state_inputs, trace_loss
from asg.learning.npi.selfplay import EpisodeJob, SelfPlay
from asg.learning.world_models.program_models import EnvironmentModel

VALIDATION_STREAM = 7_919  # entropy word that separates validation start states from training ones
POOL = -1  # the key of the one list of a TraceBuffer of scope "all" (task rows are >= 0)


@dataclass(frozen=True)
class TraceSample:
    """A trace as a training sample: states (T, D), legal (T, A), tree policies (T, A), return."""

    states: np.ndarray
    legal: np.ndarray
    policies: np.ndarray
    task_row: int
    value: float
    success: bool


def trace_sample(trace: Trace, task_row: int) -> TraceSample:
    """The training sample of a top-level trace (its own steps; callees have their own programs)."""
    return TraceSample(np.stack([s.state for s in trace.steps]).astype(np.float32),
                       np.stack([s.legal for s in trace.steps]),
                       np.stack([s.policy for s in trace.steps]).astype(np.float32),
                       task_row, float(trace.value), bool(trace.success))


class TraceBuffer:
    """Traces to train on, oldest dropped first: the last ``capacity`` of each program (``scope``
    "program", split by program as in the reference code, §2.4) or of all programs together ("all":
    one pool; ``NPIConfig.buffer_scope``). A batch draws a list uniformly among those held (a
    program's, or the pool), then a positive trace of it with probability ``p_positive``, else a
    negative one; the side that is not empty when the other is."""

    def __init__(self, capacity: int, p_positive: float, scope: str = "program") -> None:
        if scope not in BUFFER_SCOPES:
            raise ValueError(f"scope must be one of {BUFFER_SCOPES}, got {scope!r}")
        self.capacity, self.p_positive, self.scope = capacity, p_positive, scope
        self.items: dict[int, list[TraceSample]] = {}  # task row (POOL with scope "all") -> traces, oldest first

    def __len__(self) -> int:
        return sum(len(v) for v in self.items.values())

    def add(self, sample: TraceSample) -> None:
        """Keep ``sample``, dropping the oldest trace of its program (of the pool, with "all") when full."""
        held = self.items.setdefault(sample.task_row if self.scope == "program" else POOL, [])
        held.append(sample)
        if len(held) > self.capacity:
            held.pop(0)

    def sample(self, n: int, rng: np.random.Generator) -> list[TraceSample]:
        """``n`` traces drawn with replacement."""
        rows = sorted(self.items)
        out = []
        for _ in range(n):
            held = self.items[rows[int(rng.integers(len(rows)))]]
            pos = [s for s in held if s.success]
            neg = [s for s in held if not s.success]
            pool = pos if (pos and (not neg or rng.random() < self.p_positive)) else neg
            out.append(pool[int(rng.integers(len(pool)))])
        return out


def learning_progress_probabilities(current: np.ndarray, previous: np.ndarray | None, epsilon: float) -> np.ndarray:
    """B.3 Eq. 2–3: p_i = ε/M + (1 - ε)·LP_i/Σ LP, LP_i = |C_t - C_{t-1}| (uniform when Σ LP = 0)."""
    m = len(current)
    lp = np.zeros(m) if previous is None else np.abs(current - previous)
    if lp.sum() <= 0:
        return np.full(m, 1.0 / m)
    return epsilon / m + (1.0 - epsilon) * lp / lp.sum()


def state_statistics(model: EnvironmentModel, rng: np.random.Generator, n: int = 256,
                     steps: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of states met in episodes: starts plus a few random legal atomic calls."""
    table, seen = model.table, []
    atomic = np.array([p.atomic for p in table.programs] + [False])
    for _ in range(n):
        state = model.initial_state(rng)
        seen.append(state)
        for _ in range(steps):
            legal = np.flatnonzero(table.preconditions(model.atoms(state)) & atomic)
            if not len(legal):
                break
            state = model.step(state, int(rng.choice(legal)))
            seen.append(state)
    data = np.stack(seen)
    return data.mean(axis=0), data.std(axis=0)


@dataclass
class TrainerState:
    """What a checkpoint needs besides the network and optimiser."""

    iteration: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, float] = field(default_factory=dict)
    first_reached: dict[str, int] = field(default_factory=dict)  # program -> first iteration >= target
    lp_previous: list[float] | None = None
    wall_seconds: float = 0.0


class MetaControllerTrainer:
    """The AlphaNPI-X training loop over an environment model."""

    def __init__(self, model: EnvironmentModel, config: NPIConfig = NPIConfig(), seed: int = 0,
                 target: float = 0.9) -> None:
        self.model, self.config, self.seed, self.target = model, config, seed, target
        self.table = model.table
        self.tasks = [self.table.index(n) for n in config.programs] or list(self.table.tasks)
        check_call_limits(config.search, self.table)
        seeds = np.random.SeedSequence(seed).spawn(3)
        self.rng = np.random.default_rng(seeds[0])
        mean, std = state_statistics(model, np.random.default_rng(seeds[2]))
        with torch.random.fork_rng(devices=[]):  # seeded initialisation, global torch RNG untouched
            torch.manual_seed(int(seeds[1].generate_state(1)[0]))
            self.net = AlphaNPINet(model.state_dim, self.table.n_actions, len(self.table.tasks), config.net,
                                   mean, std, state_inputs(model, config.net))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.net.lr)
        self.buffer = TraceBuffer(config.buffer_size, config.p_buf, config.buffer_scope)
        self.state = TrainerState()
        self.selfplay = SelfPlay(model, config.search, config.workers, config.backend, config.ray_address)
        self.validator = self.selfplay
        if not config.validate_with_guidance and config.search.landmark != "off":
            self.validator = self.selfplay.with_search(replace(config.search, landmark="off"))

    # -- one iteration -------------------------------------------------------------------------
    def choose_program(self) -> int:
        """The program to train this iteration (uniform, or by learning progress)."""
        if self.config.curriculum == "random" or len(self.tasks) == 1:
            return self.tasks[int(self.rng.integers(len(self.tasks)))]
        current = self.success_rates(self.config.lp_episodes, stream=self.state.iteration + 1)
        rates = np.array([current[self.table.programs[t].name] for t in self.tasks])
        prev = None if self.state.lp_previous is None else np.array(self.state.lp_previous)
        self.state.lp_previous = rates.tolist()
        p = learning_progress_probabilities(rates, prev, self.config.lp_epsilon)
        return self.tasks[int(self.rng.choice(len(self.tasks), p=p))]

    def collect(self, task: int) -> list[Trace]:
        """Exploring episodes of ``task`` with the current network; traces go to the buffer."""
        jobs = [EpisodeJob(task, int(self.rng.integers(2**63)), True)
                for _ in range(self.config.episodes_per_iteration)]
        traces = self.selfplay.run(jobs, self.net.snapshot())
        row = self.table.task_row(task)
        for trace in traces:
            self.buffer.add(trace_sample(trace, row))
        return traces

    def update(self, steps: int) -> dict[str, float]:
        """``steps`` Adam steps on batches of whole traces; mean losses."""
        if len(self.buffer) < self.config.batch_size or steps == 0:
            return {"policy_loss": float("nan"), "value_loss": float("nan")}
        totals = {"policy_loss": 0.0, "value_loss": 0.0}
        self.net.train()
        for _ in range(steps):
            samples = self.buffer.sample(self.config.batch_size, self.rng)
            batch = make_batch(samples, self.model.state_dim, self.table.n_actions)
            loss, parts = trace_loss(self.net, batch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            for k in totals:
                totals[k] += parts[k] / steps
        return totals

    def success_rates(self, episodes: int, stream: int = 0) -> dict[str, float]:
        """Exploit-mode success of every trained program from fixed start states (per stream)."""
        jobs = [EpisodeJob(t, int(np.random.SeedSequence([self.seed, VALIDATION_STREAM, stream, t, k])
                                  .generate_state(1)[0]), False)
                for t in self.tasks for k in range(episodes)]
        traces = self.validator.run(jobs, self.net.snapshot())
        out = {}
        for i, t in enumerate(self.tasks):
            wins = [tr.success for tr in traces[i * episodes:(i + 1) * episodes]]
            out[self.table.programs[t].name] = float(np.mean(wins))
        return out

    def step(self) -> dict[str, Any]:
        """One training iteration; returns its metrics row."""
        start = time.perf_counter()
        st, cfg = self.state, self.config
        task = self.choose_program()
        traces = self.collect(task)
        losses = self.update(cfg.updates_per_episode * len(traces))
        st.iteration += 1
        row: dict[str, Any] = {"iteration": st.iteration, "program": self.table.programs[task].name,
                               "train_success": float(np.mean([t.success for t in traces])), **losses}
        if st.iteration % cfg.validate_every == 0:
            st.validation = self.success_rates(cfg.validation_episodes)
            for name, rate in st.validation.items():
                row[f"val/{name}"] = rate
                if rate >= self.target and name not in st.first_reached:
                    st.first_reached[name] = st.iteration
            row["val_mean"] = float(np.mean(list(st.validation.values())))
            row["val_min"] = float(min(st.validation.values()))
            if row["val_min"] >= self.target and "all" not in st.first_reached:
                st.first_reached["all"] = st.iteration
        st.wall_seconds += time.perf_counter() - start
        row["wall_seconds"] = round(st.wall_seconds, 3)
        st.rows.append(row)
        return row

    def solved(self) -> bool:
        """Every validated program at ``stop_at_success`` or better (False when it is None)."""
        goal = self.config.stop_at_success
        return bool(goal is not None and self.state.validation and min(self.state.validation.values()) >= goal)

    def train(self, iterations: int | None = None, callback: Callable[[dict[str, Any]], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> TrainerState:
        """Iterate until ``iterations`` (default: the config's) are done or the target is met."""
        total = self.config.iterations if iterations is None else iterations
        try:
            while self.state.iteration < total and not self.solved():
                row = self.step()
                if callback is not None:
                    callback(row)
                if should_stop is not None and should_stop():
                    break
        finally:
            self.selfplay.close()
            self.validator.close()
        return self.state

    # -- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, as data (``asg.learning.checkpoint``): network, optimiser,
        buffer, generator, loop state."""
        buffer = {row: [_fields(sample) for sample in held] for row, held in self.buffer.items.items()}
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                "buffer": buffer, "rng": self.rng.bit_generator.state, "state": _fields(self.state)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict` output (``KeyError`` / ``TypeError`` / ``RuntimeError`` when
        it does not fit this trainer)."""
        self.net.load_state_dict(data["net"])
        self.optimizer.load_state_dict(data["optimizer"])
        self.buffer.items = {int(k): [TraceSample(**sample) for sample in v] for k, v in data["buffer"].items()}
        self.rng.bit_generator.state = data["rng"]
        self.state = TrainerState(**data["state"])


def _fields(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}
