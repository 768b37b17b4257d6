"""A scripted waypoint controller that executes any atomic program in the real Fetch env.

Phases: rise to a safe travel height, go above the block, descend with the fingers open,
grasp, lift, carry above the target, place, release, retreat. Each phase drives the grip site
to a waypoint with a clipped proportional command (the Fetch action moves the mocap by at most
0.05 m per step). It proves the env and Θ right, supplies demonstrations, and bounds what a
learned goal policy can reach in T = 50 steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from asg.envs.fetch.env import T_ATOMIC
from asg.envs.fetch.goal_setter import NotApplicableError
from asg.envs.fetch.layout import BLOCK_SIZE, FINGER_POS, FINGER_TOUCH, GRIP_POS, N_BLOCKS, block_positions


@dataclass(frozen=True)
class ScriptedConfig:
    """Waypoint and gain settings of the scripted controller."""

    clearance: float = 0.08
    """Travel height above the highest block near the path (and the block's start and target)."""
    corridor: float = 0.1
    """Blocks closer than this (horizontally) to the straight path count as obstacles."""
    finger_open: float = 0.032
    """Finger joint target while approaching (0.0241 touches the block): 8 mm of play a side."""
    gain: float = 1.0
    """Action = gain * (waypoint - grip) / 0.05, clipped to [-1, 1]."""
    coarse_tol: float = 0.015
    """Waypoint tolerance while travelling (m)."""
    fine_tol: float = 0.006
    """Waypoint tolerance when descending onto the block or the target (m)."""
    grasp_steps: int = 3
    release_steps: int = 2
    retreat: float = 0.06

    def __post_init__(self) -> None:
        if self.gain <= 0 or self.finger_open <= FINGER_TOUCH or self.clearance < BLOCK_SIZE:
            raise ValueError("gain > 0, finger_open > the touching value and clearance >= one block")


@dataclass
class ScriptedController:
    """Moves one block to its target; call :meth:`reset` at the start of every program."""

    config: ScriptedConfig = field(default_factory=ScriptedConfig)
    phase: str = "idle"
    block: int = 0
    target: np.ndarray = field(default_factory=lambda: np.zeros(3))
    approach_z: float = 0.0
    carry_z: float = 0.0
    _count: int = 0

    def reset(self, obs: np.ndarray, goal: np.ndarray, block: int | None = None) -> None:
        """Plan for moving ``block`` (default: the block whose target is farthest) to ``goal``."""
        blocks = block_positions(obs)
        targets = np.asarray(goal, dtype=float).reshape(N_BLOCKS, 3)
        if block is None:
            block = int(np.argmax(np.linalg.norm(targets - blocks, axis=-1)))
        self.block, self.target = block, targets[block].copy()
        grip = np.asarray(obs)[GRIP_POS]
        here = blocks[block]
        self.approach_z = self._height(blocks, grip, here, (here[2],))
        self.carry_z = self._height(blocks, here, self.target, (here[2], self.target[2]))
        self._count = 0
        holding = np.linalg.norm(here - grip) < 0.02 and self._closed(obs)
        self.phase = "lift" if holding else "rise"

    def _height(self, blocks: np.ndarray, start: np.ndarray, end: np.ndarray, floor: tuple) -> float:
        return travel_height(blocks, self.block, start, end, floor, self.config)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The action for the current observation (70-d, env block order)."""
        obs = np.asarray(obs)
        grip, block = obs[GRIP_POS], block_positions(obs)[self.block]
        c = self.config
        if self.phase == "rise":  # up first, so that nothing is swept off the table
            if grip[2] >= self.approach_z - c.coarse_tol or _dist_xy(grip, block) < c.coarse_tol:
                self.phase = "approach"
            return self._move(grip, np.array([grip[0], grip[1], self.approach_z]), self._open(obs))
        if self.phase == "approach":
            if _dist_xy(grip, block) < c.coarse_tol:
                self.phase = "descend"  # the descent finishes aligning in x and y
            return self._move(grip, np.array([block[0], block[1], self.approach_z]), self._open(obs))
        if self.phase == "descend":
            if np.linalg.norm(grip - block) < c.fine_tol:
                self.phase, self._count = "grasp", 0
            return self._move(grip, block, self._open(obs))
        if self.phase == "grasp":
            self._count += 1
            if self._count >= c.grasp_steps:
                self.phase = "lift"
            return self._move(grip, block, -1.0)
        if self.phase == "lift":
            if grip[2] >= self.carry_z - c.coarse_tol:
                self.phase = "carry"
            return self._move(grip, np.array([grip[0], grip[1], self.carry_z]), -1.0)
        if self.phase == "carry":
            if _dist_xy(block, self.target) < c.coarse_tol:
                self.phase = "place"
            return self._move(grip, np.array([self.target[0], self.target[1], self.carry_z]) + (grip - block)
                              * np.array([1.0, 1.0, 0.0]), -1.0)
        if self.phase == "place":
            if np.linalg.norm(block - self.target) < c.fine_tol:
                self.phase, self._count = "release", 0
            return self._move(grip, self.target + (grip - block), -1.0)
        if self.phase == "release":
            self._count += 1
            if self._count >= c.release_steps:
                self.phase = "retreat"
            return self._move(grip, grip, self._open(obs))
        if self.phase == "retreat":
            up = np.array([self.target[0], self.target[1], self.target[2] + c.retreat])
            if grip[2] >= up[2] - c.coarse_tol:
                self.phase = "idle"
            return self._move(grip, up, 0.0)
        return np.zeros(4)

    @property
    def done(self) -> bool:
        return self.phase == "idle"

    def _move(self, grip: np.ndarray, way: np.ndarray, finger: float) -> np.ndarray:
        return waypoint_action(grip, way, finger, self.config)

    def _open(self, obs: np.ndarray) -> float:
        return open_command(obs, self.config)

    @staticmethod
    def _closed(obs: np.ndarray) -> bool:
        return bool(np.all(np.asarray(obs)[FINGER_POS] < FINGER_TOUCH + 0.004))


def waypoint_action(grip: np.ndarray, way: np.ndarray, finger: float, config: ScriptedConfig) -> np.ndarray:
    """Action driving the grip site towards ``way`` (clipped proportional step) with ``finger``."""
    step = np.clip(config.gain * (way - grip) / 0.05, -1.0, 1.0)
    return np.array([step[0], step[1], step[2], finger])


def open_command(obs: np.ndarray, config: ScriptedConfig) -> float:
    """Finger command that drives both fingers towards ``finger_open`` (a position target)."""
    return float(np.clip(config.finger_open - np.asarray(obs)[FINGER_POS].mean(), -1.0, 1.0))


def travel_height(blocks: np.ndarray, moved: int, start: np.ndarray, end: np.ndarray, floor: tuple,
                  config: ScriptedConfig) -> float:
    """Travel height from ``start`` to ``end``: clear every block but ``moved`` near that line (and ``floor``)."""
    near = [b[2] for k, b in enumerate(blocks) if k != moved and _segment_distance(b, start, end) < config.corridor]
    return max([*near, *floor]) + config.clearance


def _dist_xy(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a)[:2] - np.asarray(b)[:2]))


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Horizontal distance from ``p`` to the segment from ``a`` to ``b``."""
    p, a, b = (np.asarray(v, dtype=float)[:2] for v in (p, a, b))
    ab = b - a
    t = 0.0 if not ab.any() else float(np.clip(np.dot(p - a, ab) / np.dot(ab, ab), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


@dataclass(frozen=True)
class AtomicRun:
    """Outcome of one atomic program run for T steps from the env's current state."""

    program: str
    applicable: bool
    success: bool
    steps: int
    final: np.ndarray  # the last 70-d observation


def run_atomic(env, program: str | int, controller: ScriptedController | None = None,
               steps: int = T_ATOMIC, on_step=None) -> AtomicRun:
    """Set ``program``'s goal from the current state and run the controller for ``steps`` steps.

    ``env`` is an unwrapped :class:`FetchBlocksEnv`; success is the goal reward at the end,
    i.e. ψ_i. A program whose φ fails is not run. ``on_step(env)`` is called after each step.
    """
    controller = controller or ScriptedController()
    try:
        obs, applicable = env.set_program(program)
    except NotApplicableError:
        return AtomicRun(str(program), False, False, 0, env.observation()["observation"])
    if not applicable:
        return AtomicRun(env.program, False, False, 0, obs["observation"])
    controller.reset(obs["observation"], env.goal)
    info = {"is_success": False}
    for _ in range(steps):
        obs, _, _, _, info = env.step(controller.act(obs["observation"]))
        if on_step is not None:
            on_step(env)
    return AtomicRun(env.program, True, bool(info["is_success"]), steps, obs["observation"])
