"""ASGRL run folders: checkpoints checked against config.json, corruption refused, one writer per folder."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from asg.learning.asgrl.config import make_config
from asg.learning.asgrl.trainer import train
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.run_dir import CHECKPOINT, RunDir, RunLock


def _small(seed: int = 0):
    return make_config("mario", "asgrl", seed=seed, total_steps=1500, eval_interval=500, eval_episodes=1)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = RunDir.create(tmp_path_factory.mktemp("runs") / "run", _small())
    train(_small(), run_dir=run)
    return run


def test_checkpoint_loads_the_same_learner(trained):
    payload = trained.load_checkpoint()
    assert payload["learner"].env_steps == 1500 and payload["meta"]["domain"] == "mario"
    assert payload["learner"].state_dict()["meta"] == payload["learner"].state_dict()["meta"]


@pytest.mark.parametrize("label", ["flip", "truncate", "pickle", "other-json"])
def test_corrupt_checkpoints_are_refused_and_left_as_they_are(trained, tmp_path, label):
    run = RunDir(tmp_path / "copy")
    run.path.mkdir()
    for name in ("config.json", "checkpoint.json", CHECKPOINT):
        (run.path / name).write_bytes((trained.path / name).read_bytes())
    data = (run.path / CHECKPOINT).read_bytes()
    bad = {"flip": data[:100] + bytes([data[100] ^ 0x10]) + data[101:], "truncate": data[:-200],
           "pickle": pickle.dumps({"learner": None, "state": None}),
           "other-json": json.dumps({"domain": "minecraft"}).encode()}[label]
    (run.path / CHECKPOINT).write_bytes(bad)
    with pytest.raises(CheckpointError, match="corrupt checkpoint"):
        run.load_checkpoint()
    with pytest.raises(CheckpointError, match="corrupt checkpoint"):
        train(run.config(), run_dir=run, resume=True)
    assert (run.path / CHECKPOINT).read_bytes() == bad and not (run.path / "result.json").exists()


def test_config_json_must_agree_with_the_checkpoint(trained, tmp_path):
    run = RunDir(tmp_path / "copy")
    run.path.mkdir()
    for name in ("config.json", "checkpoint.json", CHECKPOINT):
        (run.path / name).write_bytes((trained.path / name).read_bytes())
    saved = json.loads((run.path / "config.json").read_text())
    for field, value in (("domain", "minecraft"), ("seed", 1), ("method", "landmark-hrl")):
        edited = json.loads(json.dumps(saved))
        edited["config"][field] = value
        (run.path / "config.json").write_text(json.dumps(edited))
        with pytest.raises(CheckpointError, match=f"{field} is {value!r}.*{field} {saved['config'][field]!r}"):
            run.load_checkpoint()
    assert not (run.path / "result.json").exists()


def test_a_checkpoint_from_before_a_field_existed_reads_with_its_default(trained, tmp_path):
    from asg.learning import checkpoint as ckpt
    from asg.learning.run_dir import CHECKPOINT_KIND

    run = RunDir(tmp_path / "older")
    run.path.mkdir()
    (run.path / "config.json").write_bytes((trained.path / "config.json").read_bytes())
    loaded = ckpt.load(trained.path / CHECKPOINT, CHECKPOINT_KIND)
    older = json.loads(json.dumps(loaded.meta))
    for added in ("encoding", "categories", "epsilon_anneal_steps"):  # fields newer than such a checkpoint
        del older["learner"]["deep"][added]
    run.save_state(CHECKPOINT_KIND, loaded.tree, older)
    assert run.load_checkpoint()["learner"].env_steps == 1500
    older["learner"]["q"]["gamma"] = 0.9  # a value that differs is still refused
    run.save_state(CHECKPOINT_KIND, loaded.tree, older)
    with pytest.raises(CheckpointError, match="learner is .* but .* was written with learner"):
        run.load_checkpoint()


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    first = RunDir.create(tmp_path / "run", _small(0))
    with pytest.raises(CheckpointError, match=r"in use by another run \(pid \d+ on"):
        RunDir.create(tmp_path / "run", _small(1))
    assert json.loads((tmp_path / "run" / "config.json").read_text())["config"]["seed"] == 0
    with pytest.raises(CheckpointError, match="in use"):
        train(_small(0), run_dir=RunDir.open(tmp_path / "run"), resume=True)
    train(_small(0), run_dir=first)  # the holder trains; the lock is released when it returns
    with pytest.raises(ConfigError, match="already holds a run"):
        RunDir.create(tmp_path / "run", _small(1))
    with RunLock(tmp_path / "run"):  # free again
        pass


def test_a_lock_left_by_a_dead_process_does_not_block(tmp_path):
    code = ("import os, sys; from asg.learning.run_dir import RunLock; "
            f"lock = RunLock({str(tmp_path / 'run')!r}).acquire(); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (tmp_path / "run" / ".lock").is_file()
    RunDir.create(tmp_path / "run", _small()).unlock()


def test_another_process_holding_the_lock_blocks(tmp_path):
    code = ("import sys, time; from asg.learning.run_dir import RunLock; "
            f"lock = RunLock({str(tmp_path / 'run')!r}).acquire(); print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(CheckpointError, match=f"pid {holder.pid}"):
            RunDir.create(tmp_path / "run", _small())
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    RunDir.create(tmp_path / "run", _small()).unlock()
