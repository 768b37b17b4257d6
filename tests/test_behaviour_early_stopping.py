"""Early stopping of the behaviour model on its held-out split (``BehaviourConfig.early_stopping``;
Prechelt 1998): it stops ``patience`` epochs after the best held-out loss and keeps that epoch's weights."""
from __future__ import annotations

import numpy as np
import torch

from asg.learning.world_models.behaviour_model import (
    BEHAVIOUR_PRESETS,
    BehaviourConfig,
    BehaviourDataset,
    Interrupted,
    best_epoch,
    fit_behaviour_model,
)

torch.set_num_threads(1)


def noisy(rng: np.random.Generator, n: int, noise: float) -> BehaviourDataset:
    """Program k moves block 0 to spot k; the end states carry ``noise`` (unlearnable: a net that fits
    it on a small training set overfits, and its held-out loss turns up)."""
    s0 = rng.normal(size=(n, 70)) * 0.1 + 1.0
    program = rng.integers(4, size=n)
    sT = s0.copy()
    sT[:, :3] = np.linspace(-1.0, 1.0, 12).reshape(4, 3)[program] + noise * rng.normal(size=(n, 3))
    return BehaviourDataset(s0, program, sT, np.zeros(n, dtype=bool))


def data():
    rng = np.random.default_rng(0)
    return noisy(rng, 80, 0.5), noisy(rng, 200, 0.0)


CFG = BehaviourConfig(hidden=(128, 128), epochs=150, batch_size=16, lr=3e-3, anchor="start", early_stopping=4)


def held_out_loss(fit, test: BehaviourDataset) -> float:
    net, s_norm, d_norm, _ = fit
    with torch.no_grad():
        pred = net(torch.from_numpy(s_norm.normalize(test.s0)), torch.as_tensor(test.program))
    return float(torch.mean((pred - torch.from_numpy(d_norm.normalize(test.sT - test.s0))) ** 2))


def test_the_presets():
    assert BEHAVIOUR_PRESETS["paper"].early_stopping is None and BEHAVIOUR_PRESETS["fast"].early_stopping is None
    assert BEHAVIOUR_PRESETS["learned"].early_stopping == 20


def test_it_stops_patience_epochs_after_the_best_and_keeps_the_best_weights():
    train, test = data()
    fit = fit_behaviour_model(train, test, 4, CFG, seed=0)
    rows = fit[3]
    best = best_epoch(rows)
    assert 1 < best < len(rows) < CFG.epochs  # it overfitted, and stopped
    assert len(rows) == best + CFG.early_stopping
    assert all(r["test_loss"] >= rows[best - 1]["test_loss"] for r in rows[best:])
    assert abs(held_out_loss(fit, test) - rows[best - 1]["test_loss"]) < 1e-5  # the best epoch's net
    assert held_out_loss(fit, test) < rows[-1]["test_loss"]
    # off, the same seed trains the same epochs and keeps the last weights
    off = fit_behaviour_model(train, test, 4, BehaviourConfig(**{**CFG.__dict__, "early_stopping": None,
                                                                    "epochs": len(rows)}), seed=0)
    assert off[3] == rows
    assert abs(held_out_loss(off, test) - rows[-1]["test_loss"]) < 1e-5


def test_an_interrupted_fit_resumes_to_the_same_model(tmp_path):
    """Stopped after epoch 6 (the best was epoch 3): its weights travel in the saved state."""
    from asg.learning import checkpoint

    train, test = data()
    whole = fit_behaviour_model(train, test, 4, CFG, seed=0)
    calls = [0]

    def stop_at_epoch_6() -> bool:
        calls[0] += 1
        return calls[0] > 6

    try:
        fit_behaviour_model(train, test, 4, CFG, seed=0, should_stop=stop_at_epoch_6)
        raise AssertionError("not interrupted")
    except Interrupted as stopped:
        checkpoint.save(tmp_path / "fit.npz", "behaviour-fit", stopped.state, {})
    state = checkpoint.load(tmp_path / "fit.npz", "behaviour-fit").tree
    assert best_epoch(state["rows"]) == 3 and state["best"] is not None
    resumed = fit_behaviour_model(train, test, 4, CFG, seed=0, resume=state)
    assert resumed[3] == whole[3]
    assert held_out_loss(resumed, test) == held_out_loss(whole, test)
