"""benchmarks/npi_select_seed.py and npi_state_gap.py: a meta-controller chosen among seeds on held-out
MuJoCo starts, the model-to-real gap its network reads; bad arguments are one line each."""
from __future__ import annotations

import json

import pytest
from conftest import REPO, benchmark_script

from asg.learning.npi.config import NetConfig, NPIConfig, SearchConfig
from asg.learning.npi.pipeline import train_meta_controller

STAGES = REPO / "benchmarks" / "results" / "fetch_programs" / "expert_free"
POLICY = STAGES / "goal-policy-soup" / "policy.npz"
MODEL = STAGES / "behaviour-model-soup" / "behaviour_model.npz"
TRAINED = STAGES / "meta-controller-soup"


def test_the_trained_meta_controller_is_chosen_over_an_untrained_one(tmp_path):
    """One iteration of 4 episodes leaves a network that has learned nothing: listed first, it still loses,
    so the choice is the held-out score's, not the order's."""
    untrained = tmp_path / "untrained"
    train_meta_controller(untrained, config=NPIConfig(net=NetConfig(), search=SearchConfig(simulations=5),
                                                      iterations=1, episodes_per_iteration=4, batch_size=4,
                                                      programs=("Move_All_To_Zone_BLUE",)), seed=0)
    out = tmp_path / "chosen.json"
    benchmark_script("npi_select_seed").main(["--checkpoints", str(untrained), str(TRAINED), "--policy", str(POLICY),
                                              "--behaviour-model", str(MODEL), "--episodes", "2", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["command"].startswith("python benchmarks/npi_select_seed.py") and data["seeds"] == [7919]
    rows = {r["checkpoint"]: r for r in data["candidates"]}
    assert set(rows) == {str(untrained), str(TRAINED)}
    assert data["chosen"] == str(TRAINED) and rows[str(TRAINED)]["mean"] > rows[str(untrained)]["mean"]
    assert set(rows[str(TRAINED)]["families"]) == set(data["families"])


def test_the_gap_is_measured_where_the_network_reads_the_state(tmp_path):
    out = tmp_path / "gap.json"
    benchmark_script("npi_state_gap").main(["--checkpoint", str(TRAINED), "--behaviour-model", str(MODEL),
                                            "--policy", str(POLICY), "--program", "Clean_And_Stack",
                                            "--episodes", "1", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["state_view"] == "full" and data["points"] >= 1 and data["seeds"] == [0]
    assert set(data["gap_in_normaliser_std"]) >= {"BLOCK_POS", "GRIP_POS", "BLOCK_EULER"}
    assert 0.0 <= data["argmax_disagreement"] <= 1.0 and 0.0 <= data["policy_total_variation"] <= 1.0


def test_rows_are_summarised_per_group(tmp_path):
    families = ("Stack_All_To_Zone", "Move_All_To_Zone", "Stack_All_Blocks", "Clean_Table", "Clean_And_Stack")
    rows = []
    for name, value in (("view-s0", 0.2), ("view-s1", 0.4), ("full-s0", 0.9)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"families": {f: value for f in families}}))
        rows.append(f"{name}={path}")
    out = tmp_path / "summary.json"
    benchmark_script("npi_select_seed").main(["--rows", *rows, "--out", str(out)])
    groups = json.loads(out.read_text())["groups"]
    assert groups["view"]["members"] == ["view-s0", "view-s1"] and groups["view"]["row_mean"] == pytest.approx(0.3)
    assert groups["view"]["std"]["Clean_Table"] == pytest.approx(0.141, abs=1e-3)
    assert groups["full"]["mean"]["Clean_And_Stack"] == 0.9 and groups["full"]["std"]["Clean_And_Stack"] == 0.0


@pytest.mark.parametrize(("script", "args", "message"), [
    ("npi_select_seed", ["--policy", str(POLICY)], "give either --checkpoints"),
    ("npi_select_seed", ["--rows", "no-equals-sign"], "expected NAME=FILE"),
    ("npi_select_seed", ["--rows", f"a={POLICY}"], "not a Table 2 file"),
    ("npi_select_seed", ["--checkpoints", "nowhere", "--policy", str(POLICY), "--behaviour-model", str(MODEL)],
     "nowhere: no such file or folder"),
    ("npi_select_seed", ["--checkpoints", str(TRAINED), "--policy", str(POLICY), "--behaviour-model", str(MODEL),
                         "--episodes", "0"], "--episodes and --jobs must be >= 1"),
    ("npi_state_gap", ["--checkpoint", str(TRAINED), "--policy", str(POLICY), "--behaviour-model", str(MODEL),
                       "--program", "Stack_2_3"], "--program: not a non-atomic program"),
])
def test_bad_arguments_are_one_line(capsys, script, args, message):
    with pytest.raises(SystemExit) as err:
        benchmark_script(script).main(args)
    assert err.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(lines) == 1 and message in lines[0]
