"""The grid runner (``learning.asgrl.grid``): the same cells give the same metrics in this process
and on a local Ray; a cell's own error is reported and the rest finish; Ctrl-C stops a grid on
Ray resumably."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
from pathlib import Path

import pytest

from asg.learning.asgrl.experiments import run_grid
from asg.learning.asgrl.grid import Cell, run_cells

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="ray is not installed (pip install 'asg[distributed]')")
TINY = {"eval_interval": 1000, "eval_episodes": 2, "final_eval_episodes": 2}
VARIES = ("wall_seconds", "run_dir")  # what two runs of one cell may differ in: the clock, the folder


def cell_record(folder: Path) -> dict:
    """A run folder's metrics and result, less what varies between two runs of the same cell."""
    rows = (folder / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    keep = [i for i, name in enumerate(header) if name not in VARIES]
    metrics = [[line.split(",")[i] for i in keep] for line in rows]
    result = {k: v for k, v in json.loads((folder / "result.json").read_text()).items() if k not in VARIES}
    files = sorted(p.name for p in folder.iterdir())
    return {"metrics": metrics, "result": result, "files": files}


def grid_records(out: Path) -> dict[str, dict]:
    return {str(p.parent.relative_to(out)): cell_record(p.parent) for p in sorted(out.rglob("result.json"))}


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'asg[distributed]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@needs_ray
def test_a_grid_on_ray_equals_the_serial_grid_bit_for_bit(tmp_path, local_ray):
    args = ("mario", ["asgrl", "goal-q"], [0, 1])
    serial = run_grid(*args, tmp_path / "serial", steps=3000, overrides=TINY)
    on_ray = run_grid(*args, tmp_path / "ray", steps=3000, overrides=TINY, jobs=2)
    assert [(r.method, r.seed) for r in on_ray] == [(r.method, r.seed) for r in serial]
    for a, b in zip(serial, on_ray):
        assert [{k: v for k, v in row.items() if k not in VARIES} for row in a.rows] == \
               [{k: v for k, v in row.items() if k not in VARIES} for row in b.rows]
        assert b.result.run_dir == str(tmp_path / "ray" / a.method / f"seed{a.seed}")
    records = grid_records(tmp_path / "serial")
    assert len(records) == 4 and records == grid_records(tmp_path / "ray")
    assert not (tmp_path / "ray" / ".asg-grid").exists()
    # read back, not trained again
    heard = []
    again = run_grid(*args, tmp_path / "ray", steps=3000, overrides=TINY, jobs=2, reuse=True,
                     on_done=lambda run, reused: heard.append(reused))
    assert heard == [True] * 4 and [r.result.to_json() for r in again] == [r.result.to_json() for r in on_ray]


@needs_ray
def test_a_cell_that_fails_is_reported_and_the_others_finish(tmp_path, local_ray):
    good = Cell("mario", "goal-q", 0, steps=2000, overrides=TINY)
    bad_config = Cell("mario", "goal-q", 1, steps=2000, overrides={"eval_interval": -5})
    bad_model = Cell("mario", "goal-q", 2, steps=2000, overrides=TINY, model=str(tmp_path / "missing.pddl"))
    for jobs in (None, 2):
        failures = []
        runs = run_cells([bad_config, good, bad_model], tmp_path / f"jobs{jobs}", jobs=jobs,
                         on_failed=failures.append)
        assert [(r.method, r.seed, r.result.status) for r in runs] == [("goal-q", 0, "finished")]
        assert [f.seed for f in sorted(failures, key=lambda f: f.seed)] == [1, 2]
        assert all("\n" not in f.line() and f.error for f in failures)


@needs_ray
def test_ctrl_c_on_the_driver_checkpoints_running_cells_and_reuse_continues(tmp_path, local_ray):
    cells = [Cell("mario", "goal-q", seed, steps=40_000, overrides={**TINY, "checkpoint_interval": 10**9})
             for seed in range(3)]
    done = []

    def progress(stage, count, total, note):  # called each second: Ctrl-C once both cells train
        if not done and all((tmp_path / "goal-q" / f"seed{seed}" / "metrics.csv").is_file() for seed in (0, 1)):
            done.append(True)
            os.kill(os.getpid(), signal.SIGINT)
    runs = run_cells(cells, tmp_path, jobs=2, progress=progress)
    assert done and len(runs) == 2 and {r.result.status for r in runs} == {"interrupted"}
    assert not (tmp_path / "goal-q" / "seed2").exists()  # the queued cell never started
    for run in runs:
        assert (Path(run.result.run_dir) / "checkpoint.npz").is_file()
        assert 0 < run.result.env_steps < 40_000
    again = run_cells(cells[:1], tmp_path, jobs=2, reuse=True)  # resumed from its checkpoint
    serial = run_cells(cells[:1], tmp_path / "serial")
    assert again[0].result.status == serial[0].result.status != "interrupted"
    assert cell_record(tmp_path / "goal-q" / "seed0") == cell_record(tmp_path / "serial" / "goal-q" / "seed0")


def test_a_cell_away_from_the_drivers_files_returns_them_and_they_land_as_a_local_run(tmp_path):
    """A node that does not see ``out`` (no token there) trains in a temporary folder and returns its
    files; written under ``out`` they are the files of the same cell run in place."""
    from asg.learning.asgrl.grid import _cell_task, _land

    cell = Cell("mario", "goal-q", 0, steps=2000, overrides=TINY)
    outcome = _cell_task(cell, cell.config(), str(tmp_path / "remote"), "token", None, 1)
    assert outcome.files is not None and "checkpoint.npz" in outcome.files and not (tmp_path / "remote").exists()
    landed = _land(outcome, tmp_path / "remote" / cell.folder)
    assert landed.result.run_dir == str(tmp_path / "remote" / cell.folder)
    run_cells([cell], tmp_path / "here")
    assert cell_record(tmp_path / "remote" / cell.folder) == cell_record(tmp_path / "here" / cell.folder)


@needs_ray
def test_jobs_of_a_learner_from_outside_asg_give_the_same_values_here_and_on_ray(local_ray):
    """``run_jobs``: a job's value comes back in job order, its own error is reported in one line and
    the others finish, in this process and on Ray alike."""
    from asg.learning.asgrl.grid import Job, run_jobs

    work = [Job("pow", 0, pow, (2, 10)), Job("int", 1, int, ("not a number",)), Job("pow", 2, pow, (3, 4))]
    for jobs in (None, 2):
        heard: list = []
        failures: list = []
        values = run_jobs(work, jobs=jobs, on_done=lambda job, value, heard=heard: heard.append((job.seed, value)),
                          on_failed=failures.append)
        assert values == [1024, 81] and sorted(heard) == [(0, 1024), (2, 81)]
        assert [f.line() for f in failures] == ["int seed 1: ValueError: invalid literal for int() with base 10: "
                                                "'not a number'"]
    with pytest.raises(ValueError):
        run_jobs(work)


# -- asg compare: --jobs, --ray-address, --resume, failed cells --------------------------------------

def compare(*args: str):
    from click.testing import CliRunner

    from asg.cli.main import main

    return CliRunner().invoke(main, ["compare", "--domain", "mario", "--methods", "goal-q", "--seeds", "2",
                                     "--steps", "2000", "--eval-episodes", "1", "--quiet", *args])


@pytest.mark.parametrize("args, needle", [
    (["--jobs", "0"], "--jobs"),
    (["--jobs", "2", "--ray-address", "127.0.0.1:6379"], "--jobs: not with --ray-address"),
    (["--ray-address", " "], "--ray-address: an empty address"),
    (["--resume", "--out", "nowhere"], "--resume: nowhere holds no grid to continue"),
    (["--model", "mario"], "--model: only with --env"),
])
def test_compare_refuses_bad_grid_options_in_one_line(tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    result = compare(*args)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and "Traceback" not in result.output and needle in lines[-1], result.output


def test_compare_jobs_without_ray_says_which_extra_to_install(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    result = compare("--jobs", "2")
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith(
        "error: --jobs needs the distributed extra: pip install 'asg[distributed]'")
    assert not (tmp_path / "runs").exists()


def test_compare_reports_a_failed_cell_and_finishes_the_others(tmp_path, monkeypatch):
    from asg.learning.asgrl import grid

    real = grid.train_cell

    def train_cell(cell, *args, **kwargs):
        if cell.seed == 1:
            raise ValueError("the cell's own fault\nsecond line")
        return real(cell, *args, **kwargs)
    monkeypatch.setattr(grid, "train_cell", train_cell)
    result = compare("--out", str(tmp_path / "cmp"))
    assert result.exit_code == 1, result.output
    assert "failed: goal-q seed 1: ValueError: the cell's own fault" in result.output
    assert "second line" not in result.output
    report = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert [r["seed"] for r in report["runs"]] == [0]
    assert report["failed"] == [{"method": "goal-q", "seed": 1, "error": "ValueError: the cell's own fault"}]
    assert "- goal-q seed 1: ValueError" in (tmp_path / "cmp" / "compare.md").read_text()


@needs_ray
def test_compare_with_jobs_equals_the_serial_compare_and_resume_reads_it_back(tmp_path, local_ray):
    assert compare("--out", str(tmp_path / "serial")).exit_code == 0
    on_ray = compare("--out", str(tmp_path / "ray"), "--jobs", "2")
    assert on_ray.exit_code == 0, on_ray.output
    assert grid_records(tmp_path / "ray") == grid_records(tmp_path / "serial")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "ray").rglob("checkpoint.npz")}
    again = compare("--out", str(tmp_path / "ray"), "--jobs", "2", "--resume")
    assert again.exit_code == 0, again.output
    assert before == {p: p.stat().st_mtime_ns for p in (tmp_path / "ray").rglob("checkpoint.npz")}  # read back


def test_compare_takes_a_world_of_the_users_own(tmp_path, monkeypatch):
    """--env/--labeler/--model as asg train takes them: each cell's folder keeps the world's parts."""
    from click.testing import CliRunner

    from asg.cli.main import main
    from asg.envs import plugins

    monkeypatch.chdir(Path(__file__).resolve().parents[1] / "examples" / "doorkey")
    before = set(plugins.plugin_names())
    try:
        result = CliRunner().invoke(main, ["compare", "--env", "MiniGrid-DoorKey-5x5-v0", "--labeler",
                                           "labels:DOORKEY", "--model", "doorkey.pddl", "--methods", "goal-q",
                                           "--seeds", "1", "--steps", "1000", "--eval-episodes", "1", "--out",
                                           str(tmp_path / "own"), "--quiet"])
    finally:  # the world registered itself; other tests list the domains
        for name in set(plugins.plugin_names()) - before:
            plugins.unregister_domain(name)
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "own" / "goal-q" / "seed0" / "config.json").read_text())
    assert saved["plugin"]["env"] == "MiniGrid-DoorKey-5x5-v0" and saved["config"]["total_steps"] == 1000
