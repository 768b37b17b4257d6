"""Tiny hand-made MDPs for the learning tests (not collected: no ``test_`` prefix).

``Corridor``: cells 0..6, start at 2; actions 0 left, 1 right, 2 up. Cells 0 and 6 are both
"sides" (the model's ``(at-side)``), but cell 0 is a pit the agent never leaves; only from cell 6
does "up" reach the goal ``(at-goal)``. The model (``CORRIDOR_PDDL``) only says "reach a side,
then climb", so the nearest side is the wrong one: a single skill per landmark learns the pit
(Landmark-HRL fails, like Mario's ladder), and two diverse skills find both sides (ASGRL works).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from asg.envs.labeling import Labeler
from asg.learning.registry import DomainBinding
from asg.learning.world_models.program_models import AtomWorld
from asg.planning import ground, parse_text
from asg.planning.programs import compile_library
from asg.planning.task import Atom

CORRIDOR_DOMAIN = """
(define (domain corridor)
  (:requirements :strips)
  (:predicates (at-start) (at-side) (at-goal))
  (:action go_side :parameters () :precondition (and) :effect (and (at-side)))
  (:action climb :parameters () :precondition (and (at-side)) :effect (and (at-goal))))
"""
CORRIDOR_PROBLEM = """
(define (problem corridor1) (:domain corridor) (:init (at-start)) (:goal (and (at-goal))))
"""


class Corridor(gym.Env):
    """The two-sided corridor described in the module docstring."""

    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = 200, length: int = 7, start: int = 2) -> None:
        self.length, self.start, self.max_steps = length, start, max_steps
        self.action_space = spaces.Discrete(3)
        self.observation_space = spaces.Box(0, length, (2,), np.int8)
        self.pos, self.climbed, self.t = start, False, 0

    def hashable_state(self) -> tuple[int, bool]:
        return (self.pos, self.climbed)

    def _obs(self) -> np.ndarray:
        return np.array([self.pos, int(self.climbed)], dtype=np.int8)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.pos, self.climbed, self.t = self.start, False, 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        if self.pos != 0:  # cell 0 is a pit
            if action == 0:
                self.pos -= 1
            elif action == 1:
                self.pos = min(self.length - 1, self.pos + 1)
            elif action == 2 and self.pos == self.length - 1:
                self.climbed = True
        terminated = self.climbed
        return self._obs(), float(terminated), terminated, self.t >= self.max_steps and not terminated, {}


CORRIDOR_LABELER = Labeler.from_table("corridor", {
    "(at-start)": lambda s: s[0] == 2,
    "(at-side)": lambda s: s[0] in (0, 6),
    "(at-goal)": lambda s: s[1],
})


def corridor_binding() -> DomainBinding:
    """The corridor as a learner sees a domain."""
    task = ground(parse_text(CORRIDOR_DOMAIN, CORRIDOR_PROBLEM, name="corridor"))
    return DomainBinding("corridor", lambda max_steps=200: Corridor(max_steps=max_steps),
                         CORRIDOR_LABELER, task, "<corridor>")


# ------------------------------------------------------------------ a world of one's own (plug-in tests)
class KeyDoorCorridor(gym.Env):
    """Cells 0..6, start at 3: key at 0, a locked door at 5, the goal at 6. Actions: 0 left,
    1 right, 2 pick up (at the key), 3 open (next to the door, with the key). Deterministic; no
    ``hashable_state``, no ``is_success``: its goal states are the ones a step ends the episode in
    with reward 1. A world of one's own for the plug-in and ``asg mvtr --env`` tests."""

    metadata = {"render_modes": []}
    KEY, DOOR, GOAL, START = 0, 5, 6, 3

    def __init__(self, max_steps: int = 200) -> None:
        self.max_steps = max_steps
        self.action_space = spaces.Discrete(4)
        self.observation_space = spaces.Box(0, 6, (3,), np.int8)
        self.pos, self.has_key, self.door_open, self.t = self.START, False, False, 0

    def _obs(self) -> np.ndarray:
        return np.array([self.pos, self.has_key, self.door_open], dtype=np.int8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.has_key, self.door_open, self.t = self.START, False, False, 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        if action == 0:
            self.pos = max(0, self.pos - 1)
        elif action == 1 and (self.pos + 1 != self.DOOR or self.door_open):
            self.pos = min(self.GOAL, self.pos + 1)
        elif action == 2 and self.pos == self.KEY:
            self.has_key = True
        elif action == 3 and self.pos == self.DOOR - 1 and self.has_key:
            self.door_open = True
        terminated = self.pos == self.GOAL
        return self._obs(), float(terminated), terminated, self.t >= self.max_steps and not terminated, {}


KEYDOOR_LABELS = {
    "(has-key)": lambda env: env.has_key,
    "(door-open)": lambda env: env.door_open,
    "(at-goal)": lambda env: env.pos == KeyDoorCorridor.GOAL,
}
# the user's model of the key-door corridor, as a file's text (its domain and problem)
KEYDOOR_PDDL = """
(define (domain keydoor)
  (:requirements :strips)
  (:predicates (has-key) (door-open) (at-goal))
  (:action take-key :parameters () :precondition (and) :effect (and (has-key)))
  (:action open-door :parameters () :precondition (and (has-key)) :effect (and (door-open)))
  (:action walk-to-goal :parameters () :precondition (and (door-open)) :effect (and (at-goal))))
(define (problem keydoor1) (:domain keydoor) (:init) (:goal (and (at-goal))))
"""


# A three-bit program library for the meta-controller tests: Set_X / Unset_X atomic (X in a, b, c),
# Set_AB at level 1 (bits a and b on), Set_All at level 2 (all three on; may call Set_AB). Action
# indices: 0-2 Set_A..C, 3-5 Unset_A..C, 6 Set_AB, 7 Set_All, 8 Stop; task rows 0 Set_AB, 1 Set_All.
BITS = """\
; @program Set ?x - bit
;   @level 0
;   @action set
; @program Unset ?x - bit
;   @level 0
;   @action unset
; @program Set_AB
;   @level 1
;   @calls Set Unset
;   @pre (and)
;   @post (and (on a) (on b))
; @program Set_All
;   @level 2
;   @calls Set Unset Set_AB
;   @pre (and)
;   @post (and (on a) (on b) (on c))
(define (domain bits)
  (:requirements :strips :typing :negative-preconditions)
  (:types bit)
  (:constants a b c - bit)
  (:predicates (on ?x - bit))
  (:action set :parameters (?x - bit) :precondition (not (on ?x)) :effect (on ?x))
  (:action unset :parameters (?x - bit) :precondition (on ?x) :effect (not (on ?x))))
(define (problem start) (:domain bits) (:init) (:goal (and (on a) (on b) (on c))))
"""


def bits_world(folder) -> AtomWorld:
    """The exact symbolic world of ``BITS``, compiled from a file written in ``folder``."""
    path = folder / "bits.pddl"
    path.write_text(BITS)
    return AtomWorld(compile_library(path))


def on(*bits: str) -> frozenset[Atom]:
    """The atoms (on X) of the given bits."""
    return frozenset(Atom("on", (b,)) for b in bits)
