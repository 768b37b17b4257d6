"""SIGTERM during ``asg train`` checkpoints cleanly; ``--resume`` then ends where an uninterrupted run does.

Needs the CLI to turn SIGTERM into ``KeyboardInterrupt`` (or a clean stop) in ``asg``'s main; the
training loop itself stops at the next episode boundary on SIGTERM and checkpoints there.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

ARGS = ["--domain", "mario", "--seed", "3", "--steps", "6000", "--eval-episodes", "1", "--quiet", "--json"]
CONFIG = {"checkpoint_interval": 500, "eval_interval": 1000}
KEYS = ("domain", "method", "seed", "success_rate", "env_steps", "episodes", "steps_to_success")


def _asg(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "asg.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def test_sigterm_checkpoints_and_resume_matches_an_uninterrupted_run(tmp_path):
    (tmp_path / "over.json").write_text(json.dumps(CONFIG))
    common = [*ARGS, "--config", str(tmp_path / "over.json")]
    whole = _asg("train", *common, "--out", str(tmp_path / "whole"))
    split = _asg("train", *common, "--out", str(tmp_path / "split"))
    deadline = time.time() + 300
    while not (tmp_path / "split" / "checkpoint.npz").is_file():
        assert split.poll() is None, split.communicate()
        assert time.time() < deadline
        time.sleep(0.05)
    split.send_signal(signal.SIGTERM)
    _, err = split.communicate(timeout=300)
    assert split.returncode != 0
    assert "Traceback" not in err, err
    assert json.loads((tmp_path / "split" / "result.json").read_text())["status"] == "interrupted"
    resumed = _asg("train", "--resume", str(tmp_path / "split"), "--quiet", "--json")
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    want, _ = whole.communicate(timeout=600)
    assert whole.returncode == 0
    a, b = json.loads(out), json.loads(want)
    assert {k: a[k] for k in KEYS} == {k: b[k] for k in KEYS}
