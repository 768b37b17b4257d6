"""Issue 14 ("a user's first hour") and issue 19 item 1, through CliRunner: every bad input is one
line and exit 2 before any work starts; help is whole; SIGTERM is Ctrl-C; progress without a TTY."""
from __future__ import annotations

import importlib
import io
import json
import os
import signal
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import one_line

from asg.cli import main as main_module
from asg.cli.main import COMMANDS, main

SMALL = ["--steps", "3000", "--eval-episodes", "2", "--quiet"]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --- 3. help is whole ----------------------------------------------------------------------------

def test_help_lists_every_command_on_one_uncut_line():
    result = run("--help")
    assert result.exit_code == 0
    rows = result.output.split("Commands:\n", 1)[1].splitlines()
    assert [row.split()[0] for row in rows if row.strip()] == sorted(COMMANDS)
    for row in rows:
        assert not row.rstrip().endswith("..."), row
        assert len(row) <= 80, row


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_static_short_help_table_matches_each_command(name):
    module, _, attribute = COMMANDS[name][0].partition(":")
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command) and command.name == name
    assert command.short_help == COMMANDS[name][1]
    assert run(name, "--help").exit_code == 0


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_pictures_without_output_are_a_usage_error(tmp_path, fmt):
    line = one_line(run("landmarks", "household-v1", "--format", fmt))
    assert "--format " + fmt in line and "-o" in line
    assert list(tmp_path.iterdir()) == []
    assert "needs -o/--output" in one_line(run("programs", "--format", fmt))


def test_mvtr_without_domain_is_one_line():
    line = one_line(run("mvtr"))
    assert "--domain" in line and "mario" in line


@pytest.mark.parametrize("args", [["mvtr", "--domain", "mario", "--seed", "-1"],
                                  ["fetch", "run", "Stack_0_1", "--seed", "-1"],
                                  ["train", "--domain", "mario", "--seed", "-1"]])
def test_negative_seeds_are_one_line(args):
    assert "--seed" in one_line(run(*args))


@pytest.mark.parametrize("args", [
    ["train", "--domain", "fetch-programs", "--stage", "behaviour-model", "--policy", ""],
    ["eval", "--domain", "fetch-programs", "--policy", ""],
    ["train", "--domain", "mario", "--config", ""],
    ["landmarks", ""],
])
def test_empty_paths_are_one_line_exit_2(args):
    line = one_line(run(*args))  # an input path is click's check ("Path '' does not exist"), a model ours
    option = args[-2] if args[-2].startswith("--") else "FILE"
    assert option in line and ("empty" in line or "'' does not exist" in line)


def test_eval_domain_with_a_run_evaluates_it(tmp_path):
    out = tmp_path / "run"
    assert run("train", "--domain", "mario", "--out", out, *SMALL).exit_code == 0
    result = run("eval", "--domain", "mario", out, "--episodes", "1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["domain"] == "mario"
    assert "holds a run of mario" in one_line(run("eval", "--domain", "household-v1", out))
    assert "give its folder" in one_line(run("eval", "--domain", "mario"))


# --- 2. one meaning per option name; workflow options refused in the other workflow ----------------

@pytest.mark.parametrize("args, needle", [
    (["train", "--domain", "fetch-programs", "--stage", "meta-controller", "--model-kind", "exact"],
     "No such option '--model-kind'"),
    (["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--model", "learned"], "No such option"),
    (["train", "--domain", "mario", "--world-model", "learned"], "--world-model: only with --domain fetch-programs"),
    (["train", "--domain", "mario", "--policy", __file__], "--policy: only with --domain fetch-programs"),
    (["train", "--domain", "fetch-programs", "--model", "mario"], "--model: not an option of --domain fetch-programs"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--method", "goal-q"],
     "--method: not an option"),
    (["train", "--domain", "fetch-programs", "--steps", "10"], "--steps: not an option"),
    (["eval", "somewhere", "--suite", "atomic"], "--suite: only with --domain fetch-programs"),
    (["eval", "somewhere", "--programs", "Stack_0_1"], "--programs: only with --domain fetch-programs"),
    (["eval", "somewhere", "--world-model", "exact"], "--world-model: only with --domain fetch-programs"),
    (["eval", "--domain", "fetch-programs", "--suite", "atomic", "--checkpoint", __file__],
     "--checkpoint: only with --suite non-atomic"),
    (["eval", "--domain", "fetch-programs", "--suite", "multistep", "--out", "ev"],
     "--out: only with --suite non-atomic"),
])
def test_options_of_the_other_workflow_are_refused(args, needle):
    assert needle in one_line(run(*args))


# --- 4. output paths are checked before any work ---------------------------------------------------

def _bad_outputs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, word the error line must contain), for a file and for a folder."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("x")
    return {
        "missing-parent": (str(tmp_path / "no" / "such" / "x.png"), "does not exist"),
        "proc": ("/proc/x.png", "cannot write"),
        "dev-null": ("/dev/null", "not a "),
        "folder-for-file": (str(folder), "is a folder"),
        "file-for-folder": (str(a_file), "is a file"),
    }


COMMANDS_WITH_OUTPUT = [
    ("landmarks", ["landmarks", "household-v1", "--format", "png", "-o"], "file"),
    ("landmarks-json", ["landmarks", "household-v1", "--format", "json", "-o"], "file"),
    ("programs", ["programs", "-o"], "file"),
    ("train", ["train", "--domain", "mario", *SMALL, "--out"], "dir"),
    ("train-fetch", ["train", "--domain", "fetch-programs", "--stage", "meta-controller", "--out"], "dir"),
    ("eval-non-atomic", ["eval", "--domain", "fetch-programs", "--suite", "non-atomic", "--out"], "dir"),
    ("compare", ["compare", "--domain", "mario", "--out"], "dir"),
    ("fetch-frames", ["fetch", "run", "Stack_0_1", "--frames"], "dir"),
]


# A folder is the right place for a --out folder and a file for a -o file: those pairs are not cases.
BAD_OUTPUT_CASES = [(name, args, kind, case) for name, args, kind in COMMANDS_WITH_OUTPUT
                    for case in ("missing-parent", "proc", "dev-null", "folder-for-file", "file-for-folder")
                    if (case, kind) not in (("folder-for-file", "dir"), ("file-for-folder", "file"))]


@pytest.mark.parametrize("name, args, kind, case", BAD_OUTPUT_CASES, ids=[f"{c[0]}-{c[3]}" for c in BAD_OUTPUT_CASES])
def test_bad_output_paths_are_one_line_before_any_work(tmp_path, monkeypatch, name, args, kind, case):
    from asg.learning import fetch_programs

    path, word = _bad_outputs(tmp_path)[case]
    if case == "missing-parent" and kind == "dir":
        path = str(Path(path).with_suffix(""))
    called = []
    for name in ("train_pipeline", "train_goal_policy", "train_behaviour_model", "train_meta_controller",
                 "evaluate_suite"):  # the library's Fetch entry points must not be reached
        monkeypatch.setattr(fetch_programs, name, lambda *a, **k: called.append((a, k)))
    line = one_line(run(*args, path))
    assert word in line and ("-o" in line or "--out" in line or "--frames" in line), line
    assert called == [] and not (tmp_path / "runs").exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_folder_is_one_line(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "cannot write" in one_line(run("landmarks", "mario", "--format", "json", "-o", locked / "g.json"))
        assert "cannot write" in one_line(run("train", "--domain", "mario", "--out", locked, *SMALL))
    finally:
        locked.chmod(0o700)


def test_output_checks_accept_good_places(tmp_path):
    from asg.learning.atomic import UnwritableError, check_writable

    assert check_writable(tmp_path / "new.png", "file") == tmp_path / "new.png"
    (tmp_path / "old.png").write_text("")
    assert check_writable(tmp_path / "old.png", "file") == tmp_path / "old.png"
    assert check_writable(tmp_path / "new-run", "dir") == tmp_path / "new-run"
    assert check_writable(tmp_path, "dir") == tmp_path
    with pytest.raises(UnwritableError, match="is a file; give a folder") as err:
        check_writable(tmp_path / "old.png", "dir")
    assert err.value.reason == "is a file; give a folder"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".asg-write-test")]


# --- 5. SIGTERM is Ctrl-C ------------------------------------------------------------------------

def test_sigterm_interrupts_a_command_in_one_line(monkeypatch):
    @click.command("sleeper")
    def sleeper() -> None:
        signal.raise_signal(signal.SIGTERM)
        raise AssertionError("SIGTERM did not interrupt")

    monkeypatch.setitem(main.commands, "sleeper", sleeper)
    before = signal.getsignal(signal.SIGTERM)
    assert one_line(run("sleeper"), 130) == "interrupted"
    assert signal.getsignal(signal.SIGTERM) == before  # restored after the command


@pytest.mark.parametrize("with_checkpoint", [False, True])
def test_goal_policy_ctrl_c_suggests_resume_only_with_a_checkpoint(tmp_path, monkeypatch, with_checkpoint):
    import asg.learning.goal_policy.trainer as goal_trainer

    out = tmp_path / "gp"

    def interrupted(*args, **kwargs):
        if with_checkpoint:
            out.mkdir()
            (out / "checkpoint.npz").write_bytes(b"")
        raise KeyboardInterrupt

    monkeypatch.setattr(goal_trainer, "train_goal_policy", interrupted)
    result = run("train", "--domain", "fetch-programs", "--stage", "goal-policy", "--out", out, "--quiet")
    assert result.exit_code == 130, result.output
    assert ("--resume" in result.output) == with_checkpoint, result.output


# --- 6. progress without a TTY, and what a run wrote -----------------------------------------------

def test_progress_without_a_tty_prints_a_few_plain_lines():
    from asg.cli.progress import Stages

    stream = io.StringIO()
    bar = Stages(stream=stream, every_seconds=1e9)
    for n in range(0, 191):
        bar("mario/asgrl", n, 1000, f"success {n / 1000:.2f}")
    bar.close("solved (greedy success 1.00), stopped early")
    text = stream.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 2  # 10 % reached once, then the final line
    assert "ETA" in lines[0] and "ETA" not in lines[1]
    assert lines[-1].startswith("mario/asgrl: 190/1000 steps (19 %)") and lines[-1].endswith("stopped early")


def test_stage_progress_counts_each_stage_in_its_own_unit():
    from asg.cli.progress import Stages

    stream = io.StringIO()
    stages = Stages(stream=stream)
    for stage, total in (("behaviour data", 10), ("meta-controller", 200)):
        stages(stage, 0, total)
        stages(stage, total // 2, total)
    stages.close("done")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("behaviour data: 5/10 episodes (50 %)")
    assert lines[1].startswith("behaviour data: 5/10 episodes") and lines[1].endswith("done")  # the next began
    assert lines[2].startswith("meta-controller: 100/200 iterations (50 %)") and lines[-1].endswith("done")
    assert len(lines) == 4


def test_stop_reasons():
    from asg.learning.asgrl.trainer import TrainResult
    from asg.learning.results import Status

    def reason(status: Status, rate: float) -> str:
        return TrainResult("mario", "asgrl", 0, rate, 1, 10, 0.1, 1, None, status).stop_reason()

    assert "solved" in reason(Status.SOLVED, 1.0)
    assert "budget" in reason(Status.FINISHED, 0.5)
    assert "interrupted" in reason(Status.INTERRUPTED, 0.0)


def test_train_reports_files_and_next_commands(tmp_path):
    out = tmp_path / "run"
    result = run("train", "--domain", "mario", "--steps", "3000", "--eval-episodes", "1", "--out", out)
    assert result.exit_code == 0, result.output
    assert "\r" not in result.stderr and len(result.stderr.splitlines()) <= 13
    assert result.stderr.splitlines()[-1].startswith("mario/asgrl seed 0: 3000/3000 steps (100 %)")
    assert f"wrote {out}: checkpoint" in result.stdout and "result.json" in result.stdout
    assert f"asg eval {out}" in result.stdout and "asg landmarks mario" in result.stdout


def test_main_imports_no_command_module():
    import subprocess
    import sys

    code = ("import sys\nfrom asg.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('asg.cli.') and m != 'asg.cli.main'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    assert main_module.COMMANDS  # the table is the help
