"""Model hints from training (issue 39 part 2) and where a run stalls (part 4).

The rule on made-up skill runs of Household without the battery (``pddl_models/omitted/``): the
atom every success had and a dead end lacked is the hint, never from fewer successes than the
stated minimum, withdrawn by one success without it; then a real short run through ``asg train``
and ``asg eval RUN --hints``, and (slow) a run long enough to name the omitted ``(charged)``.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from asg.cli.main import main
from asg.learning.asgrl import model_hints
from asg.learning.asgrl.evaluation import stall_line
from asg.learning.asgrl.subgoals import landmark_subgoals
from asg.learning.asgrl.trainer import TrainerState
from asg.learning.errors import CheckpointError
from asg.learning.run_dir import RunDir
from asg.planning import compute_landmarks, load_task
from asg.planning.grounding import ground
from asg.planning.parse import parse_files, parse_text
from asg.planning.repair import apply_edits

MODEL = Path(__file__).resolve().parents[1] / "pddl_models" / "omitted" / "household_no_battery.pddl"
START = "(at-starting-room) (door-locked)"
KEY = {c: f"(at-starting-room) (door-locked) (has-key) (holding {c})" for c in ("red", "yellow", "green")}
OPEN = "(at-starting-room) (door-open) (has-key) (holding red)"
FINAL = "(at-final-room) (has-key) (holding red)"
FINAL_CHARGED = "(at-final-room) (charged) (has-key) (holding red)"


@pytest.fixture(scope="module")
def task():
    return load_task(MODEL)


def evidence(wins: int, uncharged_fails: int, uncharged_wins: int = 0) -> model_hints.Evidence:
    """Skill runs of the four landmarks: the door opens only with the red key; the destination is
    reached from the final room ``wins`` times charged, ``uncharged_wins`` times uncharged, and
    fails ``uncharged_fails`` times uncharged."""
    ends = {FINAL_CHARGED.replace("(at-final-room)", "(at-destination) (at-final-room)"): wins}
    uncharged = [uncharged_fails + uncharged_wins, {FINAL: uncharged_wins} if uncharged_wins else {}]
    return {"(has-key)": {START: [40, {KEY["red"]: 20, KEY["yellow"]: 15, KEY["green"]: 5}]},
            "(door-open)": {KEY["red"]: [20, {OPEN: 20}], KEY["yellow"]: [15, {}], KEY["green"]: [5, {}]},
            "(at-final-room)": {OPEN: [20, {FINAL_CHARGED: wins, FINAL: 20 - wins}]},
            "(at-destination)": {FINAL_CHARGED: [wins, {k: v for k, v in ends.items() if v}], FINAL: uncharged}}


def report(task, ev):
    return model_hints.hints_report(ev, task, landmark_subgoals(task), 40, model_hints.hint_config(20))


def test_the_atom_every_success_had_and_a_dead_end_lacked_is_the_hint(task):
    found = report(task, evidence(wins=12, uncharged_fails=3))
    assert found.status == "ok"
    by_atom = {h.atoms: h for h in found.hints}
    charged = by_atom[("(charged)",)]
    assert charged.kind == "missing-landmark"  # the model has no (charged): declared, achieved, required
    assert [str(e) for e in charged.edits][0] == "declare (charged) in :predicates"
    assert "add (charged) to the precondition of go_to_destination" in map(str, charged.edits)
    assert charged.support == 12 + 3 and charged.goal_traces == 15
    red = by_atom[("(holding red)",)]
    assert red.kind == "missing-precondition" and [str(e) for e in red.edits] == [
        "add (holding red) to the precondition of open_door"]
    assert red.support == 20 + 15 + 5  # every run of (door-open)'s skills shows it
    assert found.hints[0] is red  # more episodes show it
    # the edits give a model whose landmarks include the omitted atom
    fixed = apply_edits(parse_files(MODEL), [e for h in found.hints for e in h.edits])
    graph = compute_landmarks(ground(parse_text(fixed, name="fixed", require_problem=True)))
    assert "(charged)" in {str(a) for lm in graph.landmarks for a in lm.atoms}


def test_no_hint_from_fewer_successes_than_the_minimum_but_a_note_saying_how_many_more(task):
    found = report(task, evidence(wins=6, uncharged_fails=3))
    assert "(charged)" not in {a for h in found.hints for a in h.atoms}
    note = next(n for n in found.notes if n.startswith("not asserted yet: (charged) before (at-destination)"))
    assert "succeeded 6 time(s)" in note and "a hint needs 10 successes" in note
    assert "more training episodes" in note and found.more_episodes is not None and found.more_episodes > 0
    assert "not asserted yet: (charged)" in "\n".join(found.lines())


def test_one_success_without_the_atom_withdraws_it_and_one_failure_is_no_dead_end(task):
    assert ("(charged)",) not in {h.atoms for h in report(task, evidence(12, 3, uncharged_wins=1)).hints}
    single = report(task, evidence(wins=12, uncharged_fails=1))
    assert ("(charged)",) not in {h.atoms for h in single.hints}
    assert any(n.startswith("not asserted yet: (charged)") for n in single.notes)


def test_too_few_episodes_in_all_is_a_status_with_its_estimate(task):
    ev = {"(has-key)": {START: [4, {KEY["red"]: 2}]}, "(door-open)": {KEY["red"]: [2, {}]}}
    found = report(task, ev)
    assert found.status == "too-few-episodes" and not found.hints
    assert found.more_episodes == 160  # 8 more successes at 2 in 40 episodes
    assert found.lines()[0].startswith("model hints: no landmark's skills succeeded in 10 of 40")
    assert any("(door-open): its skills never succeeded in 2 runs" in n for n in found.notes)


def test_the_file_round_trips_and_refuses_what_is_not_one(task):
    found = report(task, evidence(wins=12, uncharged_fails=3))
    data = json.loads(json.dumps(model_hints.to_file(found, {"domain": "household-v1"})))
    assert (data["schema"], data["version"]) == (model_hints.SCHEMA, model_hints.VERSION)
    assert model_hints.from_file(data, "x").lines() == found.lines()
    with pytest.raises(CheckpointError, match="not a model hints file"):
        model_hints.from_file({"hints": []}, "x")
    with pytest.raises(CheckpointError, match="version 99"):
        model_hints.from_file({**data, "version": 99}, "x")
    with pytest.raises(CheckpointError, match="corrupt"):
        model_hints.from_file({**data, "hints": [{"kind": "x"}]}, "x")


def test_a_checkpoint_from_before_model_hints_still_loads():
    state = TrainerState(rng=__import__("numpy").random.default_rng(0))
    old = {k: v for k, v in state.to_tree().items() if k != "evidence"}
    assert TrainerState.from_tree(old, "x").evidence == {}


def test_stall_line_names_the_last_landmark_always_reached_and_the_next_never():
    reached = {"(has-key)": 10, "(door-open)": 0, "(at-destination)": 0}
    assert stall_line(reached, 10, 0.0, "greedy evaluation") == (
        "stalled: reached (has-key) in 10/10 greedy evaluation episodes, (door-open) in 0/10")
    assert stall_line({"(has-key)": 0, "(door-open)": 0}, 10, 0.0).startswith("stalled: reached (has-key) (the first")
    assert stall_line({"(has-key)": 10, "(door-open)": 4, "(x)": 0}, 10, 0.0) == (
        "landmarks reached in 10 evaluation episodes: (has-key) 10/10, (door-open) 4/10, (x) 0/10")
    assert stall_line({"(has-key)": 10}, 10, 1.0) is None


def test_the_curve_names_its_protocol_and_plots_each_landmark(tmp_path, monkeypatch):
    import asg.learning.plots as plots

    drawn = {}
    monkeypatch.setattr(plots, "plot_curves", lambda path, rows, panels, *a, **k: drawn.setdefault("panels", panels))
    rows = [{"env_steps": 0, "success_rate": 0.0, "reached_(a)": 1.0, "reached_(b)": 0.0}]
    RunDir(tmp_path).plot_curve(rows, "t", "ε-greedy (ε = 0.05)")
    success, reached = drawn["panels"]
    assert success.ylabel == "ε-greedy (ε = 0.05) success rate"
    assert reached.series == ("reached_(a)", "reached_(b)") and reached.labels == ("(a)", "(b)")


# ------------------------------------------------------------------ real runs
def train(out: Path, steps: int, *extra: str):
    return CliRunner().invoke(main, ["train", "--domain", "household-v1", "--model", str(MODEL), "--seed", "0",
                                     "--steps", str(steps), "--out", str(out), "--quiet", *extra])


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("hints") / "run"
    result = train(out, 40_000, "--curve-eval", "epsilon")
    assert result.exit_code == 0, result.output
    return out, result.output


def test_a_short_run_writes_model_hints_and_says_what_it_cannot_assert_yet(short_run):
    out, output = short_run
    data = json.loads((out / "model_hints.json").read_text())
    assert (data["schema"], data["version"], data["run"]["domain"]) == ("asg-model-hints", 1, "household-v1")
    saved = RunDir.open(out).read_model_hints().report
    assert saved.lines(top=3, brief=True)[0] in output  # asg train printed its head
    shown = CliRunner().invoke(main, ["eval", str(out), "--hints"])
    assert shown.exit_code == 0 and shown.output.splitlines() == saved.lines()
    as_json = CliRunner().invoke(main, ["eval", str(out), "--hints", "--json"])
    assert as_json.exit_code == 0 and json.loads(as_json.output) == data
    # too few episodes for the omitted (charged): noted, with how many more, never asserted
    noted = [n for n in saved.notes if n.startswith("not asserted yet: (charged)")]
    assert noted and "more training episodes" in noted[0] or "(charged)" in {a for h in saved.hints for a in h.atoms}
    # the evidence counts every episode's first skill run, and a run of the next landmark per success
    checkpoint = RunDir.open(out).load_checkpoint()
    ev, episodes = checkpoint["state"]["evidence"], checkpoint["learner"].episodes
    runs = {lm: (sum(n for n, _ in s.values()), sum(sum(e.values()) for _, e in s.values())) for lm, s in ev.items()}
    assert runs["(has-key)"][0] == episodes == data["goal_traces"]
    assert runs["(has-key)"][1] - 1 <= runs["(door-open)"][0] <= runs["(has-key)"][1]


def test_a_short_run_reports_landmarks_reached_under_its_protocol(short_run):
    out, output = short_run
    with (out / "metrics.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    names = json.loads((out / "subgoals.json").read_text())["subgoals"]
    assert [k for k in rows[0] if k.startswith("reached_")] == [f"reached_{n}" for n in names]
    for row in rows:  # the goal landmark is reached exactly in the successful episodes
        assert float(row["reached_(at-destination)"]) == float(row["success_rate"])
    result = json.loads((out / "result.json").read_text())
    assert result["reached"] == [[n, round(float(rows[-1][f"reached_{n}"]) * 10)] for n in names]
    assert "over 10 ε-greedy (ε = 0.05) episodes" in output
    expected = stall_line(dict(result["reached"]), 10, result["success_rate"], "ε-greedy (ε = 0.05) evaluation")
    assert result["success_rate"] == 1.0 or expected in output.splitlines()


def test_eval_hints_errors_are_one_line(short_run, tmp_path):
    out, _ = short_run
    for args, message in ((["--episodes", "3"], "--episodes: not with --hints"),
                          (["--retry-epsilon", "0.2"], "--retry-epsilon: not with --hints"),
                          (["--retry-other-skill"], "--retry-other-skill: not with --hints"),
                          (["--domain", "mario"], "holds a run of household-v1")):
        result = CliRunner().invoke(main, ["eval", str(out), "--hints", *args])
        assert result.exit_code == 2 and message in result.output.strip().splitlines()[-1], result.output
    # a run trained without learner.retry_timed_out has no retries for the noise to act in
    for flag in (["--retry-epsilon", "0.2"], ["--retry-other-skill"]):
        result = CliRunner().invoke(main, ["eval", str(out), *flag, "--episodes", "1"])
        assert result.exit_code == 2 and "expected retry_timed_out true" in result.output.strip().splitlines()[-1]
        assert len(result.output.strip().splitlines()) == 1, result.output
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((out / "config.json").read_text())
    result = CliRunner().invoke(main, ["eval", str(bare), "--hints"])
    assert result.exit_code == 2 and "no model_hints.json" in result.output
    result = CliRunner().invoke(main, ["eval", "--domain", "fetch-programs", "--hints"])
    assert result.exit_code == 2 and "--hints" in result.output


@pytest.mark.slow
def test_a_longer_run_names_the_omitted_battery_in_its_top_hints(tmp_path):
    out = tmp_path / "run"
    result = train(out, 300_000)
    assert result.exit_code == 0, result.output
    hints = RunDir.open(out).read_model_hints().report.hints
    assert "(charged)" in {a for h in hints[:3] for a in h.atoms}, [h.lines()[0] for h in hints]
    fixed = apply_edits(parse_files(MODEL), [e for h in hints[:3] for e in h.edits])
    graph = compute_landmarks(ground(parse_text(fixed, name="fixed", require_problem=True)))
    assert "(charged)" in {str(a) for lm in graph.landmarks for a in lm.atoms}
