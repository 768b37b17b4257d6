"""Rollouts on 2 local Ray workers give exactly the episodes of a local worker; no Ray, clear error."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from asg.envs.fetch import FetchTask
from asg.learning.errors import ConfigError
from asg.learning.goal_policy.config import AgentConfig, ExploreConfig
from asg.learning.goal_policy.distributed import make_collector
from asg.learning.goal_policy.rollout import EpisodeSpec, RolloutWorker


def untrained_policy():
    import torch

    from asg.learning.goal_policy.ddpg import DDPGAgent

    torch.set_num_threads(1)
    return DDPGAgent(70, 12, 4, AgentConfig(hidden=(16, 16)), seed=0).snapshot()


def test_workers_without_ray_give_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ConfigError, match=r"pip install 'asg\[distributed\]'"):
        make_collector(FetchTask(horizon=3), n_envs=1, workers=2)
    assert isinstance(make_collector(FetchTask(horizon=3), n_envs=1), RolloutWorker)  # local: no Ray needed


def test_two_local_ray_workers_match_local_rollouts():
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'asg[distributed]'); "
                                      "add it to the CI install to run this test")
    task = FetchTask(horizon=4)
    policy = untrained_policy()
    specs = [EpisodeSpec(100 + k, program=p) for k, p in
             enumerate(["Stack_0_1", "Move_To_Zone_1_ORANGE", "Stack_3_2", "Move_To_Zone_2_BLUE"])]
    local = RolloutWorker(task, n_envs=2)
    want = local.run(specs, policy, ExploreConfig())
    local.close()
    ray_collector = make_collector(task, n_envs=2, workers=2)
    try:
        got = ray_collector.run(specs, policy, ExploreConfig())
    finally:
        ray_collector.close()
    assert got.programs == want.programs
    for name in ("o", "ag", "g", "u", "success", "start_obs", "final_obs"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert [s.values.tolist() for s in got.final_states] == [s.values.tolist() for s in want.final_states]


def test_rollout_workers_need_neither_torch_nor_ray():
    import subprocess

    code = ("import sys, asg.learning.goal_policy.rollout, asg.learning.goal_policy.distributed\n"
            "print(sorted(m for m in ('torch', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
