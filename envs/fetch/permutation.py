"""The circular permutation trick of AlphaNPI-X (Appendix D.1).

The goal-conditioned policy always moves the block in the first slot of the observation.
To act on block ``j`` the observation (and goal) is rotated so that the blocks appear in the
order ``j, j+1, j+2, j+3`` (mod 4); ``unrotate_*`` undoes it. All functions accept a leading
batch shape and return new arrays.
"""
from __future__ import annotations

import numpy as np

from asg.envs.fetch.layout import N_BLOCKS, OBS_DIM, PER_BLOCK_GROUPS


def block_order(j: int) -> np.ndarray:
    """Block indices in rotated order: position k of the rotated vector holds block ``order[k]``."""
    _check(j)
    return (np.arange(N_BLOCKS) + j) % N_BLOCKS


def rotate_blocks(per_block: np.ndarray, j: int) -> np.ndarray:
    """Rotate an array (..., 4, k) over its block axis so that block ``j`` comes first."""
    return np.roll(np.asarray(per_block), -_check(j), axis=-2)


def unrotate_blocks(per_block: np.ndarray, j: int) -> np.ndarray:
    """Inverse of :func:`rotate_blocks`."""
    return np.roll(np.asarray(per_block), _check(j), axis=-2)


def rotate_goal(goal: np.ndarray, j: int) -> np.ndarray:
    """Rotate goal vectors (..., 12) so that block ``j``'s target comes first."""
    goal = np.asarray(goal)
    out = rotate_blocks(goal.reshape(goal.shape[:-1] + (N_BLOCKS, 3)), j)
    return out.reshape(goal.shape)


def unrotate_goal(goal: np.ndarray, j: int) -> np.ndarray:
    """Inverse of :func:`rotate_goal`."""
    return rotate_goal(goal, (-_check(j)) % N_BLOCKS)


def rotate_observation(obs: np.ndarray, j: int) -> np.ndarray:
    """Rotate observations (..., 70): every per-block group moves block ``j`` to the front."""
    obs = np.asarray(obs)
    if obs.shape[-1] != OBS_DIM:
        raise ValueError(f"observation must have {OBS_DIM} values, got shape {obs.shape}")
    out = obs.copy()
    for group in PER_BLOCK_GROUPS:
        out[..., group] = rotate_goal(obs[..., group], j)
    return out


def unrotate_observation(obs: np.ndarray, j: int) -> np.ndarray:
    """Inverse of :func:`rotate_observation`."""
    return rotate_observation(obs, (-_check(j)) % N_BLOCKS)


def rotate_dict(obs: dict, j: int) -> dict:
    """Rotate a GoalEnv observation dict (observation, achieved_goal, desired_goal)."""
    return {
        "observation": rotate_observation(obs["observation"], j),
        "achieved_goal": rotate_goal(obs["achieved_goal"], j),
        "desired_goal": rotate_goal(obs["desired_goal"], j),
    }


def unrotate_dict(obs: dict, j: int) -> dict:
    """Inverse of :func:`rotate_dict`."""
    return rotate_dict(obs, (-_check(j)) % N_BLOCKS)


def _check(j: int) -> int:
    if not 0 <= int(j) < N_BLOCKS or int(j) != j:
        raise ValueError(f"block index must be in 0..{N_BLOCKS - 1}, got {j!r}")
    return int(j)
