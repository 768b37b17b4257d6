"""A queryable expert: the scripted controller's action for any state, with its phase read off the state.

:class:`~asg.envs.fetch.scripted.ScriptedController` keeps its phase in memory, so it can only
act along its own trajectory. Imitation by DAgger (Ross et al. 2011) asks the expert what to do
in the states the *learner* visits: after a nudged block, a dropped grasp or a block still held
over its target. :func:`expert_action` answers from the observation and goal alone, with the
same waypoints and gains as the scripted controller:

- the block is at its target: release it if held, then retreat upwards;
- the block is held: lift to the travel height, carry it over the target, place it;
- otherwise: rise, go above the block, descend with the fingers open, close them.

Phase boundaries carry a little hysteresis in the state itself (a descent that has started
keeps a wider alignment tolerance), so the expert does not chatter between phases.
"""
from __future__ import annotations

import numpy as np

from asg.envs.fetch.layout import FINGER_POS, FINGER_TOUCH, GRIP_POS, N_BLOCKS, block_positions
from asg.envs.fetch.scripted import ScriptedConfig, _dist_xy, open_command, travel_height, waypoint_action

HELD_DISTANCE = 0.02  # the block centre within this of the grip site, fingers closed on it: held
CLOSED_ON_BLOCK = FINGER_TOUCH + 0.002  # finger joints below this: closed (on a block or on nothing);
#   opened fingers settle at ScriptedConfig.finger_open = 0.032
AT_TARGET = 0.02  # a released block this close to its target is done (ε = 0.05 is the success test)
RELEASE_XY, RELEASE_Z = 0.01, 0.008  # a held block this close to its target is let go
GRASP_DISTANCE = 0.01  # the grip site this close to the block centre: close the fingers
HYSTERESIS = 2.0  # a started descent or placement tolerates this times the travel tolerance


def expert_action(obs: np.ndarray, goal: np.ndarray, block: int = 0,
                  config: ScriptedConfig = ScriptedConfig()) -> np.ndarray:
    """The expert's action (4,) for moving ``block`` to its target in ``goal`` (12) from ``obs`` (70).

    Works in the env frame and in the policy's rotated frame alike (there ``block`` is 0).
    """
    obs, c = np.asarray(obs, dtype=float), config
    blocks = block_positions(obs)
    target = np.asarray(goal, dtype=float).reshape(N_BLOCKS, 3)[block]
    grip, here = obs[GRIP_POS], blocks[block]
    closed = bool(np.all(obs[FINGER_POS] < CLOSED_ON_BLOCK))
    held = closed and np.linalg.norm(here - grip) < HELD_DISTANCE

    def move(way: np.ndarray, finger: float) -> np.ndarray:
        return waypoint_action(grip, way, finger, c)

    def open_fingers() -> float:
        # Closed fingers are opened with a full command: fingers move by the command (a position
        # delta), so open_command's few millimetres would be a label too faint to clone next to
        # the -1 of every grasping state, and the learner would never let go.
        return 1.0 if closed else open_command(obs, c)

    offset = grip - here  # where the grip sits relative to the block (kept while carrying)
    if held:
        xy, dz = _dist_xy(here, target), here[2] - target[2]
        if xy < RELEASE_XY and abs(dz) < RELEASE_Z:  # release
            return move(grip, open_fingers())
        carry_z = travel_height(blocks, block, here, target, (target[2],), c)  # not the block's own height: it rises
        placing = xy < c.coarse_tol or (xy < HYSTERESIS * c.coarse_tol and grip[2] < carry_z - c.coarse_tol)
        if placing:
            return move(target + offset, -1.0)
        if grip[2] < carry_z - c.coarse_tol and xy > HYSTERESIS * c.coarse_tol:  # lift straight up first
            return move(np.array([grip[0], grip[1], carry_z]), -1.0)
        return move(np.array([target[0], target[1], carry_z]) + offset * np.array([1.0, 1.0, 0.0]), -1.0)
    if np.linalg.norm(here - target) < AT_TARGET:  # done: retreat above the block, fingers open
        up = np.array([target[0], target[1], target[2] + c.retreat])
        if grip[2] >= up[2] - c.coarse_tol or _dist_xy(grip, here) > c.corridor:
            return np.array([0.0, 0.0, 0.0, open_command(obs, c)])  # stay, fingers held open
        return move(up, open_fingers())
    if np.linalg.norm(grip - here) < GRASP_DISTANCE:  # grasp
        return move(here, -1.0)
    approach_z = travel_height(blocks, block, grip, here, (here[2],), c)
    aligned = _dist_xy(grip, here)
    descending = grip[2] < approach_z - c.coarse_tol
    if aligned < c.coarse_tol or (descending and aligned < HYSTERESIS * c.coarse_tol
                                  and grip[2] < here[2] + c.clearance):
        return move(here, open_fingers())  # descend (the descent finishes aligning in x and y)
    if descending:  # rise first, so that nothing is swept off the table
        return move(np.array([grip[0], grip[1], approach_z]), open_fingers())
    return move(np.array([here[0], here[1], approach_z]), open_fingers())


def expert_actions(obs: np.ndarray, goals: np.ndarray, block: int = 0,
                   config: ScriptedConfig = ScriptedConfig()) -> np.ndarray:
    """:func:`expert_action` over a batch: obs (n, 70), goals (n, 12) -> (n, 4) float32."""
    obs, goals = np.asarray(obs), np.asarray(goals)
    out = np.empty((obs.shape[0], 4), dtype=np.float32)
    for i in range(obs.shape[0]):
        out[i] = expert_action(obs[i], goals[i], block, config)
    return out
