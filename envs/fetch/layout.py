"""Geometry and vector layouts of the Fetch 4-block, 2-zone world (AlphaNPI-X, Appendix D.1).

Everything here is plain constants and numpy helpers: no MuJoCo. The MJCF scene
(``assets/fetch_blocks.xml``) must agree with these numbers; ``tests/test_fetch_env.py``
checks that against the loaded model.

Observation layout (70 values; the paper's state ``s = [X1, X2, X3, X4, Y]`` with the four
block positions first)::

    [ 0:12]  block positions p0..p3 (x, y, z each)                 = the achieved goal
    [12:15]  gripper (grip site) position
    [15:17]  finger joint positions (right, left); 0 = closed, 0.05 = fully open
    [17:20]  gripper linear velocity * dt
    [20:22]  finger joint velocities * dt
    [22:34]  block positions relative to the gripper (p_i - grip), 4 x 3
    [34:46]  block orientations as xyz Euler angles, 4 x 3
    [46:58]  block linear velocities relative to the gripper * dt, 4 x 3
    [58:70]  block angular velocities (body frame) * dt, 4 x 3

The paper gives the size (70) and content (block positions first, then "additional
information about the gripper and velocities") but not the exact layout; this one is Fetch's
own observation (gripper 10 values) plus 15 values per block, as in the multi-block Fetch envs
of Li et al. 2020. Velocities are scaled by the env step ``dt`` (0.04 s), as
gymnasium-robotics' Fetch does.
Every per-block group is ordered by block index, so the circular permutation of
``permutation.py`` rotates all five groups together.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_BLOCKS = 4
BLOCK_HALF = 0.025          # d, the paper's "block radius" (half the cube side)
BLOCK_SIZE = 2 * BLOCK_HALF  # one block height: the stacking offset 2d of Appendix C
TABLE_TOP = 0.4              # z of the table surface
REST_Z = TABLE_TOP + BLOCK_HALF  # centre height of a block resting on the table
EPSILON = 0.05               # the HER threshold the paper uses for every per-block test

BLOCK_NAMES = ("b0", "b1", "b2", "b3")            # PDDL object names
BLOCK_COLOURS = ("orange", "orange", "blue", "blue")
ZONE_NAMES = ("orange", "blue")

OBS_DIM = 70
GOAL_DIM = 3 * N_BLOCKS
BLOCK_POS = slice(0, 12)
GRIP_POS = slice(12, 15)
FINGER_POS = slice(15, 17)
GRIP_VEL = slice(17, 20)
FINGER_VEL = slice(20, 22)
BLOCK_REL_POS = slice(22, 34)
BLOCK_EULER = slice(34, 46)
BLOCK_VELP = slice(46, 58)
BLOCK_VELR = slice(58, 70)
PER_BLOCK_GROUPS = (BLOCK_POS, BLOCK_REL_POS, BLOCK_EULER, BLOCK_VELP, BLOCK_VELR)

FINGER_TOUCH = 0.0241   # finger joint value at which the inner faces touch a block's sides
FINGER_OPEN = 0.05      # joint limit


@dataclass(frozen=True)
class Zone:
    """A coloured rectangle on the table with two parking slots along x."""

    name: str
    centre: tuple[float, float]
    half: tuple[float, float]
    slot_dx: float = 0.04

    def slots(self) -> np.ndarray:
        """Centres of the two slots at resting height, shape (2, 3)."""
        cx, cy = self.centre
        return np.array([[cx - self.slot_dx, cy, REST_Z], [cx + self.slot_dx, cy, REST_Z]])

    def contains_xy(self, xy: np.ndarray) -> np.ndarray:
        """Whether points (..., 2) lie inside the rectangle (boundary included)."""
        d = np.abs(np.asarray(xy)[..., :2] - np.asarray(self.centre))
        return (d[..., 0] <= self.half[0]) & (d[..., 1] <= self.half[1])


# The table is centred at (1.3, 0.75); the zones sit either side of the block region,
# so blocks never start in a zone and every zone goal is a real move.
ZONES: dict[str, Zone] = {
    "orange": Zone("orange", (1.30, 0.50), (0.09, 0.05)),
    "blue": Zone("blue", (1.30, 1.00), (0.09, 0.05)),
}

# Where blocks start (centres; the PickAndPlace object range 0.15 around the home gripper).
BLOCK_REGION_CENTRE = (1.34, 0.75)
BLOCK_REGION_HALF = 0.15
# A slot is free when no other resting block's centre is this close (horizontally): one block
# width and 5 mm, so that a block placed 2 cm off the neighbouring slot (8 cm away) leaves this
# one free. With 2 cm of margin, such a block took both slots and the next Move_To_Zone into the
# zone had none (MultiStep-Moving 0.26 -> 0.91 with the same policy, 100 episodes; README).
SLOT_CLEARANCE = BLOCK_SIZE + 0.005
# Two blocks placed on the table keep at least this Chebyshev distance between centres: room for
# the gripper beside a block, for opened fingers and for the palm (the gripper_link is 0.126 m
# wide along y, its underside 0.053 m above the grip site) should a tower grow there.
MIN_SEPARATION = BLOCK_SIZE + 0.045


def block_positions(obs: np.ndarray) -> np.ndarray:
    """The four block positions of observations (..., 70) as (..., 4, 3)."""
    obs = np.asarray(obs)
    return obs[..., BLOCK_POS].reshape(obs.shape[:-1] + (N_BLOCKS, 3))


def goal_positions(goal: np.ndarray) -> np.ndarray:
    """A goal vector (..., 12) as (..., 4, 3)."""
    goal = np.asarray(goal)
    return goal.reshape(goal.shape[:-1] + (N_BLOCKS, 3))


def block_index(name: str) -> int:
    """Index of a block given its PDDL name (``b2``) or number (``2``)."""
    key = name.lower().removeprefix("b")
    if key.isdigit() and int(key) < N_BLOCKS:
        return int(key)
    raise ValueError(f"unknown block {name!r}; expected one of {BLOCK_NAMES}")
