"""One resolution per run (issue 38, part 6): ``asg train`` and a grid cell look their world up once
(``envs.domains.get_domain``, through ``registry.bind_domain``), build the config from that binding
and train with it. The spies count the real calls; every call still does its work."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import asg.envs.domains as domains
import asg.learning.registry as registry
from asg.cli.main import main
from asg.learning.asgrl.grid import Cell, run_cells

TINY = {"eval_interval": 1000, "eval_episodes": 1, "final_eval_episodes": 1}


@pytest.fixture
def lookups(monkeypatch) -> Counter:
    """How often each of ``get_domain`` and ``bind_domain`` ran, wherever it was imported."""
    calls: Counter = Counter()
    for name, real in (("get_domain", domains.get_domain), ("bind_domain", registry.bind_domain)):
        def spy(*args, _name=name, _real=real, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)
        for module in [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("asg.")]:
            if getattr(module, name, None) is real:
                monkeypatch.setattr(module, name, spy)
    return calls


def test_asg_train_resolves_its_domain_once(tmp_path, lookups):
    result = CliRunner().invoke(main, ["train", "--domain", "mario", "--steps", "500", "--eval-episodes", "1",
                                       "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert lookups == {"get_domain": 1, "bind_domain": 1}


def test_asg_train_on_a_world_of_ones_own_with_deep_skills_resolves_it_once(tmp_path, lookups, monkeypatch):
    """The plug-in world's step budgets and observation (``plugin_config``, ``deep_input``) come from
    the same binding."""
    from asg.envs import plugins

    monkeypatch.chdir(Path(__file__).resolve().parents[1] / "examples" / "doorkey")
    before = set(plugins.plugin_names())
    try:
        result = CliRunner().invoke(main, ["train", "--env", "MiniGrid-DoorKey-5x5-v0", "--labeler", "labels:DOORKEY",
                                           "--model", "doorkey.pddl", "--skills", "deep", "--steps", "300",
                                           "--eval-episodes", "1", "--out", str(tmp_path / "own"), "--quiet"])
    finally:
        for name in set(plugins.plugin_names()) - before:
            plugins.unregister_domain(name)
    assert result.exit_code == 0, result.output
    assert lookups == {"get_domain": 1, "bind_domain": 1}


def test_a_grid_cell_resolves_its_world_once(tmp_path, lookups):
    runs = run_cells([Cell("mario", "goal-q", 0, steps=1000, overrides=TINY)], tmp_path)
    assert [r.result.status for r in runs] == ["finished"]
    assert lookups == {"get_domain": 1, "bind_domain": 1}
