"""Every grid benchmark runs through the one grid runner (issue 38, part 2): benchmarks/figure3.py,
omitted_mechanisms.py, own_worlds.py and appendix_f.py each hand their cells to ``grid.run_cells``
(own_worlds' PPO cells, a learner from outside asg, to ``grid.run_jobs``), and a tiny grid of two
seeds gives the same per-cell metrics in this process and with ``--jobs 2`` (a local Ray), bit for
bit but for the clock and the folder name."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import benchmark_script
from test_grid import VARIES, grid_records

NO_RAY = "ray is not installed (pip install 'asg[distributed]'): only the serial grid ran"


def script(name: str) -> Any:
    """A benchmark script as a module."""
    return benchmark_script(name)


@pytest.fixture(scope="module")
def jobs():
    """2 with a local Ray of 2 CPUs running (``run_cells`` uses it), None without Ray."""
    if importlib.util.find_spec("ray") is None:
        yield None
        return
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield 2
    ray.shutdown()


def through_the_runner(monkeypatch, module: Any) -> list[int]:
    """Count the module's calls of ``run_cells`` (each still runs) and the cells they got: its own
    import of it, or the grid module's, which ``cli.options.run_benchmark_grid`` calls."""
    from asg.learning.asgrl import grid

    real, cells = grid.run_cells, []

    def spy(given, *args, **kwargs):
        cells.append(len(given))
        return real(given, *args, **kwargs)
    monkeypatch.setattr(grid, "run_cells", spy)
    if hasattr(module, "run_cells"):
        monkeypatch.setattr(module, "run_cells", spy)
    return cells


def same_without_clock(a: Any, b: Any) -> bool:
    """Equal JSON, ``wall_seconds`` / ``mean_wall_*`` and folder names aside."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in VARIES and not k.startswith("mean_wall")
                    and k not in ("command", "out", "commit")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(a) == strip(b)


def test_figure3_runs_its_cells_through_the_runner_the_same_on_ray(tmp_path, monkeypatch, jobs):
    fig = script("figure3")
    heard = through_the_runner(monkeypatch, fig)
    args = ["--preset", "paper", "--seeds", "2", "--steps", "1500", "--domains", "mario", "--methods", "goal-q",
            "--eval-episodes", "1"]
    assert fig.main([*args, "--out", str(tmp_path / "serial"), "--results", str(tmp_path / "r1")]) == 0
    assert heard == [2] and len(grid_records(tmp_path / "serial")) == 2
    assert sorted(p.name for p in (tmp_path / "serial" / "mario" / "goal-q").iterdir()) == ["seed0", "seed1"]
    if jobs is None:
        pytest.skip(NO_RAY)
    assert fig.main([*args, "--out", str(tmp_path / "ray"), "--results", str(tmp_path / "r2"),
                     "--jobs", str(jobs)]) == 0
    assert grid_records(tmp_path / "ray") == grid_records(tmp_path / "serial")
    for seed in (0, 1):
        record = Path("seeds", "figure3", "mario", "goal-q", f"seed{seed}.json")
        assert same_without_clock(json.loads((tmp_path / "r1" / record).read_text()),
                                  json.loads((tmp_path / "r2" / record).read_text()))


def test_omitted_mechanisms_runs_its_cells_through_the_runner_the_same_on_ray(tmp_path, monkeypatch, jobs):
    omitted = script("omitted_mechanisms")
    heard = through_the_runner(monkeypatch, omitted)
    args = ["--models", "mario_no_key", "--methods", "goal-q", "--seeds", "2", "--steps", "1500", "--overrides",
            json.dumps({"eval_interval": 1000, "eval_episodes": 1, "final_eval_episodes": 1})]
    omitted.main([*args, "--out", str(tmp_path / "serial"), "--results", str(tmp_path / "r1")])
    assert heard == [2] and sorted(grid_records(tmp_path / "serial")) == [
        "mario_no_key/goal-q/seed0", "mario_no_key/goal-q/seed1"]
    table = json.loads((tmp_path / "r1" / "omitted.json").read_text())["table"]
    assert [row["seeds"] for row in table["mario_no_key"]] == [2]
    if jobs is None:
        pytest.skip(NO_RAY)
    omitted.main([*args, "--out", str(tmp_path / "ray"), "--results", str(tmp_path / "r2"), "--jobs", str(jobs)])
    assert grid_records(tmp_path / "ray") == grid_records(tmp_path / "serial")
    assert same_without_clock(json.loads((tmp_path / "r2" / "omitted.json").read_text())["table"], table)


def test_own_worlds_runs_its_cells_through_the_runner_the_same_on_ray(tmp_path, monkeypatch, jobs):
    """ASGRL's cells through ``run_cells``, PPO's (a learner from outside asg) through ``run_jobs``.
    Deep skills: the serial grid runs with one torch thread, as a Ray cell does (a sum over more
    threads may be ordered differently)."""
    pytest.importorskip("minigrid")
    pytest.importorskip("stable_baselines3")
    from asg.envs import plugins
    from asg.learning.torch_state import torch_threads

    worlds = script("own_worlds")
    cells = through_the_runner(monkeypatch, worlds)
    real, ppo = worlds.run_jobs, []
    monkeypatch.setattr(worlds, "run_jobs", lambda work, **kw: ppo.append(len(work)) or real(work, **kw))
    args = ["--worlds", "doorkey-5x5", "--methods", "asgrl,ppo", "--seeds", "2", "--steps", "300", "--ppo-steps",
            "2048", "--eval-every", "1000", "--eval-episodes", "1", "--final-episodes", "2"]
    before = set(plugins.plugin_names())
    try:
        with torch_threads(1):
            assert worlds.main([*args, "--out", str(tmp_path / "serial"), "--results", str(tmp_path / "r1")]) == 0
        assert cells == [2] and ppo == [2] and sorted(grid_records(tmp_path / "serial")) == [
            "doorkey-5x5/asgrl/seed0", "doorkey-5x5/asgrl/seed1"]
        figures = {(m, s): json.loads((tmp_path / "serial" / "doorkey-5x5" / m / f"seed{s}.json").read_text())
                   for m in ("asgrl", "ppo") for s in (0, 1)}
        assert [(f["seed"], f["final_episodes"]) for f in figures.values()] == [(0, 2), (1, 2)] * 2
        assert worlds.main([*args, "--out", str(tmp_path / "serial"), "--results", str(tmp_path / "r1")]) == 0
        assert cells == [2, 0] and ppo == [2, 0]  # figures there: nothing trained again
        if jobs is None:
            pytest.skip(NO_RAY)
        assert worlds.main([*args, "--out", str(tmp_path / "ray"), "--results", str(tmp_path / "r2"),
                            "--jobs", str(jobs)]) == 0
    finally:  # the worlds registered themselves; other tests list the domains
        for name in set(plugins.plugin_names()) - before:
            plugins.unregister_domain(name)
    assert grid_records(tmp_path / "ray") == grid_records(tmp_path / "serial")
    for (method, seed), serial in figures.items():
        name = Path("doorkey-5x5", method, f"seed{seed}.json")
        assert same_without_clock(json.loads((tmp_path / "ray" / name).read_text()), serial)


def test_appendix_f_runs_its_cells_through_the_runner_the_same_on_ray(tmp_path, monkeypatch, jobs):
    appendix = script("appendix_f")
    heard = through_the_runner(monkeypatch, appendix)
    args = ["--part", "f3", "--domains", "mario", "--seeds", "2", "--steps", "500"]
    monkeypatch.setattr(appendix, "RESULTS", tmp_path / "r1")
    assert appendix.main([*args, "--out", str(tmp_path / "serial")]) == 0
    assert heard == [4] and sorted(grid_records(tmp_path / "serial")) == [
        f"f3/mario/{state}/asgrl/seed{seed}" for state in ("history", "low-level") for seed in (0, 1)]
    rows = json.loads((tmp_path / "r1" / "f3.json").read_text())["rows"]
    assert [(r["variant"], r["seeds"]) for r in rows] == [("asgrl meta-state=history", 2),
                                                         ("asgrl meta-state=low-level", 2)]
    if jobs is None:
        pytest.skip(NO_RAY)
    monkeypatch.setattr(appendix, "RESULTS", tmp_path / "r2")
    assert appendix.main([*args, "--out", str(tmp_path / "ray"), "--jobs", str(jobs)]) == 0
    assert grid_records(tmp_path / "ray") == grid_records(tmp_path / "serial")
    assert same_without_clock(json.loads((tmp_path / "r2" / "f3.json").read_text())["rows"], rows)


def test_own_worlds_scores_ppo_on_the_layouts_asgrl_is_scored_on(monkeypatch):
    """Issue 40 asks for the two learners side by side on the same fresh layouts: PPO's curve points
    are scored on ASGRL's curve layouts, its sampled and deterministic finals on ASGRL's ε and greedy
    final layouts, and ``score`` resets the env with exactly those seeds."""
    pytest.importorskip("minigrid")
    pytest.importorskip("stable_baselines3")
    from asg.learning.asgrl.evaluation import epsilon_eval_seeds, eval_seeds

    worlds = script("own_worlds")
    scored: list[tuple[list[int], bool]] = []
    real_score, real_view = worlds.score, worlds.view_env

    def recording_score(policy: Any, env_id: str, seeds: Any, normalize: Any, deterministic: bool = False) -> float:
        scored.append((list(seeds), deterministic))
        return real_score(policy, env_id, seeds, normalize, deterministic)

    resets: list[int | None] = []

    def recording_view(env_id: str, seed: int | None = None) -> Any:
        env = real_view(env_id)
        reset = env.reset
        env.reset = lambda *, seed=None, options=None: resets.append(seed) or reset(seed=seed, options=options)
        return env

    monkeypatch.setattr(worlds, "score", recording_score)
    figures = worlds.run_ppo("doorkey-5x5", 3, 2048, 4096, 2, final_episodes=3)
    assert scored == [(eval_seeds(3, 2), False)] * len(figures["curve"]) + [
        (epsilon_eval_seeds(3, 3), False), (eval_seeds(3, 3), True)]

    class TurnLeft:  # a policy that never reaches the goal: every episode runs to the time limit
        def predict(self, x: Any, deterministic: bool = False) -> Any:
            return [0], None

    monkeypatch.setattr(worlds, "view_env", recording_view)
    assert real_score(TurnLeft(), "MiniGrid-DoorKey-5x5-v0", eval_seeds(3, 2), None) == 0.0
    assert resets == eval_seeds(3, 2)


def test_deep_skills_speed_times_the_env_process_beside_both_vector_envs_of_ppo(tmp_path):
    """Issue 40, part 3: one run times ASGRL with and without ``deep.env_process`` and PPO with its
    envs in process and one process each; each ASGRL row's ratio is to the faster PPO, and the
    env-process row spends its env time in the child (the parent's wait is clocked apart)."""
    pytest.importorskip("minigrid")
    pytest.importorskip("stable_baselines3")
    speed = script("deep_skills_speed")
    out = tmp_path / "speed.json"
    assert speed.main(["--world", "doorkey-5x5", "--steps", "600", "--envs", "4", "--train-every", "8",
                       "--env-process", "0,1", "--ppo-vec", "dummy,subproc", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    ppo = [row for row in rows if row["method"] == "ppo"]
    asgrl = {row["env_process"]: row for row in rows if row["method"] == "asgrl"}
    assert [row["vec_env"] for row in ppo] == ["dummy", "subproc"] and set(asgrl) == {False, True}
    fastest = max(row["steps_per_second"] for row in ppo)
    for row in asgrl.values():
        assert row["env_steps"] == 600 and row["ratio_to_ppo"] == round(row["steps_per_second"] / fastest, 3)
    assert asgrl[True]["seconds_in"]["env_wait"] > 0 and asgrl[False]["seconds_in"]["env_wait"] == 0
    for wrong in (["--envs", "1", "--env-process", "1"], ["--deep", '{"env_process": true}']):
        with pytest.raises(SystemExit) as bad:  # the switch has its own flag: --deep cannot override it
            speed.main([*wrong, "--out", str(out)])
        assert bad.value.code == 2


def test_a_run_folder_of_another_config_is_one_line_and_exit_2_and_stays(tmp_path, capsys):
    """A benchmark grid pointed at a folder whose run has another config (here: another budget)
    stops before any work with one line naming the folder, and leaves the run as it was."""
    from asg.cli.options import run_benchmark_grid
    from asg.learning.asgrl.grid import Cell

    tiny = {"eval_interval": 1000, "eval_episodes": 1, "final_eval_episodes": 1}
    run_benchmark_grid([Cell("mario", "goal-q", 0, steps=1000, overrides=tiny)], tmp_path, {})
    folder = tmp_path / Cell("mario", "goal-q", 0, steps=1000, overrides=tiny).folder
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run_benchmark_grid([Cell("mario", "goal-q", 0, steps=2000, overrides=tiny)], tmp_path, {})
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert err[0].startswith("error: ") and str(folder) in err[0] and "another config" in err[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
