"""A world's own code that fails mid-run loses nothing (issue 40, part 5).

The user's folder holds ``world.py``: ``FlakyCorridor``, a subclass of the tests' key-door
corridor (``toy_domains.KeyDoorCorridor``, starting on a cell its reset seed draws) whose ``reset`` or
``step`` raises once it has been called N times, and a labeler whose ``(door-open)`` predicate does the
same; ``BROKEN`` says which fails (None: the code once fixed). ``asg train --env world:FlakyCorridor --labeler
world:LABELS`` must then end with one line naming the call, the episode and the step, exit 2,
leave a checkpoint, and ``asg train --resume`` of that folder, with ``world.py`` fixed, must
finish the run. A failure at a reset or in an evaluation resumes into exactly the run that never
failed; one in the middle of an episode into the run whose episode ended one step earlier.
"""
from __future__ import annotations

import csv
import json
import re
import sys
import textwrap

import pytest
from conftest import one_line
from toy_domains import KEYDOOR_PDDL

from asg.envs import plugins

WORLD = '''
from toy_domains import KEYDOOR_LABELS, KeyDoorCorridor

from asg.learning.asgrl.evaluation import eval_seeds

BROKEN = {broken!r}  # what fails: labeler, step, reset, eval-reset; None once fixed
AFTER = {after}
calls = {{"labeler": 0, "step": 0, "reset": 0, "eval": 0}}
EVAL_SEED = eval_seeds(0, 1)[0]  # the reset seed of every evaluation episode (one a point)


class FlakyCorridor(KeyDoorCorridor):
    def reset(self, *, seed=None, options=None):
        calls["reset"] += 1
        if BROKEN == "reset" and calls["reset"] >= AFTER:
            raise RuntimeError("map file missing")
        calls["eval"] += seed == EVAL_SEED
        if BROKEN == "eval-reset" and seed == EVAL_SEED and calls["eval"] >= AFTER:
            raise RuntimeError("map file missing")
        super().reset(seed=seed, options=options)
        self.pos = int(self.np_random.integers(1, 5))  # a start the seed draws, so that seeds matter
        return self._obs(), {{}}

    def step(self, action):
        calls["step"] += 1
        if BROKEN == "step" and calls["step"] >= AFTER:
            raise ValueError("motor jammed")
        return super().step(action)


def door_open(env):
    calls["labeler"] += 1
    if BROKEN == "labeler" and calls["labeler"] >= AFTER:
        raise ValueError("door sensor offline")
    return env.door_open


LABELS = {{**KEYDOOR_LABELS, "(door-open)": door_open}}
'''

ARGS = ("--env", "world:FlakyCorridor", "--labeler", "world:LABELS", "--model", "keydoor.pddl",
        "--eval-episodes", "1", "--quiet")
SAME = ("success_rate", "env_steps", "episodes", "steps_to_success", "greedy_success_rate",
        "epsilon_success_rate", "status")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The user's folder, the current one; ``write(broken, after)`` (re)writes ``world.py``."""
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    (tmp_path / "over.json").write_text(json.dumps({"eval_interval": 1000}))
    monkeypatch.chdir(tmp_path)
    before = set(plugins.plugin_names())
    yield tmp_path
    sys.modules.pop("world", None)
    for name in set(plugins.plugin_names()) - before:  # the CLI registers the world it trains
        plugins.unregister_domain(name)


def write(folder, broken: str | None, after: int = 0) -> None:
    (folder / "world.py").write_text(textwrap.dedent(WORLD.format(broken=broken, after=after)))
    sys.modules.pop("world", None)  # the next command imports it afresh, its counters at zero


def asg(*args: str):
    from click.testing import CliRunner

    from asg.cli.main import main

    return CliRunner().invoke(main, [str(a) for a in args])


def failing_run(folder, broken: str, after: int, *extra: str) -> str:
    """Train with ``world.py`` broken; the one error line, after checking exit 2 and the checkpoint."""
    write(folder, broken, after)
    line = one_line(asg("train", *ARGS, "--steps", "3000", "--out", "split", *extra))
    assert line.endswith("; after fixing it: asg train --resume split"), line
    assert (folder / "split" / "checkpoint.npz").is_file() and not (folder / "split" / "result.json").exists()
    return line


def resumed(folder) -> dict:
    """``asg train --resume split`` with ``world.py`` fixed; its result.json."""
    write(folder, None)
    result = asg("train", "--resume", "split", "--quiet", "--json")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return json.loads((folder / "split" / "result.json").read_text())


def never_failed(folder, *extra: str) -> dict:
    write(folder, None)
    result = asg("train", *ARGS, "--steps", "3000", "--out", "whole", *extra)
    assert result.exit_code == 0, result.output
    return json.loads((folder / "whole" / "result.json").read_text())


def metrics(path) -> list[dict]:
    with open(path / "metrics.csv") as handle:
        return [{k: v for k, v in row.items() if k != "wall_seconds"} for row in csv.DictReader(handle)]


def checkpoint_steps(path) -> int:
    return int(json.loads((path / "checkpoint.json").read_text())["env_steps"])


@pytest.mark.parametrize("broken, call, error", [
    ("labeler", "labeler atom (door-open)", "ValueError('door sensor offline')"),
    ("step", "env.step", "ValueError('motor jammed')"),
])
def test_a_failure_mid_episode_keeps_the_episode_up_to_the_step_before(folder, broken, call, error):
    never_failed(folder, "--config", "over.json")
    line = failing_run(folder, broken, 2500, "--config", "over.json")  # past the point at 1000 steps
    found = re.fullmatch(rf"error: {re.escape(call)} raised {re.escape(error)} at episode (\d+), step (\d+) "
                         r"\(world\.py:\d+\); checkpoint written after episode (\d+), cut short after step (\d+), "
                         r"(\d+) env steps; after fixing it: .*", line)
    assert found, line
    episode, step, saved, cut, steps = map(int, found.groups())
    assert episode == saved and cut == step - 1 and step > 1  # the failed episode is kept up to its last step
    assert steps == checkpoint_steps(folder / "split") > 0
    before = metrics(folder / "split")
    # the same run up to the failed episode
    assert len(before) >= 2 and before == metrics(folder / "whole")[:len(before)]
    result = resumed(folder)
    assert result["env_steps"] >= 3000 and result["status"] in ("finished", "solved")
    assert result["episodes"] > episode


def test_a_failure_at_a_reset_resumes_into_the_run_that_never_failed(folder):
    want = never_failed(folder, "--config", "over.json")
    line = failing_run(folder, "reset", 12, "--config", "over.json")
    found = re.fullmatch(r"error: env\.reset raised RuntimeError\('map file missing'\) at episode (\d+), reset "
                         r"\(world\.py:\d+\); checkpoint written at episode (\d+), (\d+) env steps; .*", line)
    assert found, line
    episode, saved, _ = map(int, found.groups())
    assert saved == episode - 1  # the state before the episode whose reset failed
    got = resumed(folder)
    assert {k: got[k] for k in SAME} == {k: want[k] for k in SAME}
    assert metrics(folder / "split") == metrics(folder / "whole")


def test_a_failure_in_an_evaluation_resumes_into_the_run_that_never_failed(folder):
    want = never_failed(folder, "--config", "over.json")
    line = failing_run(folder, "eval-reset", 2, "--config", "over.json")
    assert re.fullmatch(r"error: env\.reset raised RuntimeError\('map file missing'\) at evaluation episode 1 after "
                        r"\d+ env steps, reset \(world\.py:\d+\); checkpoint written at episode \d+ \(the evaluation "
                        r"runs again on resume\), \d+ env steps; .*", line), line
    assert len(metrics(folder / "split")) == 1  # the point at 0 steps; the second is the one that failed
    got = resumed(folder)
    assert {k: got[k] for k in SAME} == {k: want[k] for k in SAME}
    assert metrics(folder / "split") == metrics(folder / "whole")


def test_the_flat_learner_closes_its_episode_too(folder):
    line = failing_run(folder, "step", 2500, "--method", "goal-q")  # after the first evaluation (2000 steps)
    assert re.search(r"env\.step raised ValueError\('motor jammed'\) at episode \d+, step \d+ \(world\.py:\d+\); "
                     r"checkpoint written after episode \d+, cut short after step \d+", line), line
    assert resumed(folder)["env_steps"] >= 3000


def test_deep_skills_close_their_episode_too(folder):
    pytest.importorskip("torch")
    line = failing_run(folder, "labeler", 800, "--skills", "deep")
    assert re.search(r"labeler atom \(door-open\) raised ValueError\('door sensor offline'\) at episode \d+, step "
                     r"\d+ \(world\.py:\d+\); checkpoint written after episode \d+, cut short", line), line
    assert resumed(folder)["env_steps"] >= 3000


def test_a_resumed_run_that_fails_again_says_its_budget(folder):
    write(folder, None)
    assert asg("train", *ARGS, "--steps", "1000", "--out", "split").exit_code == 0
    write(folder, "step", 300)
    line = one_line(asg("train", "--resume", "split", "--steps", "3000", "--quiet"))
    assert "env.step raised ValueError('motor jammed')" in line
    assert line.endswith("; after fixing it: asg train --resume split --steps 3000"), line


def test_the_library_raises_one_typed_error_and_saves_nothing_without_a_run_folder(folder):
    from asg.learning.asgrl.config import make_config, merge_overrides, small_preset
    from asg.learning.asgrl.trainer import plugin_domain, train
    from asg.learning.errors import RunFailedError

    write(folder, "labeler", 1500)
    domain = plugin_domain("world:FlakyCorridor", "world:LABELS", "keydoor.pddl", str(folder))
    cfg = merge_overrides(small_preset(make_config(domain, "asgrl", seed=0), total_steps=3000),
                          {"learner": {"skill_max_steps": 100}})
    with pytest.raises(RunFailedError, match=r"\(door-open\) raised .* nothing saved \(no run folder\)$") as info:
        train(cfg)
    assert not info.value.saved and isinstance(info.value.__cause__, plugins.LabelerEvaluationError)
