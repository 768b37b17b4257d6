"""``asg train`` / ``asg eval`` / ``asg compare`` through CliRunner, including every error path."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from asg.cli.main import main

SMALL = ["--steps", "3000", "--eval-episodes", "2", "--quiet"]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    """Default run directories (runs/...) land in a temp folder, never in the repository."""
    monkeypatch.chdir(tmp_path)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def _one_error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return lines[-1]


def test_train_writes_a_run_directory_and_prints_result_json(tmp_path):
    out = tmp_path / "run"
    result = run("train", "--domain", "mario", "--seed", "1", "--out", str(out), "--json", *SMALL)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("domain", "method", "seed", "success_rate", "eval_episodes", "env_steps", "wall_seconds"):
        assert key in report
    assert (report["domain"], report["method"], report["seed"], report["env_steps"]) == ("mario", "asgrl", 1, 3000)
    for name in ("config.json", "metrics.csv", "learning_curve.png", "checkpoint.npz", "result.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "result.json").read_text()) == report
    config = json.loads((out / "config.json").read_text())["config"]
    assert config["learner"]["diversity"]["alpha"] == 0.2 and config["total_steps"] == 3000


def test_eval_and_resume_a_saved_run(tmp_path):
    out = tmp_path / "run"
    assert run("train", "--domain", "mario", "--out", str(out), *SMALL).exit_code == 0
    evaluated = run("eval", str(out), "--episodes", "3", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    assert report["eval_episodes"] == 3 and len(report["episodes"]) == 3 and report["env_steps"] == 3000
    assert report["epsilon"] == 0.05 and 0.0 <= report["epsilon_success_rate"] <= 1.0  # the paper's protocol beside
    resumed = run("train", "--resume", str(out), "--steps", "5000", "--json", "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["env_steps"] == 5000


def test_k_and_config_file_reach_the_saved_config(tmp_path):
    cfg_file = tmp_path / "over.json"
    cfg_file.write_text(json.dumps({"learner": {"meta": {"epsilon_start": 0.5}}}))
    out = tmp_path / "run"
    result = run("train", "--domain", "mario", "--k", "2", "--config", str(cfg_file), "--out", str(out), *SMALL)
    assert result.exit_code == 0, result.output
    learner = json.loads((out / "config.json").read_text())["config"]["learner"]
    assert learner["diversity"]["k"] == 2 and learner["diversity"]["k_overrides"] == []
    assert learner["meta"]["epsilon_start"] == 0.5


def test_compare_writes_table_and_plot(tmp_path):
    out = tmp_path / "cmp"
    result = run("compare", "--domain", "mario", "--methods", "asgrl,goal-q", "--seeds", "2",
                 "--steps", "1500", "--eval-episodes", "1", "--out", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    assert "| ASGRL | 2 |" in result.output and "| Goal-Q-Learning | 2 |" in result.output
    for name in ("compare.md", "compare.json", "compare.png"):
        assert (out / name).is_file()
    summary = json.loads((out / "compare.json").read_text())
    assert len(summary["runs"]) == 4 and (out / "goal-q" / "seed1" / "result.json").is_file()


@pytest.mark.parametrize("args, needle", [
    (["train", "--domain", "zelda"], "unknown domain 'zelda'"),
    (["train"], "--domain is required"),
    (["train", "--domain", "mario", "--method", "magic"], "'magic' is not one of"),
    (["train", "--domain", "mario", "--steps", "0"], "--steps"),
    (["train", "--domain", "mario", "--bogus"], "No such option"),
    (["train", "--domain", "mario", "--method", "landmark-hrl", "--k", "3"], "--k"),
    (["train", "--domain", "mario", "--method", "goal-q", "--skills", "deep"], "--skills: method goal-q has no skills"),
    (["train", "--domain", "mario", "--skills", "neural"], "--skills"),
    (["train", "--domain", "mario", "--model", "/nonexistent/m.pddl"], "no such file or bundled model"),
    (["compare", "--domain", "zelda"], "unknown domain 'zelda'"),
    (["compare", "--domain", "mario", "--methods", "asgrl,nope"], "unknown method 'nope'"),
    (["eval", "/nonexistent/run"], "not a run directory"),
])
def test_error_paths_print_one_line_and_exit_2(args, needle, tmp_path):
    line = _one_error_line(run(*args))
    assert needle in line
    assert not (tmp_path / "runs").exists()  # nothing written on bad input


def test_bad_config_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "not a JSON config" in _one_error_line(run("train", "--domain", "mario", "--config", str(bad)))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"learner": {"diversity": {"kk": 3}}}))
    assert "unknown field 'kk'" in _one_error_line(run("train", "--domain", "mario", "--config", str(unknown)))


def test_corrupt_checkpoint_is_a_one_line_error(tmp_path):
    out = tmp_path / "run"
    assert run("train", "--domain", "mario", "--out", str(out), *SMALL).exit_code == 0
    (out / "checkpoint.npz").write_bytes(b"\x80\x05garbage")
    assert "corrupt checkpoint" in _one_error_line(run("eval", str(out)))
    assert "corrupt checkpoint" in _one_error_line(run("train", "--resume", str(out), "--quiet"))
    (out / "checkpoint.npz").unlink()
    assert "missing" in _one_error_line(run("eval", str(out)))
    (out / "config.json").write_text("[]")
    assert "config" in _one_error_line(run("eval", str(out)))


def test_an_existing_run_is_not_overwritten(tmp_path):
    out = tmp_path / "run"
    assert run("train", "--domain", "mario", "--out", str(out), *SMALL).exit_code == 0
    assert "already holds a run" in _one_error_line(run("train", "--domain", "mario", "--out", str(out), *SMALL))


def test_fetch_programs_is_a_family_of_the_library_registry():
    from asg.learning.errors import DomainError
    from asg.learning.registry import FAMILIES, domain_family

    assert domain_family("fetch-programs") == "fetch-programs" and "fetch-programs" in FAMILIES
    assert domain_family("mario") == "asgrl"
    with pytest.raises(DomainError, match="fetch-programs.*household-v1"):
        domain_family("toy-family")
    assert "choose from fetch-programs, household-v1" in _one_error_line(run("train", "--domain", "toy-family"))


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])  # Ctrl-C, and what a scheduler or kill sends
def test_an_interrupt_checkpoints_and_resume_continues(tmp_path, monkeypatch, signame):
    import signal

    from asg.cli import train_cmds

    real = train_cmds.Stages

    class InterruptingStages(real):
        """Progress that raises the signal at the third episode's progress call."""

        calls = 0

        def __call__(self, stage, count, total, note=""):
            super().__call__(stage, count, total, note)
            InterruptingStages.calls += 1
            if InterruptingStages.calls == 3:
                signal.raise_signal(getattr(signal, signame))

    monkeypatch.setattr(train_cmds, "Stages", InterruptingStages)
    out = tmp_path / "run"
    result = run("train", "--domain", "mario", "--steps", "50000", "--out", str(out), "--json")
    assert result.exit_code == 130, result.output
    assert "asg train --resume" in result.output
    partial = json.loads((out / "result.json").read_text())
    assert partial["status"] == "interrupted" and 0 < partial["env_steps"] < 50_000
    assert (out / "checkpoint.npz").is_file()
    monkeypatch.setattr(train_cmds, "Stages", real)
    resumed = run("train", "--resume", str(out), "--steps", str(partial["env_steps"] + 2000), "--json", "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["env_steps"] == partial["env_steps"] + 2000


def test_skills_option_chooses_the_skill_learner(tmp_path):
    out = tmp_path / "deep"
    result = run("train", "--domain", "mario", "--skills", "deep", "--steps", "1500", "--eval-episodes", "1",
                 "--out", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    learner = json.loads((out / "config.json").read_text())["config"]["learner"]
    assert learner["skills"] == "deep" and learner["diversity"]["abstraction"] == "kmeans"
    assert learner["meta"]["state"] == "history"


def test_run_config_names_the_arguments_a_method_refuses(tmp_path):
    """``trainer.run_config`` (what ``asg train`` calls) names its keyword arguments, not flags."""
    from asg.learning.asgrl.trainer import run_config
    from asg.learning.configio import FieldError, override_file
    from asg.learning.registry import bind_domain

    mario = bind_domain("mario")
    cfg = run_config(mario, "asgrl", seed=2, k=2, total_steps=3000, eval_episodes=None)
    assert (cfg.seed, cfg.total_steps, cfg.learner.diversity.k, cfg.learner.diversity.k_overrides) == (2, 3000, 2, ())
    for kwargs, field in (({"method": "landmark-hrl", "k": 3}, "k"), ({"method": "goal-q", "skills": "deep"}, "skills"),
                          ({"preset": "fast"}, "preset")):
        with pytest.raises(FieldError) as err:
            run_config(mario, **kwargs)
        assert err.value.field == field and "--" not in str(err.value)
    assert override_file(cfg, None) is cfg
