"""``asg train|eval --domain fetch-programs`` through CliRunner: stages, resume, JSON contract, errors."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import one_line

from asg.cli.main import main

# The fast preset shrunk to seconds (like tests/test_ddpg_train.py's tiny_fetch), as a --config file.
TINY = {
    "agent": {"hidden": [32, 32], "batch_size": 32},
    "replay": {"buffer_size": 5000, "state_buffer_size": 50},
    "demos": {"episodes": 2, "batch_size": 8, "reset_prob": 0.5, "pretrain_steps": 3},
    "schedule": {"epochs_phase1": 1, "epochs_phase2": 1, "cycles": 1, "batches": 2, "episodes_per_cycle": 2,
                 "eval_episodes": 2, "threads": 1, "checkpoint_every": 1,
                 "programs": ["Move_To_Zone_0_ORANGE", "Stack_1_0"]},
}


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("args, expected", [
    (["train", "--domain", "fetch-programs", "--k", "3"],
     "--k: not an option of --domain fetch-programs without --stage"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--reuse-shipped"],
     "--reuse-shipped: not an option of --domain fetch-programs --stage goal-policy"),
    (["train", "--domain", "mario", "--reuse-shipped"], "--reuse-shipped: only with --domain fetch-programs"),
    (["train", "--domain", "fetch-programs", "--preset", "huge"], "unknown preset 'huge'"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--k", "3"], "--k: not an option"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--episodes", "3"],
     "--episodes: not an option"),
    (["train", "--domain", "fetch-programs", "--stage", "behaviour-model", "--workers", "2"],
     "--workers: not an option"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--preset", "huge"], "unknown preset 'huge'"),
    (["train", "--domain", "fetch-programs", "--stage", "behaviour-model", "--preset", "huge"],
     "unknown behaviour-model preset"),
    (["train", "--domain", "fetch-programs", "--stage", "juggle"], "--stage"),
    (["train", "--domain", "mario", "--stage", "goal-policy"], "--stage: only with --domain fetch-programs"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--resume", "nowhere"], "nowhere"),
    (["eval", "--domain", "fetch-programs", "--suite", "everything"], "--suite"),
    (["eval", "--domain", "fetch-programs", "--programs", "Stack_0_1,Nope"], "--programs: unknown name 'Nope'"),
    (["eval", "--domain", "fetch-programs", "--suite", "multistep", "--programs", "Stack_0_1"],
     "--programs: only with --suite atomic"),
    (["eval", "--domain", "fetch-programs", "--suite", "atomic", "--world-model", "learned"],
     "--world-model: only with --suite non-atomic"),
    (["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--world-model", "exact",
      "--behaviour-model", __file__], "--behaviour-model: only with the learned world model"),
    (["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--behaviour-model", __file__],
     "not a behaviour model"),
    (["eval", "--domain", "mario"], "give its folder (asg eval RUN_DIR"),
    (["eval", "somedir", "--domain", "fetch-programs"], "RUN_DIR: not used"),
    (["eval", "--mode", "plan"], "--mode: only with --domain fetch-programs"),
    (["eval", "--domain", "fetch-programs", "--suite", "multistep", "--starts", "chained"],
     "--starts: only with --suite atomic"),
    (["eval", "--domain", "fetch-programs", "--starts", "towers"], "--starts"),
    (["eval"], "give a run directory"),
    (["eval", "--domain", "fetch-programs", "--suite", "atomic", "--success-weighting", "on"],
     "--success-weighting: only with --suite non-atomic"),
    (["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--success-weighting", "on"],
     "search.success_weighting needs a learned behaviour model with a success head"),
    (["eval", "--domain", "fetch-programs", "--suite", "atomic", "--retry-noise", "0.3"],
     "--retry-noise: only with --suite non-atomic"),
    (["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--retry-noise", "-1"],
     "'--retry-noise': -1.0 is not in the range"),
])
def test_bad_input_is_one_line_and_exit_2(args, expected):
    assert expected in one_line(run(*args))


def test_goal_policy_stage_resume_and_atomic_eval_contract(tmp_path):
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    out = tmp_path / "gp"
    first = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--config", "tiny.json",
                "--out", out, "--max-epochs", "1", "--quiet", "--json")
    assert first.exit_code == 0, first.output
    result = json.loads(first.output[first.output.index("{"):])
    assert result["epochs"] == 1 and result["total_epochs"] == 2 and not result["finished"]
    saved = json.loads((out / "config.json").read_text())["config"]
    assert saved["preset"] == "fast" and saved["agent"]["hidden"] == [32, 32] and saved["agent"]["gamma"] == 0.98
    again = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--config", "tiny.json", "--out", out)
    assert "already holds a run" in one_line(again)
    assert "keeps its saved config" in one_line(run(
        "train", "--domain", "fetch-programs", "--stage", "goal-policy", "--resume", out, "--preset", "paper"))
    resumed = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--resume", out, "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert "epoch 2/2" in resumed.output
    assert len((out / "metrics.csv").read_text().strip().splitlines()) == 3  # header + 2 epochs

    evaluated = run("eval", "--domain", "fetch-programs", "--suite", "atomic", "--policy", out / "policy.npz",
                    "--episodes", "2", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    programs = json.loads(evaluated.output)["programs"]
    assert len(programs) == 20 and set(programs["Stack_0_1"]) == {"success_rate", "episodes"}
    assert all(p["episodes"] == 2 and 0.0 <= p["success_rate"] <= 1.0 for p in programs.values())
    assert set(json.loads(evaluated.output)["post_success"]) == set(programs)
    text = run("eval", "--domain", "fetch-programs", "--suite", "atomic", "--policy", out / "policy.npz",
               "--episodes", "1")
    assert text.exit_code == 0 and text.output.split("\n")[0].split() == ["program", "goal", "ψ"]
    chained = run("eval", "--domain", "fetch-programs", "--suite", "atomic", "--policy", out / "policy.npz",
                  "--episodes", "1", "--starts", "chained", "--json")
    assert chained.exit_code == 0, chained.output
    assert json.loads(chained.output)["starts"] == "chained"

    (out / "checkpoint.npz").write_bytes(b"\x80\x04garbage")
    corrupt = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--resume", out, "--quiet")
    assert "corrupt checkpoint" in one_line(corrupt)
    (out / "policy.npz").write_bytes(b"not a zip")
    bad = run("eval", "--domain", "fetch-programs", "--policy", out / "policy.npz", "--episodes", "1")
    assert "not a policy file" in one_line(bad)


def test_bad_config_file_names_the_file(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"schedule": {"cycles": 0}}))
    line = one_line(run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--config", "bad.json"))
    assert "bad.json" in line and "schedule.cycles" in line and ">= 1" in line  # the key path and the bound
    (tmp_path / "junk.json").write_text("{")
    assert "junk.json: not a JSON config" in one_line(
        run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--config", "junk.json"))


def test_behaviour_model_stage_from_a_policy_file(tmp_path):
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    trained = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--config", "tiny.json",
                  "--out", "gp", "--max-epochs", "1", "--quiet")
    assert trained.exit_code == 0, trained.output
    (tmp_path / "bm.json").write_text(json.dumps({"hidden": [32, 32], "epochs": 3, "n_envs": 4}))
    result = run("train", "--domain", "fetch-programs", "--stage", "behaviour-model", "--policy", "gp/policy.npz",
                 "--config", "bm.json", "--episodes", "8", "--out", "bm", "--quiet", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    assert summary["episodes"] == 8 and summary["config"]["hidden"] == [32, 32]
    assert (tmp_path / "bm" / "behaviour_model.npz").is_file()
    assert summary["families"] and set(summary["families"]) <= {"Stack", "Move_To_Zone"}
    assert all(0.0 <= v <= 1.0 for v in summary["families"].values())
    (tmp_path / "bad.json").write_text(json.dumps({"layers": 3}))
    line = one_line(run("train", "--domain", "fetch-programs", "--stage", "behaviour-model",
                               "--policy", "gp/policy.npz", "--config", "bad.json"))
    assert "bad.json" in line and "layers" in line


def test_meta_controller_stage_and_non_atomic_eval_contract(tmp_path):
    trained = run("train", "--domain", "fetch-programs", "--stage", "meta-controller", "--iterations", "1",
                  "--world-model", "exact", "--out", "mc", "--quiet", "--json")
    assert trained.exit_code == 0, trained.output
    summary = json.loads(trained.output[trained.output.index("{"):])
    assert summary["iterations"] == 1 and summary["model"] == "exact"
    evaluated = run("eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--checkpoint", "mc",
                    "--world-model", "exact", "--mode", "plan", "--episodes", "1", "--out", "ev", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    result = json.loads(evaluated.output)
    assert result["mode"] == "plan" and result["model"] == "exact"
    assert set(result["programs"]) == {"Stack_All_To_Zone_ORANGE", "Stack_All_To_Zone_BLUE", "Move_All_To_Zone_ORANGE",
                                       "Move_All_To_Zone_BLUE", "Stack_All_Blocks", "Clean_Table", "Clean_And_Stack"}
    assert all(r["episodes"] == 1 and 0.0 <= r["success_rate"] <= 1.0 for r in result["programs"].values())
    assert json.loads((tmp_path / "ev" / "non-atomic-plan-exact.json").read_text())["programs"] == result["programs"]
    assert (tmp_path / "ev" / "non-atomic-plan-exact-trace.png").read_bytes()[:4] == b"\x89PNG"
    missing = run("eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--checkpoint", "mc/nothing.pt")
    assert "nothing.pt" in one_line(missing)
    (tmp_path / "mc" / "meta_controller.npz").write_bytes(b"junk")
    assert "mc" in one_line(run("eval", "--domain", "fetch-programs", "--suite", "non-atomic",
                                       "--checkpoint", "mc", "--episodes", "1"))
    assert "--behaviour-model: only with the learned world model" in one_line(run(
        "train", "--domain", "fetch-programs", "--stage", "meta-controller", "--world-model", "exact",
        "--behaviour-model", "ev/non-atomic-plan-exact.json"))


def test_pipeline_reuses_the_shipped_stages_only_when_asked(tmp_path):
    from asg.learning.fetch_programs import STAGES, shipped
    # the shipped stages are part of the package (tests/test_packaging.py checks the wheel holds them)
    files = [shipped(stage) for stage in STAGES]
    result = run("train", "--domain", "fetch-programs", "--out", "pipe", "--reuse-shipped", "--quiet", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    sources = {name: stage["source"] for name, stage in summary["stages"].items()}
    assert sources == dict(zip(("goal-policy", "behaviour-model", "meta-controller"), map(str, files)))
    assert not any(s["trained"] for s in summary["stages"].values())
    assert not (tmp_path / "pipe").exists()  # nothing trained, nothing written


def test_the_library_entry_fills_defaults_and_refuses_a_config_with_resume(tmp_path, monkeypatch):
    from asg.learning import fetch_programs as fp
    from asg.learning.configio import FieldError

    monkeypatch.chdir(tmp_path)
    result = fp.train(None, reuse_shipped=True)  # the pipeline, the fast preset, runs/fetch-programs-fast-seed0
    assert result.run_dir == str(fp.default_out(None, "fast", 0)) and result.preset == "fast"
    assert result.lines()[0].startswith("goal-policy      using ") and len(result.lines()) == 3
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    with pytest.raises(FieldError) as err:
        fp.train("goal-policy", tmp_path / "gp", resume=True, config_file=tmp_path / "tiny.json")
    assert err.value.field == "config_file" and not (tmp_path / "gp").exists()


def tiny_stage_configs():
    """The goal policy of TINY and a behaviour model of seconds, as library configs."""
    from asg.learning import configio
    from asg.learning import fetch_programs as fp

    return (configio.override(fp.goal_policy_config("fast"), TINY, "config"),
            configio.override(fp.behaviour_config("fast"), {"hidden": [32, 32], "epochs": 2, "n_envs": 4,
                                                           "episodes": 8}, "config"))


def test_the_pipeline_trains_every_stage_and_the_same_call_continues(tmp_path):
    """``train_pipeline`` end to end on tiny budgets: three real stages into one folder; run again,
    every finished stage is reused, nothing retrained (the command a user types to continue)."""
    from asg.learning import fetch_programs as fp
    from asg.learning.results import Status

    goal, behaviour = tiny_stage_configs()
    seen: list[tuple[str, str]] = []
    kwargs = {"goal_policy": goal, "behaviour": behaviour, "iterations": 1, "workers": 1,
              "on_stage": lambda stage, what: seen.append((stage, what))}
    first = fp.train_pipeline(tmp_path / "pipe", **kwargs)
    assert first.status == Status.FINISHED and all(s.trained for s in first.stages.values())
    assert [stage for stage, _ in seen] == list(fp.STAGES) and all(w.startswith("training") for _, w in seen)
    mc = first.stages["meta-controller"].result
    assert mc is not None and mc.summary["model"] == "learned" and mc.summary["iterations"] == 1
    assert first.artifact("behaviour-model").is_file() and first.to_json()["status"] == "finished"
    seen.clear()
    again = fp.train_pipeline(tmp_path / "pipe", **kwargs)
    assert again.status == Status.REUSED and not any(s.trained for s in again.stages.values())
    assert [what for _, what in seen] == [f"reusing {tmp_path / 'pipe' / stage}" for stage in fp.STAGES]


def test_a_goal_policy_epoch_budget_runs_the_whole_pipeline_on_the_policy_as_it_is(tmp_path):
    """``--goal-policy-epochs``: the goal policy stops at that epoch of its schedule (paused, resumable)
    and the behaviour model and meta-controller train on it; the same command again reuses all three."""
    from asg.learning import fetch_programs as fp

    args = ("train", "--domain", "fetch-programs", "--out", "pipe", "--goal-policy-epochs", "1", "--quiet", "--json")
    goal, behaviour = tiny_stage_configs()
    first = fp.train_pipeline(tmp_path / "pipe", goal_policy=goal, behaviour=behaviour, iterations=1,
                              goal_policy_epochs=1)
    gp = first.stages["goal-policy"].result
    assert gp is not None and gp.status == "paused" and gp.summary["epochs"] == 1 and gp.summary["total_epochs"] == 2
    assert first.stages["meta-controller"].trained and first.status == "finished"
    again = run(*args)
    assert again.exit_code == 0, again.output
    summary = json.loads(again.output[again.output.index("{"):])
    assert not any(stage["trained"] for stage in summary["stages"].values())
    assert "--goal-policy-epochs: not an option" in one_line(run(
        "train", "--domain", "fetch-programs", "--stage", "goal-policy", "--goal-policy-epochs", "1"))


def test_the_paper_preset_trains_the_meta_controller_without_our_prunings(tmp_path):
    from asg.learning import fetch_programs as fp

    assert not fp.meta_controller_config("fast").search.psi_prunings
    assert not fp.meta_controller_config("paper").search.psi_prunings
    trained = run("train", "--domain", "fetch-programs", "--stage", "meta-controller", "--preset", "paper",
                  "--iterations", "1", "--world-model", "exact", "--out", "mc", "--quiet", "--json")
    assert trained.exit_code == 0, trained.output
    saved = json.loads((tmp_path / "mc" / "config.json").read_text())["config"]
    assert saved["search"]["psi_prunings"] is False and saved["search"]["stop_at_expansion"] is False


def test_the_meta_controller_stage_takes_config_fields_over_its_preset(tmp_path):
    (tmp_path / "over.json").write_text(json.dumps({"search": {"stop_at_expansion": True}}))
    trained = run("train", "--domain", "fetch-programs", "--stage", "meta-controller", "--preset", "paper",
                  "--config", "over.json", "--iterations", "1", "--world-model", "exact", "--out", "mc", "--quiet")
    assert trained.exit_code == 0, trained.output
    search = json.loads((tmp_path / "mc" / "config.json").read_text())["config"]["search"]
    assert search["stop_at_expansion"] is True and search["psi_prunings"] is False  # the preset's, kept
    (tmp_path / "bad.json").write_text(json.dumps({"search": {"stop_at_expansoin": True}}))
    line = one_line(run("train", "--domain", "fetch-programs", "--stage", "meta-controller", "--config", "bad.json",
                        "--iterations", "1", "--world-model", "exact", "--out", "mc2", "--quiet"))
    assert "bad.json" in line and "stop_at_expansoin" in line and "stop_at_expansion" in line
    assert not (tmp_path / "mc2").exists()


def test_a_goal_policy_interrupted_past_its_epoch_budget_is_not_trained_further(tmp_path):
    """``--goal-policy-epochs N`` counts the epochs the folder holds: a result's, or the checkpoint's of a
    later run that was interrupted (a resumed ``--epochs 2`` once trained to epoch 3 from a stale result)."""
    from asg.learning import checkpoint
    from asg.learning import fetch_programs as fp

    folder = tmp_path / "goal-policy"
    folder.mkdir()
    assert fp._epochs_done(folder) == 0
    (folder / fp.RESULT).write_text(json.dumps({"epochs": 1, "status": "paused"}))
    assert fp._epochs_done(folder) == 1
    checkpoint.save(folder / "checkpoint.npz", "goal-policy-trainer", {"x": 1},
                    meta={"epoch": 2, "cycles_into_epoch": 36})
    assert fp._epochs_done(folder) == 2
