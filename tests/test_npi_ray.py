"""Meta-controller self-play on Ray actors gives exactly the traces of in-process play; without Ray,
a clear error; the backend options and their config fields."""
from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest
import torch

from asg.learning.errors import ConfigError
from asg.learning.npi.config import NPIConfig, SearchConfig, from_dict, to_dict
from asg.learning.npi.mcts import Trace
from asg.learning.npi.network import AlphaNPINet
from asg.learning.npi.pipeline import train_meta_controller
from asg.learning.npi.selfplay import EpisodeJob, SelfPlay, resolve_backend
from asg.learning.world_models.program_models import exact_fetch_model

LEVEL1 = "Move_All_To_Zone_ORANGE"
NO_RAY = r"pip install 'asg\[distributed\]'"


@pytest.fixture(scope="module")
def model():
    return exact_fetch_model()


def untrained_snapshot(model):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    table = model.table
    return AlphaNPINet(model.state_dim, table.n_actions, len(table.tasks)).snapshot()


def assert_same_trace(a: Trace, b: Trace) -> None:
    """Equal decisions, states, masks, tree policies and outcomes, callees included."""
    assert (a.task, a.success, a.value, len(a.steps)) == (b.task, b.success, b.value, len(b.steps))
    np.testing.assert_array_equal(a.final_state, b.final_state)
    for x, y in zip(a.steps, b.steps):
        assert x.action == y.action
        for name in ("state", "legal", "policy"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)
        assert (x.call is None) == (y.call is None)
        if x.call is not None:
            assert_same_trace(x.call, y.call)


def test_two_local_ray_workers_match_in_process_play(model):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'asg[distributed]'); "
                                            "add it to the CI install to run this test")
    started_here = not ray.is_initialized()
    table, snap = model.table, untrained_snapshot(model)
    # Exploring and exploit episodes of a level-1 and a level-2 program (whose calls run sub-searches).
    jobs = [EpisodeJob(table.index(name), 100 + k, k % 2 == 0)
            for k, name in enumerate([LEVEL1, "Stack_All_Blocks", LEVEL1, "Clean_Table", "Stack_All_To_Zone_BLUE"])]
    guided = SearchConfig(simulations=6, sub_simulations=2, simulations_exploit=3, landmark="bonus")
    plain = replace(guided, landmark="off")
    want = SelfPlay(model, guided).run(jobs, snap)
    want_plain = SelfPlay(model, plain).run(jobs[:1], snap)
    with SelfPlay(model, guided, workers=2, backend="ray") as remote:
        assert remote.backend == "ray"
        got = remote.run(jobs, snap)  # 5 jobs on 2 actors: uneven chunks
        got_plain = remote.with_search(plain).run(jobs[:1], snap)  # 1 job: one actor idle
        assert ray.is_initialized()
    assert ray.is_initialized() != started_here  # shut down exactly when the self-play started it
    assert [t.task for t in got] == [j.task for j in jobs]
    for a, b in zip(want + want_plain, got + got_plain):
        assert_same_trace(a, b)
    assert any(s.call is not None for t in got for s in t.steps)  # sub-call traces came back too


def test_without_ray_the_ray_backend_says_how_to_install_it(model, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    search = SearchConfig(simulations=2)
    with pytest.raises(ConfigError, match=NO_RAY):
        SelfPlay(model, search, workers=2, backend="ray")
    with pytest.raises(ConfigError, match=NO_RAY):
        SelfPlay(model, search, ray_address="10.0.0.1:6379")
    config = NPIConfig(search=search, iterations=1, episodes_per_iteration=1, programs=(LEVEL1,))
    with pytest.raises(ConfigError, match=NO_RAY):
        train_meta_controller(tmp_path / "run", config=config, workers=2, ray_address="10.0.0.1:6379")
    assert not (tmp_path / "run").exists()  # failed before writing anything
    job = EpisodeJob(model.table.index(LEVEL1), 0, False)
    (trace,) = SelfPlay(model, search, workers=2).run([job], untrained_snapshot(model))  # local: no Ray needed
    assert trace.task == job.task


def test_backend_choice_and_config_fields():
    assert resolve_backend(None, None) == "local"
    assert resolve_backend(None, "auto") == "ray"
    assert resolve_backend("ray", None) == "ray"
    with pytest.raises(ConfigError, match="ray_address needs the ray backend"):
        resolve_backend("local", "auto")
    with pytest.raises(ConfigError, match="backend must be one of"):
        resolve_backend("mpi", None)
    with pytest.raises(ConfigError, match="ray_address"):
        NPIConfig(ray_address="auto")
    with pytest.raises(ConfigError, match="backend"):
        NPIConfig(backend="mpi")
    config = NPIConfig(workers=4, backend="ray", ray_address="10.0.0.1:6379")
    assert from_dict(to_dict(config)) == config
    old = to_dict(NPIConfig())
    del old["backend"], old["ray_address"]  # a config saved before these fields existed
    assert from_dict(old).backend == "local"
