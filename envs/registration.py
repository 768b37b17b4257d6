"""Gymnasium ids of asg. Entry points are strings so importing this module stays cheap."""
from __future__ import annotations

import gymnasium as gym

# (id, entry point, kwargs). One line per registered id; keep sorted by family.
ENV_SPECS: list[tuple[str, str, dict]] = [
    ("asg/FetchBlocks-v0", "asg.envs.fetch.env:FetchBlocksEnv", {"initial_state": "training"}),
    ("asg/FetchBlocksTable-v0", "asg.envs.fetch.env:FetchBlocksEnv", {"initial_state": "table"}),
    ("asg/Household-v0", "asg.envs.household:HouseholdEnv", {}),
    ("asg/Mario-v0", "asg.envs.mario:MarioEnv", {}),
    ("asg/MineCraft-v0", "asg.envs.minecraft:MineCraftEnv", {}),
    ("asg/PixelMario-v0", "asg.envs.mario:PixelMarioEnv", {}),
]


def register_envs() -> None:
    """Register every id in ``ENV_SPECS`` once (safe to call again)."""
    for env_id, entry_point, kwargs in ENV_SPECS:
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, kwargs=kwargs)
