"""Batched episodes: n Fetch simulations stepped in lock-step by one numpy policy.

Per step the only Python work besides MuJoCo is one batched MLP forward in numpy (no torch in
the workers), one gather that rotates the n observations into the policy's frame, and the
simulation's own ``apply_action`` / ``observe``. Physics can run in threads: ``mj_step``
releases the GIL (``shared/research/rl_anchors.md`` §3: 1.7x on two cores).

The policy always moves the block in the first observation slot (AlphaNPI-X Appendix D.1):
every episode has a focus block, and its observations and goals are rotated by the circular
permutation of ``envs/fetch/permutation.py`` before the policy sees them; the stored episodes
are in that rotated frame, and the achieved goal is the first ``goal_dim`` values of the
rotated observation (the four block positions).

What an episode starts from is an :class:`EpisodeSpec` (plain data, so a Ray actor can run it):
a fresh reset for a program (goal Θ(s0, i)) or with a uniformly drawn goal for the focus block
(phase 1), a stored state (phase 2's no-reset starts), or a state along a demonstration with its
goal (Nair et al. 2018's resets). All randomness of an episode comes from its spec's seed, so the
same specs give the same episodes however they are split among workers.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np

from asg.learning.goal_policy.config import ExploreConfig
from asg.learning.goal_policy.normalizer import NormStats

UNIFORM_XY = ((1.19, 0.45), (1.49, 1.05))  # table area of uniform goals: block region and both zones
P_GOAL_IN_AIR = 0.5  # FetchPickAndPlace: half of its targets are in the air
AIR_HEIGHT = 0.2  # highest uniform target above the resting height
MAX_LAYOUT_REDRAWS = 20  # the env's layout sampler can fail on a crowded draw; draw again


@dataclass(frozen=True)
class EpisodeSpec:
    """How one episode starts (see the module docstring)."""

    seed: int
    program: str | None = None  # atomic program: goal Θ(s0, program); None = uniform goal for the focus
    focus: int | None = None  # focus block of a uniform goal or a demo reset (None = drawn)
    state: Any = None  # restorable state to start from (a ``SimState``); None = a fresh reset
    goal: np.ndarray | None = None  # a fixed goal in env frame (demo resets), with ``state``
    progress: float = 0.0  # annealing of the start distribution (D.1), in [0, 1]


@dataclass(frozen=True)
class Episodes:
    """n finished episodes, policy frame (float32) plus what the trainer and Algorithm 3 keep."""

    o: np.ndarray  # (n, T+1, od)
    ag: np.ndarray  # (n, T+1, gd)
    g: np.ndarray  # (n, gd)
    u: np.ndarray  # (n, T, ad)
    success: np.ndarray  # (n,) goal reached at the last step
    programs: tuple[str | None, ...]
    start_obs: np.ndarray  # (n, raw) env frame, float64
    final_obs: np.ndarray  # (n, raw)
    final_states: tuple[Any, ...]

    def __len__(self) -> int:
        return int(self.o.shape[0])

    @staticmethod
    def concat(parts: Sequence["Episodes"]) -> "Episodes":
        """Episodes of several batches, in order."""
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
        return Episodes(cat("o"), cat("ag"), cat("g"), cat("u"), cat("success"),
                        tuple(x for p in parts for x in p.programs), cat("start_obs"), cat("final_obs"),
                        tuple(x for p in parts for x in p.final_states))


class BatchEnv(Protocol):
    """n envs stepped together; observations in the policy frame (achieved goal first)."""

    n: int
    horizon: int

    def start(self, specs: Sequence[EpisodeSpec]) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Start len(specs) <= n episodes: observations (m, od), goals (m, gd), programs."""

    def step(self, actions: np.ndarray) -> np.ndarray:
        """Apply actions (m, ad); the next observations (m, od)."""

    def raw_obs(self) -> np.ndarray:
        """The active envs' observations in env frame (m, raw)."""

    def states(self) -> list[Any]:
        """Restorable states of the active envs."""

    def reached(self, ag: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Whether achieved goals reach goals (batched)."""


class GoalTask(Protocol):
    """A goal-reaching task the trainer can learn (the Fetch world, or a toy in tests)."""

    obs_dim: int
    goal_dim: int
    act_dim: int
    horizon: int
    programs: tuple[str, ...]  # goal-setter programs; () = uniform goals only

    def make_batch(self, n_envs: int, threads: int = 1) -> BatchEnv: ...

    def compute_reward(self, ag: np.ndarray, g: np.ndarray, info: Any = None) -> np.ndarray: ...

    def applicable(self, raw_obs: np.ndarray, program: str) -> bool: ...


@dataclass(frozen=True)
class PolicySnapshot:
    """The actor as numpy arrays plus the normaliser statistics: what rollout workers run."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]  # (W (out, in), b (out,)), ReLU between, tanh last
    o_stats: NormStats
    g_stats: NormStats
    clip_obs: float

    def act(self, o: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Deterministic actions for observations (m, od) and goals (m, gd), float32 (m, ad)."""
        return self.act_normalized(self.o_stats.normalize(np.clip(o, -self.clip_obs, self.clip_obs)),
                                   self.g_stats.normalize(np.clip(g, -self.clip_obs, self.clip_obs)))

    def act_normalized(self, o_norm: np.ndarray, g_norm: np.ndarray) -> np.ndarray:
        """Actions for already normalised inputs."""
        x = np.concatenate([o_norm, g_norm], axis=-1).astype(np.float32, copy=False)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            x = np.maximum(x, 0.0) if i < len(self.layers) - 1 else np.tanh(x)
        return x


def _explore_tables(specs: Sequence[EpisodeSpec], horizon: int, act_dim: int, explore: ExploreConfig):
    """Per-episode noise, random-action masks and random actions, drawn from each spec's seed."""
    noise = np.empty((len(specs), horizon, act_dim), dtype=np.float32)
    mask = np.empty((len(specs), horizon), dtype=bool)
    rand = np.empty((len(specs), horizon, act_dim), dtype=np.float32)
    for i, spec in enumerate(specs):
        rng = np.random.default_rng([spec.seed, 1])
        noise[i] = rng.normal(size=(horizon, act_dim)) * explore.noise_eps
        mask[i] = rng.random(horizon) < explore.random_eps
        rand[i] = rng.uniform(-1.0, 1.0, size=(horizon, act_dim))
    return noise, mask, rand


def run_episodes(batch: BatchEnv, specs: Sequence[EpisodeSpec], policy: PolicySnapshot,
                 explore: ExploreConfig | None = None) -> Episodes:
    """Play len(specs) <= batch.n episodes of ``batch.horizon`` steps (greedy when ``explore`` is None)."""
    o0, g, programs = batch.start(specs)
    start_obs = batch.raw_obs()
    m, horizon = len(specs), batch.horizon
    o = np.empty((m, horizon + 1, o0.shape[1]), dtype=np.float32)
    o[:, 0] = o0
    g = np.asarray(g, dtype=np.float32)
    g_norm = policy.g_stats.normalize(np.clip(g, -policy.clip_obs, policy.clip_obs))
    act_dim = policy.layers[-1][0].shape[0]
    u = np.empty((m, horizon, act_dim), dtype=np.float32)
    tables = _explore_tables(specs, horizon, act_dim, explore) if explore is not None else None
    for t in range(horizon):
        o_norm = policy.o_stats.normalize(np.clip(o[:, t], -policy.clip_obs, policy.clip_obs))
        a = policy.act_normalized(o_norm, g_norm)
        if tables is not None:
            noise, mask, rand = tables
            a = np.clip(a + noise[:, t], -1.0, 1.0)
            a = np.where(mask[:, t, None], rand[:, t], a)
        u[:, t] = a
        o[:, t + 1] = batch.step(a)
    ag = o[:, :, :g.shape[1]].copy()
    success = np.asarray(batch.reached(ag[:, -1], g), dtype=bool)
    return Episodes(o, ag, g, u, success, tuple(programs), start_obs, batch.raw_obs(), tuple(batch.states()))


class RolloutWorker:
    """Runs any number of specs through one batch env of ``n_envs`` (locally or as a Ray actor)."""

    def __init__(self, task: GoalTask, n_envs: int, threads: int = 1) -> None:
        self.task = task
        self.batch = task.make_batch(n_envs, threads)

    def run(self, specs: Sequence[EpisodeSpec], policy: PolicySnapshot,
            explore: ExploreConfig | None = None) -> Episodes:
        """Episodes of all specs, in order, ``n_envs`` at a time."""
        n = self.batch.n
        parts = [run_episodes(self.batch, specs[i:i + n], policy, explore) for i in range(0, len(specs), n)]
        return Episodes.concat(parts)

    def close(self) -> None:
        close = getattr(self.batch, "close", None)
        if close is not None:
            close()


# -- the Fetch world ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FetchTask:
    """The Fetch 4-block world as a goal task (policy frame: the focus block first)."""

    initial_state: Any = "training"  # "training" (D.1), "table" (evaluation), "chained" or an InitialStateConfig
    horizon: int = 50
    obs_dim: int = 70
    goal_dim: int = 12
    act_dim: int = 4
    z_tolerance: float | None = None  # goals also need each block this close in height (None: the paper)

    @property
    def programs(self) -> tuple[str, ...]:
        from asg.envs.fetch.goal_setter import atomic_programs

        return atomic_programs()

    def make_batch(self, n_envs: int, threads: int = 1) -> "FetchBatch":
        return FetchBatch(n_envs, self.initial_state, self.horizon, threads, self.z_tolerance)

    def compute_reward(self, ag: np.ndarray, g: np.ndarray, info: Any = None) -> np.ndarray:
        """The env's sparse reward: 0 when every block is within ε of its target, else -1."""
        from asg.envs.fetch.goal_setter import goals_reached

        return goals_reached(ag, g, z_tolerance=self.z_tolerance).astype(np.float64) - 1.0

    def applicable(self, raw_obs: np.ndarray, program: str) -> bool:
        from asg.envs.fetch.goal_setter import applicable

        return applicable(raw_obs, program)


def uniform_goal(blocks: np.ndarray, focus: int, rng: np.random.Generator, tries: int = 20) -> np.ndarray:
    """A phase-1 goal: the focus block anywhere over the table or in the air, the others stay (12,)."""
    from asg.envs.fetch.layout import BLOCK_SIZE, REST_Z

    goal = np.asarray(blocks, dtype=float).reshape(4, 3).copy()
    others = np.delete(goal, focus, axis=0)
    for _ in range(tries):
        xy = rng.uniform(UNIFORM_XY[0], UNIFORM_XY[1])
        in_air = rng.random() < P_GOAL_IN_AIR
        z = REST_Z + (rng.uniform(0.0, AIR_HEIGHT) if in_air else 0.0)
        if in_air or np.all(np.abs(others[:, :2] - xy).max(axis=1) >= BLOCK_SIZE):
            break
    goal[focus] = (xy[0], xy[1], z)
    return goal.reshape(12)


class FetchBatch:
    """n :class:`FetchBlocksEnv` simulations stepped together (see the module docstring)."""

    def __init__(self, n: int, initial_state: Any = "training", horizon: int = 50, threads: int = 1,
                 z_tolerance: float | None = None) -> None:
        from asg.envs.fetch.env import FetchBlocksEnv
        from asg.envs.fetch.permutation import rotate_goal, rotate_observation

        if n < 1 or threads < 1:
            raise ValueError("n and threads must be >= 1")
        self.n, self.horizon, self.z_tolerance = n, horizon, z_tolerance
        self.envs = [FetchBlocksEnv(initial_state=initial_state, max_steps=None) for _ in range(n)]
        self.sims = [env.sim for env in self.envs]
        self._perm = np.stack([rotate_observation(np.arange(70), j) for j in range(4)]).astype(np.int64)
        self._gperm = np.stack([rotate_goal(np.arange(12), j) for j in range(4)]).astype(np.int64)
        self.raw = np.zeros((n, 70))
        self.focus = np.zeros(n, dtype=np.int64)
        self.active = 0
        self.threads = min(threads, n)
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    def start(self, specs: Sequence[EpisodeSpec]) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        if not 1 <= len(specs) <= self.n:
            raise ValueError(f"a batch of {self.n} envs cannot start {len(specs)} episodes")
        self.active = len(specs)
        goals, programs = np.zeros((self.active, 12)), []
        for i, spec in enumerate(specs):
            self.raw[i], goals[i], self.focus[i], program = self._start_one(self.envs[i], spec)
            programs.append(program)
        focus = self.focus[:self.active]
        g = np.take_along_axis(goals, self._gperm[focus], axis=1)
        return self._rotated(), g, programs

    def _start_one(self, env, spec: EpisodeSpec) -> tuple[np.ndarray, np.ndarray, int, str | None]:
        from asg.envs.fetch.goal_setter import acting_block

        env.set_progress(float(spec.progress))
        rng = np.random.default_rng([spec.seed, 2])
        options: dict[str, Any] = {}
        if spec.state is not None:
            options["sim_state"] = spec.state
        if spec.goal is not None:
            if spec.focus is None:
                raise ValueError("an episode with a fixed goal needs its focus block")
            options["goal"] = spec.goal
            focus = int(spec.focus)
        elif spec.program is not None:
            options["program"] = spec.program
            focus = acting_block(spec.program)
        else:
            focus = int(rng.integers(4)) if spec.focus is None else int(spec.focus)
            if spec.state is None:
                options["focus"] = focus
        obs = self._reset(env, spec.seed, options)
        raw = obs["observation"]
        goal = env.goal if (spec.goal is not None or spec.program is not None) else uniform_goal(raw[:12], focus, rng)
        return raw, goal, focus, spec.program

    @staticmethod
    def _reset(env, seed: int, options: dict[str, Any]) -> dict[str, np.ndarray]:
        """``env.reset``; a crowded layout draw (``LayoutError``) is redrawn with a derived seed."""
        from asg.envs.fetch.initial_states import LayoutError

        for attempt in range(MAX_LAYOUT_REDRAWS):
            draw = int(seed) if attempt == 0 else int(np.random.default_rng([seed, 3, attempt]).integers(2**31))
            try:
                return env.reset(seed=draw, options=options)[0]
            except LayoutError:
                continue
        raise LayoutError(f"no start layout in {MAX_LAYOUT_REDRAWS} draws (seed {seed})")

    def _rotated(self) -> np.ndarray:
        m = self.active
        return np.take_along_axis(self.raw[:m], self._perm[self.focus[:m]], axis=1)

    def _step_range(self, actions: np.ndarray, lo: int, hi: int) -> None:
        for i in range(lo, hi):
            sim = self.sims[i]
            sim.apply_action(actions[i])
            self.raw[i] = sim.observe()

    def step(self, actions: np.ndarray) -> np.ndarray:
        actions = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)
        m = self.active
        if self._pool is None or m == 1:
            self._step_range(actions, 0, m)
        else:
            bounds = np.linspace(0, m, min(self.threads, m) + 1).astype(int)
            list(self._pool.map(lambda k: self._step_range(actions, bounds[k], bounds[k + 1]),
                                range(len(bounds) - 1)))
        return self._rotated()

    def raw_obs(self) -> np.ndarray:
        return self.raw[:self.active].copy()

    def states(self) -> list[Any]:
        return [self.sims[i].get_state() for i in range(self.active)]

    def reached(self, ag: np.ndarray, g: np.ndarray) -> np.ndarray:
        from asg.envs.fetch.goal_setter import goals_reached

        return goals_reached(ag, g, z_tolerance=self.z_tolerance)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for env in self.envs:
            env.close()
