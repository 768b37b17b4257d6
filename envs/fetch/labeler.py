"""The Fetch labeler: a 70-d state -> the true atoms of the symbolic model.

Every test uses the paper's ε = 0.05 (the HER threshold) or the block geometry, so the
symbolic φ and ψ of ``pddl_models/fetch_programs.pddl`` can be evaluated on real states:

- ``(on a b)``      a is within ε of the stacked position ``p_b + (0, 0, 2d)`` (Appendix C's
                    "sphere of radius ε around an ideal position") and its height is within d of
                    it: as ε = 2d, the sphere alone would also hold a block two levels up.
- ``(on-table b)``  b's centre is within d of the resting height (one block up is not).
- ``(in-zone b z)`` b is on the table and its centre lies in zone z's rectangle.
- ``(zone-full z)`` both slots of z hold a block resting on the table.
- ``(clear b)``     no block is on b and none rests above b's footprint (derived; the PDDL
                    model writes it out as "no (on ?x b)").
- ``(holding b)``   b's centre is within d of the grip site and both fingers are closed on it;
  ``(hand-empty)``  when no block is held. These describe the gripper only; no program uses them.

Block names are ``b0..b3`` and zone names ``orange``/``blue`` (the PDDL objects).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from asg.envs.fetch.layout import (
    BLOCK_HALF,
    BLOCK_NAMES,
    BLOCK_SIZE,
    EPSILON,
    FINGER_POS,
    FINGER_TOUCH,
    GRIP_POS,
    N_BLOCKS,
    REST_Z,
    SLOT_CLEARANCE,
    ZONE_NAMES,
    ZONES,
    block_positions,
)
from asg.planning.task import Atom

HOLD_SLACK = 0.004  # finger opening above the touching value that still counts as a grasp


@dataclass(frozen=True)
class Labels:
    """The relations as boolean arrays; ``atoms()`` turns them into symbolic atoms."""

    on: np.ndarray         # (4, 4): on[a, b]
    on_table: np.ndarray   # (4,)
    in_zone: np.ndarray    # (4, 2), zones in ZONE_NAMES order
    zone_full: np.ndarray  # (2,)
    clear: np.ndarray      # (4,)
    holding: np.ndarray    # (4,)

    def atoms(self) -> frozenset[Atom]:
        """The true atoms, as the planning core writes them."""
        out: set[Atom] = set()
        for a in range(N_BLOCKS):
            for b in range(N_BLOCKS):
                if self.on[a, b]:
                    out.add(Atom("on", (BLOCK_NAMES[a], BLOCK_NAMES[b])))
            if self.on_table[a]:
                out.add(Atom("on-table", (BLOCK_NAMES[a],)))
            if self.clear[a]:
                out.add(Atom("clear", (BLOCK_NAMES[a],)))
            if self.holding[a]:
                out.add(Atom("holding", (BLOCK_NAMES[a],)))
            for z, zone in enumerate(ZONE_NAMES):
                if self.in_zone[a, z]:
                    out.add(Atom("in-zone", (BLOCK_NAMES[a], zone)))
        for z, zone in enumerate(ZONE_NAMES):
            if self.zone_full[z]:
                out.add(Atom("zone-full", (zone,)))
        if not self.holding.any():
            out.add(Atom("hand-empty"))
        return frozenset(out)


def slot_occupancy(positions: np.ndarray, zone: str, exclude: int | None = None) -> np.ndarray:
    """Which of ``zone``'s two slots hold a table-level block (other than ``exclude``), shape (2,)."""
    positions = np.asarray(positions, dtype=float)
    slots = ZONES[zone].slots()
    resting = np.abs(positions[:, 2] - REST_Z) < BLOCK_HALF
    if exclude is not None:
        resting = resting.copy()
        resting[exclude] = False
    dist = np.linalg.norm(positions[None, :, :2] - slots[:, None, :2], axis=-1)  # (2 slots, 4)
    return ((dist < SLOT_CLEARANCE) & resting[None, :]).any(axis=1)


def block_relations(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``on`` (N, a, b), ``on-table`` (N, 4) and ``in-zone`` (N, 4, zones) of N states' block
    positions (N, 12), vectorised over states (what ψ of a whole batch needs)."""
    p = np.asarray(positions, dtype=float).reshape(-1, N_BLOCKS, 3)
    ideal = p[:, None, :, :] + np.array([0.0, 0.0, BLOCK_SIZE])        # (N, 1, b, 3): spot on b
    offset = p[:, :, None, :] - ideal                                 # (N, a, b, 3)
    on = (np.linalg.norm(offset, axis=-1) <= EPSILON) & (np.abs(offset[..., 2]) < BLOCK_HALF)
    on[:, np.arange(N_BLOCKS), np.arange(N_BLOCKS)] = False
    on_table = np.abs(p[..., 2] - REST_Z) < BLOCK_HALF
    in_zone = np.stack([ZONES[z].contains_xy(p[..., :2]) & on_table for z in ZONE_NAMES], axis=-1)
    return on, on_table, in_zone


def label_positions(positions: np.ndarray, grip: np.ndarray | None = None,
                    fingers: np.ndarray | None = None) -> Labels:
    """Relations of four block positions (4, 3); gripper position and finger joints optional."""
    p = np.asarray(positions, dtype=float).reshape(N_BLOCKS, 3)
    on, on_table, in_zone = (r[0] for r in block_relations(p))
    zone_full = np.array([slot_occupancy(p, z).all() for z in ZONE_NAMES])
    dxy = np.abs(p[:, None, :2] - p[None, :, :2]).max(axis=-1)        # Chebyshev (a, b)
    above = (dxy < BLOCK_SIZE) & (p[:, None, 2] > p[None, :, 2] + BLOCK_HALF)
    np.fill_diagonal(above, False)
    clear = ~(on.any(axis=0) | above.any(axis=0))
    holding = np.zeros(N_BLOCKS, dtype=bool)
    if grip is not None and fingers is not None:
        closed = bool(np.all(np.asarray(fingers) <= FINGER_TOUCH + HOLD_SLACK))
        near = np.linalg.norm(p - np.asarray(grip, dtype=float), axis=-1) < BLOCK_HALF
        holding = near & closed
    return Labels(on, on_table, in_zone, zone_full, clear, holding)


def label(obs: np.ndarray) -> Labels:
    """Relations of one 70-d observation (blocks in env order, not rotated)."""
    obs = np.asarray(obs, dtype=float)
    return label_positions(block_positions(obs), obs[GRIP_POS], obs[FINGER_POS])


def atoms(obs: np.ndarray) -> frozenset[Atom]:
    """The true atoms of one 70-d observation."""
    return label(obs).atoms()

