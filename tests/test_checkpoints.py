"""The one checkpoint format: every payload type round-trips; every file kind refuses corruption."""
from __future__ import annotations

import json
import pickle
from collections import deque
from pathlib import Path

import numpy as np
import pytest
import torch

from asg.learning import checkpoint as ckpt
from asg.learning.errors import CheckpointError


def test_every_payload_type_round_trips_exactly(tmp_path):
    rng = np.random.default_rng(7)
    rng.random(3)
    tree = {"int": 2**70, "float": 0.1, "nan": float("nan"), "inf": float("-inf"), "str": "x", "none": None,
            "bool": True, "list": [1, [2, 3]], "tuple": (1, (2, b"\x00\xff")), "bytes": b"abc",
            "keys": {(1, 2): "t", 3: "i", "$tag": "s"}, "deque": deque([1, 2], maxlen=5), "set": {1, 2},
            "frozenset": frozenset({"a"}), "array": np.arange(6, dtype=np.int16).reshape(2, 3),
            "empty": np.zeros((0, 4), np.float32), "f32": np.float32(1.5), "i64": np.int64(-3),
            "np_bool": np.bool_(False), "tensor": torch.arange(4, dtype=torch.float64), "rng": rng,
            "mt": np.random.Generator(np.random.MT19937(3))}
    ckpt.save(tmp_path / "c.npz", "test", tree, {"seed": 1})
    got = ckpt.load(tmp_path / "c.npz", "test")
    t = got.tree
    assert got.meta == {"seed": 1} and got.kind == "test"
    for key in ("int", "float", "str", "none", "bool", "list", "tuple", "bytes", "keys", "set", "frozenset"):
        assert t[key] == tree[key] and type(t[key]) is type(tree[key]), key
    assert np.isnan(t["nan"]) and t["inf"] == float("-inf")
    assert t["deque"] == tree["deque"] and t["deque"].maxlen == 5
    for key in ("array", "empty"):
        assert t[key].dtype == tree[key].dtype and np.array_equal(t[key], tree[key])
    for key in ("f32", "i64", "np_bool"):
        assert type(t[key]) is type(tree[key]) and t[key] == tree[key]
    assert isinstance(t["tensor"], torch.Tensor) and torch.equal(t["tensor"], tree["tensor"])
    assert t["rng"].random() == rng.random() and t["mt"].random() == tree["mt"].random()
    assert np.load(tmp_path / "c.npz", allow_pickle=False)["a0"].shape == (2, 3)  # a plain npz too


def test_unsupported_objects_are_refused_at_save(tmp_path):
    with pytest.raises(TypeError):
        ckpt.save(tmp_path / "c.npz", "test", {"obj": object()})
    assert not (tmp_path / "c.npz").exists()


def _corruptions(path: Path, other_kind: Path):
    data = path.read_bytes()
    for pos in (0, len(data) // 3, len(data) // 2, len(data) - 70, len(data) - 1):
        flipped = bytearray(data)
        flipped[pos] ^= 0x01
        yield f"flip@{pos}", bytes(flipped)
    yield "truncated", data[: len(data) // 2]
    yield "empty", b""
    yield "pickle", pickle.dumps({"learner": 1, "state": 2})
    yield "json", json.dumps({"domain": "minecraft"}).encode()
    yield "other kind", other_kind.read_bytes()


def _file_kinds(tmp_path):
    """(path, loader) for every kind of file asg saves."""
    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.ddpg import DDPGAgent
    from asg.learning.goal_policy.evaluate import load_policy, save_policy
    from asg.learning.goal_policy.normalizer import Normalizer
    from asg.learning.world_models.behaviour_model import BehaviourDataset, BehaviourNet, LearnedBehaviourModel

    policy = DDPGAgent(70, 12, 4, AgentConfig(hidden=(8,)), seed=0).snapshot()
    save_policy(policy, tmp_path / "policy.npz")
    model = LearnedBehaviourModel(BehaviourNet(70, 20, (8,)), Normalizer(70), Normalizer(70))
    model.save(tmp_path / "behaviour_model.npz")
    n = 5
    BehaviourDataset(np.zeros((n, 70)), np.zeros(n, int), np.ones((n, 70)), np.zeros(n, bool)).save(tmp_path / "d.npz")
    return [(tmp_path / "policy.npz", load_policy), (tmp_path / "behaviour_model.npz", LearnedBehaviourModel.load),
            (tmp_path / "d.npz", BehaviourDataset.load),
            (tmp_path / "policy.npz", lambda p: ckpt.load(p, "goal-policy"))]


def test_each_file_kind_refuses_corruption_and_stays_untouched(tmp_path):
    kinds = _file_kinds(tmp_path)
    for path, loader in kinds:
        loader(path)  # the intact file loads
        other = kinds[1][0] if path != kinds[1][0] else kinds[0][0]
        for label, content in _corruptions(path, other):
            bad = tmp_path / "bad" / path.name
            bad.parent.mkdir(exist_ok=True)
            bad.write_bytes(content)
            with pytest.raises(CheckpointError) as err:
                loader(bad)
            assert str(bad) in str(err.value), (path.name, label)
            assert bad.read_bytes() == content, (path.name, label)


def test_missing_file_names_it(tmp_path):
    with pytest.raises(CheckpointError, match="missing"):
        ckpt.load(tmp_path / "nothing.npz")


def test_writes_are_atomic(tmp_path, monkeypatch):
    ckpt.save(tmp_path / "c.npz", "test", {"v": 1})
    before = (tmp_path / "c.npz").read_bytes()

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")
    monkeypatch.setattr(np.lib.format, "write_array", boom)
    with pytest.raises(RuntimeError):
        ckpt.save(tmp_path / "c.npz", "test", {"v": np.zeros(3)})
    assert (tmp_path / "c.npz").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]  # no temp file left


def test_goal_policy_and_meta_controller_checkpoints_refuse_corruption(tmp_path):
    from test_ddpg_train import PointReachTask, reach_config

    from asg.learning.goal_policy.trainer import train_goal_policy

    run = tmp_path / "gp"
    train_goal_policy(reach_config(epochs=1), run, task=PointReachTask(), seed=0)
    good = (run / "checkpoint.npz").read_bytes()
    for label, content in _corruptions(run / "checkpoint.npz", run / "policy.npz"):
        (run / "checkpoint.npz").write_bytes(content)
        with pytest.raises(CheckpointError, match="checkpoint.npz"):
            train_goal_policy(None, "x", resume=run, task=PointReachTask())
        assert (run / "checkpoint.npz").read_bytes() == content, label
    (run / "checkpoint.npz").write_bytes(good)
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "seed": 5}))
    with pytest.raises(CheckpointError, match="seed is 5.*seed 0"):
        train_goal_policy(None, "x", resume=run, task=PointReachTask())
    (run / "config.json").write_text(json.dumps({**config, "stage": "meta-controller"}))
    with pytest.raises(CheckpointError, match="stage"):
        train_goal_policy(None, "x", resume=run, task=PointReachTask())
