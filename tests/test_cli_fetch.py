"""``asg programs`` and ``asg fetch run`` through click's CliRunner, error paths included."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from asg.cli.main import main


@pytest.fixture()
def runner():
    return CliRunner()


def test_programs_json(runner):
    result = runner.invoke(main, ["programs", "--json"])
    assert result.exit_code == 0, result.output
    programs = json.loads(result.output)["programs"]
    assert len(programs) == 27
    first = programs[0]
    assert first["name"] == "Stack_0_1" and first["level"] == 0 and first["arguments"] == ["b0", "b1"]
    assert first["calls"] == [] and first["pre"].startswith("(and") and "(on b0 b1)" in first["post"]
    top = {p["name"]: p for p in programs}["Clean_And_Stack"]
    assert top["level"] == 2 and "Stack_All_To_Zone_ORANGE" in top["calls"] and top["post"].startswith("(or")
    assert first["subgoals"] is None and top["subgoals"] == []
    clean = {p["name"]: p for p in programs}["Clean_Table"]
    assert sorted(clean["subgoals"]) == ["(in-zone b0 orange)", "(in-zone b1 orange)", "(in-zone b2 blue)",
                                         "(in-zone b3 blue)"]


def test_programs_text_shows_the_hierarchy(runner, tmp_path):
    result = runner.invoke(main, ["programs"])
    assert result.exit_code == 0
    assert "20 atomic and 7 non-atomic programs" in result.output
    assert "[2] Clean_And_Stack -> Stack, Move_To_Zone, Stack_All_To_Zone" in result.output
    assert "landmarks (from the model's :init): (in-zone b0 orange) (in-zone b1 orange)" in result.output
    out = tmp_path / "programs.txt"
    assert runner.invoke(main, ["programs", "-o", str(out)]).exit_code == 0
    assert "Move_To_Zone_3_BLUE" in out.read_text()


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_programs_graph_files(runner, tmp_path, fmt, magic):
    out = tmp_path / f"hierarchy.{fmt}"
    result = runner.invoke(main, ["programs", "--format", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(magic)
    assert not list(tmp_path.glob("*.tmp*"))


@pytest.mark.parametrize("args, message", [
    (["programs", "--format", "png"], "needs -o/--output"),
    (["programs", "--format", "gif"], "Invalid value"),
    (["fetch", "run", "Stack_0_0"], "unknown program 'Stack_0_0'"),
    (["fetch", "run", "Stack_0_1", "--controller", "ddpg"], "Invalid value"),
    (["fetch", "run", "Stack_0_1", "--initial-state", "floor"], "Invalid value"),
    (["fetch", "run", "Stack_0_1", "--frame-every", "0"], "Invalid value"),
    (["fetch", "run"], "Missing argument"),
])
def test_bad_input_exits_2(runner, args, message):
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_fetch_run_atomic_success(runner):
    result = runner.invoke(main, ["fetch", "run", "move_to_zone_2_blue", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "Move_To_Zone_2_BLUE" in result.output and "(in-zone b2 blue)" in result.output
    assert result.output.strip().endswith("(50 steps, 1 atomic calls)")


def test_fetch_run_non_atomic_prints_the_plan(runner):
    result = runner.invoke(main, ["fetch", "run", "Stack_All_To_Zone_ORANGE", "--seed", "0"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "plan (exact behaviour model):" in lines
    assert any(line.strip() == "Stack_All_To_Zone_ORANGE" for line in lines)
    assert sum(" ok" in line for line in lines) == 2


def test_fetch_run_failure_exits_1(runner, monkeypatch):
    from asg.envs.fetch import scripted

    monkeypatch.setattr(scripted.ScriptedController, "act", lambda self, obs: np.zeros(4))
    result = runner.invoke(main, ["fetch", "run", "Stack_1_0", "--seed", "0"])
    assert result.exit_code == 1, result.output
    assert "FAILED" in result.output and "failure" in result.output


def test_fetch_run_writes_frames(tmp_path):
    frames = tmp_path / "frames"
    code = "from asg.cli.main import main; main()"
    args = ["fetch", "run", "Stack_2_3", "--frames", str(frames), "--frame-every", "25"]
    errors = []
    for backend in ([os.environ["MUJOCO_GL"]] if os.environ.get("MUJOCO_GL") else ["egl", "osmesa"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                             env={**os.environ, "MUJOCO_GL": backend}, timeout=300)
        if out.returncode == 0:
            assert sorted(p.name for p in frames.iterdir()) == [f"frame_0000{k}.png" for k in range(3)]
            assert "wrote 3 frames" in out.stdout
            return
        assert out.returncode == 2 and "rendering failed" in out.stderr, out.stderr[-2000:]
        errors.append(backend)
    pytest.skip(f"no offscreen GL backend ({', '.join(errors)} failed): apt-get install libosmesa6, "
                "MUJOCO_GL=osmesa")
