"""A seeded fuzz of the config reader: any JSON-like value at any key either reads into a config that
round-trips through strict JSON, or is a one-line ``ConfigError`` starting with ``config``."""
from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from asg.learning.asgrl.config import config_to_dict, make_config
from asg.learning.configio import read_config, to_dict
from asg.learning.errors import ConfigError
from asg.learning.goal_policy import config as goal_cfg
from asg.learning.npi import config as npi_cfg
from asg.learning.world_models.behaviour_model import BEHAVIOUR_PRESETS

VALUES: list[Any] = [True, False, None, 0, 1, -1, 2, 3, 0.5, 1.0, -0.5, 1e-9, 1e9, 10**30, float("nan"),
                     float("inf"), -float("inf"), "", "x", "success", "kmeans", "ray", [], [1], [64, 64],
                     [["(has-key)", 2]], {}, {"a": 1}, {"(has-key)": 2}, {"kind": "flat"}]


def _paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and list index of a config dict, containers included."""
    out = [path] if path else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*path, i))
    return out


def _mutate(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(data))
        node = data
        for key in path[:-1]:
            node = node[key]
        roll = rng.random()
        if roll < 0.1 and isinstance(node, dict):
            node.pop(path[-1], None)  # a missing key takes its default
        elif roll < 0.2 and isinstance(node, dict):
            node[str(path[-1]) + "_"] = 1  # an unknown key
        else:
            node[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return data


CASES = [
    (type(make_config("mario", "asgrl")), config_to_dict(make_config("mario", "asgrl"))),
    (type(make_config("mario", "goal-q")), config_to_dict(make_config("pixel-mario", "goal-q"))),
    (goal_cfg.GoalPolicyConfig, goal_cfg.to_dict(goal_cfg.fast())),
    (npi_cfg.NPIConfig, npi_cfg.to_dict(npi_cfg.NPIConfig())),
    (type(BEHAVIOUR_PRESETS["fast"]), to_dict(BEHAVIOUR_PRESETS["fast"])),
]


@pytest.mark.parametrize(("cls", "base"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_fuzzed_configs_read_or_fail_cleanly(cls, base):
    rng = random.Random(14)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(400):
        data = _mutate(base, rng)
        try:
            cfg = read_config(cls, data)
        except ConfigError as err:
            message = str(err)
            assert message.startswith("config") and ": " in message and "\n" not in message, message
            outcomes["refused"] += 1
            continue
        text = json.dumps(to_dict(cfg), allow_nan=False)  # no Infinity or NaN ever reaches a file
        assert read_config(cls, json.loads(text)) == cfg
        outcomes["read"] += 1
    assert outcomes["refused"] > 100 and outcomes["read"] > 0, outcomes
