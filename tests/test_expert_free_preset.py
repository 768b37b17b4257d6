"""The ``learned`` preset (issue 36): AlphaNPI-X with no scripted expert anywhere in training.

The whole pipeline (goal policy, behaviour model, meta-controller) runs on a tiny budget with the
scripted controller and its stateless expert patched to raise: it must complete.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from asg.cli.main import main

# fetch's TINY of test_cli_fetch_programs.py without its demonstration fields: sizes only
TINY = {
    "agent": {"hidden": [32, 32], "batch_size": 32},
    "replay": {"buffer_size": 5000, "state_buffer_size": 50},
    "schedule": {"epochs_phase1": 1, "epochs_phase2": 1, "cycles": 1, "batches": 2, "episodes_per_cycle": 2,
                 "eval_episodes": 2, "threads": 1, "checkpoint_every": 1,
                 "programs": ["Move_To_Zone_0_ORANGE", "Stack_1_0"]},
}
TINY_BEHAVIOUR = {"hidden": [32, 32], "epochs": 2, "n_envs": 4, "episodes": 8}
TINY_META = {"search": {"simulations": 3, "simulations_exploit": 2, "sub_simulations": 2},
             "episodes_per_iteration": 2, "validation_episodes": 1}


class ExpertCalled(AssertionError):
    """Raised by the patched scripted controller and expert."""


@pytest.fixture
def no_expert(monkeypatch):
    """Every way into the scripted controller or its expert raises: constructing the controller
    (demonstrations, ``run_atomic``'s default, the runner, the program models), its ``act``/``reset``,
    and the stateless expert DAgger labels with, under every name it is imported by."""
    import asg.envs.fetch as fetch
    import asg.envs.fetch.expert as expert
    import asg.envs.fetch.scripted as scripted
    import asg.learning.goal_policy.dagger as dagger

    def boom(*args, **kwargs):
        raise ExpertCalled("the scripted controller or its expert was called")

    for name in ("__init__", "act", "reset"):
        monkeypatch.setattr(scripted.ScriptedController, name, boom)
    for module in (expert, fetch, dagger):
        for name in ("expert_action", "expert_actions"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, boom, raising=False)


def tiny(preset: str):
    from asg.learning import configio
    from asg.learning import fetch_programs as fp

    return (configio.override(fp.goal_policy_config(preset), TINY, "config"),
            configio.override(fp.behaviour_config(preset), TINY_BEHAVIOUR, "config"),
            configio.override(fp.meta_controller_config(preset), TINY_META, "config"))


def test_the_learned_preset_is_fast_with_every_expert_use_off():
    from asg.learning import fetch_programs as fp
    from asg.learning.goal_policy.config import uses_expert

    fast, learned = fp.goal_policy_config("fast"), fp.goal_policy_config("learned")
    assert uses_expert(fast) and not uses_expert(learned) and not uses_expert(fp.goal_policy_config("paper"))
    d = learned.demos
    assert (d.episodes, d.pretrain_steps, d.reset_prob, d.dagger) == (0, 0, 0.0, False)
    # the additions that are not an expert stay as in fast
    assert learned.replay.strategy == fast.replay.strategy == "future"
    assert learned.agent == fast.agent
    for name in ("chained_starts", "goal_z_tolerance", "episodes_per_cycle", "actors", "phase1_goals"):
        assert getattr(learned.schedule, name) == getattr(fast.schedule, name), name
    learned, fast = fp.meta_controller_config("learned"), fp.meta_controller_config("fast")
    assert learned.net.state_view == "blocks" and fast.net.state_view == "full"
    assert replace(learned, net=fast.net) == fast  # fast's otherwise
    assert fp.meta_controller_config("learned").search.stop_at_expansion
    assert fp.behaviour_config("learned").anchor == "goal"


def test_the_patch_catches_the_expert_where_fast_uses_it(no_expert):
    """The patch is not vacuous: ``fast``'s demonstrations construct the scripted controller."""
    from asg.learning.goal_policy.trainer import GoalPolicyTrainer

    goal, _, _ = tiny("fast")
    trainer = GoalPolicyTrainer(goal, seed=0)
    try:
        with pytest.raises(ExpertCalled):
            trainer.prepare_demos()
    finally:
        trainer.close()


def test_the_learned_pipeline_never_calls_the_scripted_controller(tmp_path, no_expert):
    """One tiny run of every stage of the ``learned`` preset with the expert patched to raise."""
    from asg.learning import fetch_programs as fp
    from asg.learning.results import Status

    goal, behaviour, meta = tiny("learned")
    result = fp.train_pipeline(tmp_path / "pipe", preset="learned", goal_policy=goal, behaviour=behaviour,
                               meta_controller=meta, iterations=1, workers=1)
    assert result.status == Status.FINISHED and all(s.trained for s in result.stages.values())
    saved = json.loads((tmp_path / "pipe" / "goal-policy" / "config.json").read_text())["config"]
    assert saved["preset"] == "learned" and saved["demos"]["episodes"] == 0 and not saved["demos"]["dagger"]
    mc = json.loads((tmp_path / "pipe" / "meta-controller" / "config.json").read_text())["config"]
    assert mc["search"]["stop_at_expansion"] is True
    assert result.stages["meta-controller"].result.summary["model"] == "learned"


def test_asg_train_takes_the_learned_preset(tmp_path, monkeypatch, no_expert):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    out = CliRunner().invoke(main, ["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--preset",
                                    "learned", "--config", "tiny.json", "--out", "gp", "--quiet", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "gp" / "config.json").read_text())["config"]["preset"] == "learned"


def test_the_atomic_suite_scores_the_same_episodes_with_and_without_the_height_tolerance():
    """The issue's atomic figures come with and without the preset's 2 cm height tolerance."""
    from asg.learning import fetch_programs as fp

    names = ["Move_To_Zone_0_ORANGE", "Stack_1_0"]
    both = fp.evaluate_suite("atomic", episodes=4, programs=names, z_tolerance=0.02).payload
    plain = fp.evaluate_suite("atomic", episodes=4, programs=names).payload
    assert {n: r["success_rate"] for n, r in both["programs"].items()} == {
        n: r["success_rate"] for n, r in plain["programs"].items()}  # same seeds, same episodes
    assert all(both["tolerant_success"][n] <= both["programs"][n]["success_rate"] for n in names)  # stricter
    loose = fp.evaluate_suite("atomic", episodes=4, programs=names, z_tolerance=10.0).payload
    assert loose["tolerant_success"] == {n: r["success_rate"] for n, r in plain["programs"].items()}
    assert "z_tolerance" not in plain
    xy = fp.evaluate_suite("atomic", episodes=4, programs=names, z_tolerance=0.02, xy_tolerance=0.02).payload
    assert xy["xy_tolerance"] == 0.02 and all(xy["tolerant_success"][n] <= both["tolerant_success"][n] for n in names)
    wide = fp.evaluate_suite("atomic", episodes=4, programs=names, z_tolerance=0.02, xy_tolerance=10.0).payload
    assert wide["tolerant_success"] == both["tolerant_success"]
    out = CliRunner().invoke(main, ["eval", "--domain", "fetch-programs", "--suite", "multistep", "--z-tolerance",
                                    "0.02"])
    assert out.exit_code == 2 and "--z-tolerance: only with --suite atomic" in out.output
    out = CliRunner().invoke(main, ["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--xy-tolerance",
                                    "0.02"])
    assert out.exit_code == 2 and "--xy-tolerance: only with --suite atomic" in out.output


@pytest.mark.parametrize("args, expected", [
    (["--reuse-shipped"], "--reuse-shipped: not with the learned preset"),
    (["--stage", "behaviour-model"], "--policy: the learned preset needs a goal policy of its own"),
    (["--stage", "meta-controller"], "--behaviour-model: the learned preset needs a behaviour model of its own"),
])
def test_no_shipped_file_stands_in_for_a_stage_of_the_learned_preset(args, expected, tmp_path, monkeypatch):
    """The shipped files were trained with the scripted expert: the learned preset never falls back on them."""
    from conftest import one_line

    monkeypatch.chdir(tmp_path)
    line = one_line(CliRunner().invoke(main, ["train", "--domain", "fetch-programs", "--preset", "learned", *args]))
    assert expected in line and not list(tmp_path.iterdir())


# ------------------------------------------------ the committed expert-free pipeline (Table 2 row)
EXPERT_FREE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "fetch_programs" / "expert_free"
ROW = EXPERT_FREE / "table2-view-s3" / "non-atomic-replan-learned.json"  # the README's row


def committed_stage_files():
    """The row's goal policy (a soup of committed stages, tested below), meta-controller (one of 12 seeds, chosen on
    held-out starts, tested below) and behaviour model."""
    return (EXPERT_FREE / "goal-policy-soup" / "policy.npz", EXPERT_FREE / "meta-controller-seeds" / "view-s3",
            EXPERT_FREE / "behaviour-model-soup" / "behaviour_model.npz")


def test_the_committed_stages_were_trained_with_no_expert():
    """The row's goal policy descends, carry by carry, from a run of the learned preset started from
    scratch; the behaviour model was fitted on that very policy (its SHA-256); the meta-controller
    trained in the learned model. Every config says no demonstrations and no DAgger."""
    from asg.learning import checkpoint

    first = json.loads((EXPERT_FREE / "goal-policy" / "config.json").read_text())
    assert "carried_from" not in first and first["config"]["preset"] == "learned"
    for stage in ("goal-policy", "goal-policy-b", "goal-policy-c"):
        config = json.loads((EXPERT_FREE / stage / "config.json").read_text())["config"]
        assert config["preset"] == "learned" and config["demos"]["episodes"] == 0 and not config["demos"]["dagger"]
    carried = json.loads((EXPERT_FREE / "goal-policy-c" / "config.json").read_text())["carried_from"]
    assert carried["sha256"] == checkpoint.sha256_file(EXPERT_FREE / "goal-policy" / "carry.npz")
    policy, meta, model = committed_stage_files()
    behaviour = json.loads((model.parent / "config.json").read_text())
    assert behaviour["policy_sha256"] == checkpoint.sha256_file(policy)
    assert json.loads((meta / "config.json").read_text())["model"] == "learned"
    for stage in ("behaviour-model", "meta-controller"):  # the first row's stages, of goal-policy-c
        assert (EXPERT_FREE / stage / "config.json").is_file()
    first = json.loads((EXPERT_FREE / "behaviour-model" / "config.json").read_text())
    assert first["policy_sha256"] == checkpoint.sha256_file(EXPERT_FREE / "goal-policy-c" / "policy.npz")
    later = sorted(path.name.split("-")[-1] for path in EXPERT_FREE.glob("behaviour-model-?"))
    assert {"f", "h", "i", "j", "k", "l", "m", "n", "o"} <= set(later)
    for letter in later:  # every later stage's model was fitted on its own goal policy, its meta-controller in it
        fitted = json.loads((EXPERT_FREE / f"behaviour-model-{letter}" / "config.json").read_text())
        assert fitted["policy_sha256"] == checkpoint.sha256_file(EXPERT_FREE / f"goal-policy-{letter}" / "policy.npz")
        assert json.loads((EXPERT_FREE / f"meta-controller-{letter}" / "config.json").read_text())["model"] == "learned"
    for longer in ("m700", "o700"):  # meta-controller-m and -o resumed to T5's 700 iterations, in the same model
        assert json.loads((EXPERT_FREE / f"meta-controller-{longer}" / "config.json").read_text())["model"] == "learned"
        assert json.loads((EXPERT_FREE / f"meta-controller-{longer}" / "result.json").read_text())["iterations"] == 700


def test_the_continued_goal_policies_descend_from_the_rows_one():
    """goal-policy-d to -w continue the first row's goal policy carry by carry (the SHA-256 each config
    records is the committed carry file before it), with no demonstrations and no DAgger; what each
    changed is a curriculum field of ours (v's and w's horizontal tolerance among them), a learning rate
    or the emulated actors, named in ``carried_from.changed``."""
    from asg.learning import checkpoint

    chain = ("goal-policy-c", "goal-policy-d", "goal-policy-e", "goal-policy-f", "goal-policy-g", "goal-policy-h",
             "goal-policy-i", "goal-policy-j", "goal-policy-k", "goal-policy-l")
    branches = (("goal-policy-k", "goal-policy-m"),  # m continues k, beside l
                ("goal-policy-m", "goal-policy-n"), ("goal-policy-m", "goal-policy-o"),  # n and o continue m
                ("goal-policy-o", "goal-policy-p"),
                *(("goal-policy-m", f"goal-policy-{x}") for x in "qrstuvw"),  # scored on held-out starts
                ("goal-policy-v", "goal-policy-v2"))
    for before, stage in (*zip(chain, chain[1:]), *branches):
        saved = json.loads((EXPERT_FREE / stage / "config.json").read_text())
        config, carried = saved["config"], saved["carried_from"]
        assert config["preset"] == "learned" and config["demos"]["episodes"] == 0 and not config["demos"]["dagger"]
        assert carried["sha256"] == checkpoint.sha256_file(EXPERT_FREE / before / "carry.npz"), stage
        assert {key.split(".")[1] for key in carried["changed"]} <= {
            "chained_starts", "chained_handoff", "chained_place", "chained_place_family", "chained_jitter",
            "chained_tower_weights", "chained_other_zone", "release_height", "goal_xy_tolerance", "epochs_phase2",
            "lr_actor", "lr_critic", "actors"}, stage
    final = json.loads((EXPERT_FREE / "goal-policy-m" / "config.json").read_text())["config"]["schedule"]  # the row's
    assert (final["chained_handoff"], final["chained_place"], final["release_height"]) == (0.5, 0.4, 0.05)
    assert (final["chained_place_family"], final["chained_tower_weights"]) == ("Stack", [1.0, 1.0, 2.0])


def test_the_soup_is_the_weight_average_of_committed_stages():
    """goal-policy-soup is no training run: it is the greedy model soup of committed continuations of the
    row's lineage (each tested above), chosen on the held-out suite by fetch_select_snapshot.py --soup.
    Averaged again from the committed files, it is the committed policy, array for array."""
    from asg.learning.goal_policy.evaluate import average_policies, load_policy

    record = json.loads((EXPERT_FREE / "soup_m_descendants.json").read_text())
    greedy, = (row for row in record["rows"] if row["kind"] == "soup" and row["name"] == "greedy")
    repo = EXPERT_FREE.parents[3]
    stages = [Path(path).parent.name for path in greedy["ingredients"]]
    assert stages[0] == "goal-policy-m" and set(stages) <= {f"goal-policy-{x}" for x in "mnopqrstu"}
    again = average_policies([repo / path for path in reversed(greedy["ingredients"])])
    committed = load_policy(EXPERT_FREE / "goal-policy-soup" / "policy.npz")
    assert len(committed.layers) == len(again.layers) and np.array_equal(again.o_stats.mean, committed.o_stats.mean)
    for (w, b), (w2, b2) in zip(again.layers, committed.layers):
        assert np.array_equal(w, w2) and np.array_equal(b, b2)


def test_the_rows_meta_controller_is_the_held_out_choice_among_seeds_trained_in_the_learned_model():
    """meta-controller-seeds holds 11 meta-controllers beside meta-controller-soup (seed 0 of the full view), each
    trained in behaviour-model-soup's learned model with its own seed; selection.json scored all 12 in MuJoCo on
    held-out starts (seed 7919) and chose the row's, the best mean row there."""
    from asg.learning import checkpoint

    record = json.loads((EXPERT_FREE / "meta-controller-seeds" / "selection.json").read_text())
    assert record["seeds"] == [7919] and len(record["candidates"]) == 12
    best = max(record["candidates"], key=lambda row: row["mean"])
    _, meta, model = committed_stage_files()
    assert record["chosen"] == best["checkpoint"] == str(meta.relative_to(EXPERT_FREE.parents[3]))
    assert record["behaviour_model"] == str(model.relative_to(EXPERT_FREE.parents[3]))
    seeds = set()
    for row in record["candidates"]:
        folder = EXPERT_FREE.parents[3] / row["checkpoint"]
        saved = json.loads((folder / "config.json").read_text())
        view = saved["config"]["net"].get("state_view", "full")  # configs saved before the switch: full
        assert saved["model"] == "learned" and view in ("full", "blocks")
        seeds.add((view, saved["seed"]))
        meta_file = checkpoint.read_meta(folder / "meta_controller.npz")
        assert meta_file["seed"] == saved["seed"]
    assert seeds == {(view, seed) for view in ("full", "blocks") for seed in range(6)}


def test_the_committed_row_is_evaluated_with_no_expert(no_expert, tmp_path):
    """The evaluation that made the row, on the committed files, with the scripted controller and
    its expert patched to raise (one episode of each program)."""
    from asg.learning import fetch_programs as fp

    policy, meta, behaviour = committed_stage_files()
    result = fp.evaluate_suite("non-atomic", episodes=1, policy=policy, checkpoint=meta, mode="replan",
                               world_model_kind="learned", behaviour_model=behaviour, out=tmp_path)
    assert set(result.payload["families"]) == set(json.loads(ROW.read_text())["families"])


@pytest.mark.slow
def test_the_committed_files_reproduce_the_row(no_expert, tmp_path):
    """asg eval's replan suite, 100 episodes a program, seed 0, on the committed files: the committed row."""
    from asg.learning import fetch_programs as fp

    policy, meta, behaviour = committed_stage_files()
    result = fp.evaluate_suite("non-atomic", episodes=100, policy=policy, checkpoint=meta, mode="replan",
                               world_model_kind="learned", behaviour_model=behaviour, out=tmp_path)
    assert result.payload["families"] == json.loads(ROW.read_text())["families"]
