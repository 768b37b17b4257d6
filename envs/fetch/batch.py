"""n Fetch simulations stepped in lock-step, and the Fetch world as a goal-reaching task.

:class:`FetchBatch` holds n :class:`~asg.envs.fetch.env.FetchBlocksEnv` and steps their
simulations together: per step the only Python work besides MuJoCo is one gather that rotates the
n observations into the policy's frame and the simulation's own ``apply_action`` / ``observe``.
Physics can run in threads: ``mj_step`` releases the GIL (``shared/research/rl_anchors.md`` §3:
1.7x on two cores).

The policy always moves the block in the first observation slot (AlphaNPI-X Appendix D.1): every
episode has a focus block, and its observations and goals are rotated by the circular permutation
of ``permutation.py`` before the policy sees them; the achieved goal is the first ``GOAL_DIM``
values of the rotated observation (the four block positions).

An episode starts from an :class:`EpisodeStart` (plain data): a fresh reset for a program (goal
Θ(s0, i)) or with a uniformly drawn goal for the focus block (:func:`uniform_goal`, phase 1), a
stored state (phase 2's no-reset starts), or a state along a demonstration with its goal (Nair et
al. 2018's resets). All randomness of an episode comes from its start's seed.

:class:`FetchTask` is the world as the goal-policy trainer sees it: dimensions, programs, the
sparse reward, and a factory for batches.
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.goal_setter import acting_block, applicable, atomic_programs, goals_reached
from asg.envs.fetch.initial_states import LayoutError
from asg.envs.fetch.layout import BLOCK_SIZE, GOAL_DIM, GRIP_POS, N_BLOCKS, OBS_DIM, REST_Z
from asg.envs.fetch.permutation import rotate_goal, rotate_observation

UNIFORM_XY = ((1.19, 0.45), (1.49, 1.05))  # table area of uniform goals: block region and both zones
P_GOAL_IN_AIR = 0.5  # FetchPickAndPlace: half of its targets are in the air
AIR_HEIGHT = 0.2  # highest uniform target above the resting height
MAX_LAYOUT_REDRAWS = 20  # the env's layout sampler can fail on a crowded draw; draw again


class EpisodeStart(Protocol):
    """How one episode starts: what :meth:`FetchBatch.start` reads (``goal_policy.rollout.EpisodeSpec``)."""

    @property
    def seed(self) -> int: ...

    @property
    def program(self) -> str | None: ...  # atomic program: goal Θ(s0, program); None = uniform goal

    @property
    def focus(self) -> int | None: ...  # focus block of a uniform goal or a demo reset (None = drawn)

    @property
    def state(self) -> Any: ...  # a ``SimState`` to start from; None = a fresh reset

    @property
    def goal(self) -> np.ndarray | None: ...  # a fixed goal in env frame (demo resets), with ``state``

    @property
    def progress(self) -> float: ...  # annealing of the start distribution (D.1), in [0, 1]


def uniform_goal(blocks: np.ndarray, focus: int, rng: np.random.Generator, tries: int = 20) -> np.ndarray:
    """A phase-1 goal: the focus block anywhere over the table or in the air, the others stay (12,)."""
    goal = np.asarray(blocks, dtype=float).reshape(N_BLOCKS, 3).copy()
    others = np.delete(goal, focus, axis=0)
    for _ in range(tries):
        xy = rng.uniform(UNIFORM_XY[0], UNIFORM_XY[1])
        in_air = rng.random() < P_GOAL_IN_AIR
        z = REST_Z + (rng.uniform(0.0, AIR_HEIGHT) if in_air else 0.0)
        if in_air or np.all(np.abs(others[:, :2] - xy).max(axis=1) >= BLOCK_SIZE):
            break
    goal[focus] = (xy[0], xy[1], z)
    return goal.reshape(GOAL_DIM)


class FetchBatch:
    """n :class:`FetchBlocksEnv` simulations stepped together (see the module docstring)."""

    def __init__(self, n: int, initial_state: Any = "training", horizon: int = 50, threads: int = 1,
                 z_tolerance: float | None = None, xy_tolerance: float | None = None) -> None:
        if n < 1 or threads < 1:
            raise ValueError("n and threads must be >= 1")
        self.n, self.horizon, self.z_tolerance, self.xy_tolerance = n, horizon, z_tolerance, xy_tolerance
        self.envs = [FetchBlocksEnv(initial_state=initial_state, max_steps=None) for _ in range(n)]
        self.sims = [env.sim for env in self.envs]
        self._perm = np.stack([rotate_observation(np.arange(OBS_DIM), j) for j in range(N_BLOCKS)]).astype(np.int64)
        self._gperm = np.stack([rotate_goal(np.arange(GOAL_DIM), j) for j in range(N_BLOCKS)]).astype(np.int64)
        self.raw = np.zeros((n, OBS_DIM))
        self.focus = np.zeros(n, dtype=np.int64)
        self.active = 0
        self.threads = min(threads, n)
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    def start(self, specs: Sequence[EpisodeStart]) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Start len(specs) <= n episodes: observations (m, od), goals (m, gd), programs (policy frame)."""
        if not 1 <= len(specs) <= self.n:
            raise ValueError(f"a batch of {self.n} envs cannot start {len(specs)} episodes")
        self.active = len(specs)
        goals, programs = np.zeros((self.active, GOAL_DIM)), []
        for i, spec in enumerate(specs):
            self.raw[i], goals[i], self.focus[i], program = self._start_one(self.envs[i], spec)
            programs.append(program)
        focus = self.focus[:self.active]
        g = np.take_along_axis(goals, self._gperm[focus], axis=1)
        return self._rotated(), g, programs

    def _start_one(self, env: FetchBlocksEnv, spec: EpisodeStart) -> tuple[np.ndarray, np.ndarray, int, str | None]:
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
            focus = int(rng.integers(N_BLOCKS)) if spec.focus is None else int(spec.focus)
            if spec.state is None:
                options["focus"] = focus
        obs = self._reset(env, spec.seed, options)
        raw = obs["observation"]
        goal = env.goal if (spec.goal is not None or spec.program is not None) else uniform_goal(raw[:12], focus, rng)
        return raw, goal, focus, spec.program

    @staticmethod
    def _reset(env: FetchBlocksEnv, seed: int, options: dict[str, Any]) -> dict[str, np.ndarray]:
        """``env.reset``; a crowded layout draw (``LayoutError``) is redrawn with a derived seed."""
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
        """Apply actions (m, ad); the next observations (m, od), policy frame."""
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
        """The active envs' observations in env frame (m, 70)."""
        return self.raw[:self.active].copy()

    def states(self) -> list[Any]:
        """Restorable states (``SimState``) of the active envs."""
        return [self.sims[i].get_state() for i in range(self.active)]

    def reached(self, ag: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Whether achieved goals reach goals (batched)."""
        return goals_reached(ag, g, z_tolerance=self.z_tolerance, xy_tolerance=self.xy_tolerance)

    def close(self) -> None:
        """Stop the physics threads and close the envs."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for env in self.envs:
            env.close()


def resting_goal(g: np.ndarray) -> np.ndarray:
    """Whether goals (..., 12) put the moved block (the first, policy frame) at a resting height: on
    the table or on a tower, within a centimetre (every program's goal; a relabelled goal taken
    mid-carry is not)."""
    levels = (np.asarray(g)[..., 2] - REST_Z) / BLOCK_SIZE
    return (np.abs(levels - np.round(levels)) * BLOCK_SIZE <= 0.01) & (levels > -0.5)


def gripper_clear(obs: np.ndarray, height: float) -> np.ndarray:
    """Whether the gripper has let go of the moved block in observations (..., 70), policy frame: the
    grip site at least ``height`` above the block's centre, or a block width and 2 cm away from it
    horizontally. What a next program needs: a Stack or Move of another block that starts with the
    fingers round this one drags it along (``benchmarks/fetch_handoff.py``)."""
    obs = np.asarray(obs)
    block, grip = obs[..., 0:3], obs[..., GRIP_POS]
    above = grip[..., 2] - block[..., 2] >= height
    aside = np.max(np.abs(grip[..., :2] - block[..., :2]), axis=-1) >= BLOCK_SIZE + 0.02
    return above | aside


@dataclass(frozen=True)
class FetchTask:
    """The Fetch 4-block world as a goal task (policy frame: the focus block first)."""

    initial_state: Any = "training"  # "training" (D.1), "table" (evaluation), "chained" or an InitialStateConfig
    horizon: int = 50
    obs_dim: int = OBS_DIM
    goal_dim: int = GOAL_DIM
    act_dim: int = 4
    z_tolerance: float | None = None  # goals also need each block this close in height (None: the paper)
    xy_tolerance: float | None = None  # ... and this close horizontally (None: the paper)
    release_height: float | None = None  # rewards of resting goals also need the gripper clear (None: the paper)

    @property
    def programs(self) -> tuple[str, ...]:
        """The goal setter's atomic programs."""
        return atomic_programs()

    def make_batch(self, n_envs: int, threads: int = 1) -> FetchBatch:
        """A batch of ``n_envs`` simulations of this task."""
        return FetchBatch(n_envs, self.initial_state, self.horizon, threads, self.z_tolerance, self.xy_tolerance)

    def compute_reward(self, ag: np.ndarray, g: np.ndarray, info: Any = None) -> np.ndarray:
        """The env's sparse reward: 0 when every block is within ε of its target, else -1. With
        ``release_height`` and the next observation in ``info["o2"]``, a goal that sets the moved
        block at rest also needs the gripper to have let go of it (``gripper_clear``)."""
        reached = goals_reached(ag, g, z_tolerance=self.z_tolerance, xy_tolerance=self.xy_tolerance)
        if self.release_height is not None and isinstance(info, dict) and "o2" in info:
            reached = reached & (~resting_goal(g) | gripper_clear(info["o2"], self.release_height))
        return reached.astype(np.float64) - 1.0

    def applicable(self, raw_obs: np.ndarray, program: str) -> bool:
        """φ of ``program`` in an env-frame observation."""
        return applicable(raw_obs, program)
