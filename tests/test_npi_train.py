"""The meta-controller on the Fetch library: models, network, self-play, training, inference, errors."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.npi.config import NetConfig, NPIConfig, SearchConfig, from_dict, to_dict
from asg.learning.npi.landmark_guidance import LandmarkGuide
from asg.learning.npi.mcts import SearchContext, execute
from asg.learning.npi.network import AlphaNPINet, make_batch, state_inputs, trace_loss
from asg.learning.npi.pipeline import build_model, evaluate_programs, train_meta_controller
from asg.learning.npi.selfplay import EpisodeJob, SelfPlay, start_state
from asg.learning.npi.trainer import (
    MetaControllerTrainer,
    TraceBuffer,
    TraceSample,
    learning_progress_probabilities,
    trace_sample,
)
from asg.learning.world_models.program_models import HOME_GRIP, AtomWorld, exact_fetch_model
from asg.planning.programs import fetch_library

LEVEL1 = "Move_All_To_Zone_ORANGE"
# Small enough for the default suite: 10 episodes of 40 simulations per iteration, lr 1e-3.
SMALL = NPIConfig(net=NetConfig(lr=1e-3), search=SearchConfig(simulations=40), iterations=4,
                  episodes_per_iteration=10, batch_size=8, programs=(LEVEL1,), stop_at_success=0.9)


@pytest.fixture(scope="module")
def model():
    return exact_fetch_model()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("npi") / "run"
    return out, train_meta_controller(out, config=SMALL, seed=0)


# -- models -----------------------------------------------------------------------------------
def test_exact_model_matches_the_behaviour_model_of_issue_5(model):
    from asg.envs.fetch.behaviour_model import ExactBehaviourModel

    exact, rng = ExactBehaviourModel(), np.random.default_rng(0)
    for _ in range(20):
        state = model.initial_state(rng)
        legal = np.flatnonzero(model.table.preconditions(model.atoms(state))[:20])
        program = int(rng.choice(legal))
        expected, ok = exact.predict(state, model.table.names[program])
        assert ok and np.allclose(model.step(state, program), expected)


def test_synthetic_start_states_are_table_layouts(model):
    from asg.envs.fetch.simulation import Simulation

    assert np.allclose(Simulation().home_grip, HOME_GRIP, atol=1e-6)
    rng = np.random.default_rng(1)
    for _ in range(10):
        atoms = {str(a) for a in model.atoms(model.initial_state(rng))}
        assert {f"(on-table b{i})" for i in range(4)} <= atoms and not any("in-zone" in a for a in atoms)


def test_learned_model_adapter_and_real_env_model(model):
    from asg.envs.fetch.behaviour_model import ExactBehaviourModel
    from asg.learning.world_models.program_models import RealFetchModel, learned_fetch_model

    learned = learned_fetch_model(ExactBehaviourModel())  # any predict(obs, program) fits
    state = model.initial_state(np.random.default_rng(3))
    move = model.table.index("Move_To_Zone_0_ORANGE")
    assert learned.name == "learned" and np.allclose(learned.step(state, move), model.step(state, move))
    real = RealFetchModel()
    after = real.step(real.initial_state(np.random.default_rng(0)), move)
    assert "(in-zone b0 orange)" in {str(a) for a in real.atoms(after)}
    with pytest.raises(KeyError):
        real.step(state, move)  # a state it did not produce has no simulation to restore


def test_learned_model_needs_a_predictor():
    with pytest.raises(ConfigError, match="learned"):
        build_model("learned")
    with pytest.raises(ConfigError):
        build_model("oracle")


# -- network ----------------------------------------------------------------------------------
def test_bptt_forward_equals_the_stepwise_snapshot(model):
    torch.manual_seed(0)
    table = model.table
    net = AlphaNPINet(70, table.n_actions, len(table.tasks))
    ctx = SearchContext(model, net.snapshot(), SearchConfig(simulations=10), np.random.default_rng(0))
    task = table.index(LEVEL1)
    trace = execute(task, start_state(model, task, np.random.default_rng(0)), ctx, explore=True)
    sample = trace_sample(trace, table.task_row(task))
    logits, values = net(torch.as_tensor(sample.states)[None], torch.tensor([sample.task_row]))
    snap, (h, c) = net.snapshot(), net.snapshot().initial_hidden()
    for t, state in enumerate(sample.states):
        step_logits, value, h, c = snap.evaluate(state, sample.task_row, h, c)
        assert np.allclose(step_logits, logits[0, t].detach().numpy(), atol=1e-4)
        assert value == pytest.approx(float(values[0, t].detach()), abs=1e-4)
    loss, parts = trace_loss(net, make_batch([sample, sample], 70, table.n_actions))
    loss.backward()
    assert parts["policy_loss"] > 0 and net.embedding.weight.grad.abs().sum() > 0


def test_the_blocks_view_reads_only_the_block_positions(model):
    """net.state_view "blocks": f_enc reads the 12 block positions, the batch forward and the search's
    snapshot agree, and a change anywhere else in the state (gripper, rotations, velocities) moves
    nothing; the full view does see it."""
    table, task = model.table, model.table.index(LEVEL1)
    state = start_state(model, task, np.random.default_rng(0))
    other = state.copy()
    other[12:] += np.random.default_rng(1).normal(0.0, 0.5, 58)
    outputs = {}
    for view in ("full", "blocks"):
        config = NetConfig(state_view=view)
        torch.manual_seed(0)
        net = AlphaNPINet(70, table.n_actions, len(table.tasks), config, inputs=state_inputs(model, config))
        assert net.encoder[0].in_features == (70 if view == "full" else 12)
        snap = net.snapshot()
        h, c = snap.initial_hidden()
        logits, value, _, _ = snap.evaluate(state, table.task_row(task), h, c)
        moved, _, _, _ = snap.evaluate(other, table.task_row(task), h, c)
        batch, _ = net(torch.as_tensor(np.stack([state, other]), dtype=torch.float32)[:, None],
                       torch.tensor([table.task_row(task)] * 2))
        assert np.allclose(logits, batch[0, 0].detach().numpy(), atol=1e-4)
        assert np.allclose(moved, batch[1, 0].detach().numpy(), atol=1e-4)
        outputs[view] = np.abs(logits - moved).max()
    assert outputs["blocks"] == 0.0 and outputs["full"] > 1e-3


def test_a_blocks_view_run_saves_and_loads_its_view(tmp_path, model):
    from asg.learning.npi.pipeline import load_network

    config = replace(SMALL, net=replace(SMALL.net, state_view="blocks"), iterations=1, stop_at_success=None)
    train_meta_controller(tmp_path / "run", config=config, seed=0)
    net, saved = load_network(tmp_path / "run" / "meta_controller.npz", model)
    assert saved.net.state_view == "blocks" and net.encoder[0].in_features == 12
    assert list(net.inputs) == list(range(12))


def test_a_view_the_model_lacks_is_one_config_error():
    with pytest.raises(ConfigError, match="state_view"):
        NetConfig(state_view="pixels")
    with pytest.raises(ConfigError, match=r"net.state_view: .* no 'blocks' view"):
        state_inputs(AtomWorld(fetch_library()), NetConfig(state_view="blocks"))


def test_buffer_draws_programs_uniformly_and_positive_traces_with_p_buf():
    buffer = TraceBuffer(capacity=4, p_positive=0.5)
    for k in range(6):
        buffer.add(TraceSample(np.zeros((1, 2)), np.ones((1, 3), bool), np.ones((1, 3)), 0, 1.0, k % 3 == 0))
    buffer.add(TraceSample(np.zeros((1, 2)), np.ones((1, 3), bool), np.ones((1, 3)), 1, -1.0, False))
    assert len(buffer) == 5  # 4 of program 0 (the oldest two dropped), 1 of program 1
    draws = buffer.sample(4000, np.random.default_rng(0))
    assert np.mean([d.task_row == 1 for d in draws]) == pytest.approx(0.5, abs=0.03)
    own = [d.success for d in draws if d.task_row == 0]
    assert np.mean(own) == pytest.approx(0.5, abs=0.03)


def test_learning_progress_probabilities():
    p = learning_progress_probabilities(np.array([0.5, 0.5, 0.9]), np.array([0.5, 0.1, 0.8]), 0.2)
    assert p == pytest.approx([0.2 / 3, 0.2 / 3 + 0.8 * 0.8, 0.2 / 3 + 0.8 * 0.2])
    assert learning_progress_probabilities(np.ones(4), None, 0.2) == pytest.approx([0.25] * 4)


def test_learning_progress_curriculum_picks_a_trained_program(model):
    config = replace(SMALL, curriculum="learning-progress", lp_episodes=1,
                     programs=(LEVEL1, "Move_All_To_Zone_BLUE"))
    trainer = MetaControllerTrainer(model, config, seed=0)
    picks = {trainer.choose_program() for _ in range(2)}
    assert picks <= {trainer.table.index(p) for p in config.programs}
    assert trainer.state.lp_previous is not None and len(trainer.state.lp_previous) == 2


def test_landmarks_of_clean_table_favour_zone_moves(model):
    table = model.table
    guide = LandmarkGuide(table)
    atoms = model.atoms(model.initial_state(np.random.default_rng(2)))
    progress = guide.start("Clean_Table", atoms)
    assert {str(a) for a in guide.next_literals(progress)} == {
        "(in-zone b0 orange)", "(in-zone b1 orange)", "(in-zone b2 blue)", "(in-zone b3 blue)"}
    task = table.index("Clean_Table")
    chosen = {table.names[a] for a in np.flatnonzero(guide.achievers(progress, table.legal(task, atoms, 0, 6)))}
    # Every call whose ψ puts a block in its zone; no Stack_*, no Stack_All_Blocks, no wrong zone.
    assert chosen == {"Move_To_Zone_0_ORANGE", "Move_To_Zone_1_ORANGE", "Move_To_Zone_2_BLUE",
                      "Move_To_Zone_3_BLUE", "Move_All_To_Zone_ORANGE", "Move_All_To_Zone_BLUE",
                      "Stack_All_To_Zone_ORANGE", "Stack_All_To_Zone_BLUE"}


# -- self-play and training ---------------------------------------------------------------------
def test_process_pool_gives_the_same_traces(model):
    table = model.table
    snap = AlphaNPINet(70, table.n_actions, len(table.tasks)).snapshot()
    jobs = [EpisodeJob(table.index(LEVEL1), seed, seed % 2 == 0) for seed in range(4)]
    config = SearchConfig(simulations=15)
    local = SelfPlay(model, config).run(jobs, snap)
    with SelfPlay(model, config, workers=2) as pool:
        remote = pool.run(jobs, snap)
    for a, b in zip(local, remote):
        assert [s.action for s in a.steps] == [s.action for s in b.steps]
        assert np.array_equal(a.final_state, b.final_state) and a.value == b.value


def test_same_seed_same_metrics(model):
    config = replace(SMALL, episodes_per_iteration=3, validation_episodes=2, batch_size=2,
                     search=SearchConfig(simulations=10))
    rows = []
    for _ in range(2):
        trainer = MetaControllerTrainer(model, config, seed=5)
        row = trainer.step()
        row.pop("wall_seconds")
        rows.append(row)
    assert rows[0] == rows[1] and np.isfinite(rows[0]["policy_loss"])


def test_short_training_learns_a_level1_program(trained, model):
    """Move_All_To_Zone_ORANGE: >= 0.9 exploit-mode success (5 simulations) within 4 iterations."""
    out, result = trained
    assert result.validation[LEVEL1] >= 0.9 and result.status == "solved" and result.iterations <= 4
    untrained = MetaControllerTrainer(model, SMALL, seed=0)
    assert untrained.success_rates(10)[LEVEL1] <= 0.5  # the same search without training
    saved = json.loads((out / "result.json").read_text())
    assert saved["validation"][LEVEL1] == result.validation[LEVEL1]
    assert (out / "metrics.csv").read_text().startswith("iteration,program,train_success")


def test_resume_restores_the_run(trained):
    out, result = trained
    again = train_meta_controller(out, resume=True)  # solved already: nothing left to do
    assert again.iterations == result.iterations and again.validation == result.validation
    assert again.status == "solved"


def test_inference_only_export_evaluates_alike_and_cannot_resume(trained, tmp_path):
    from asg.learning.npi.pipeline import CHECKPOINT, export_network

    out, _ = trained
    slim = export_network(out / CHECKPOINT, tmp_path / "slim" / CHECKPOINT)
    assert slim.stat().st_size < (out / CHECKPOINT).stat().st_size
    full = evaluate_programs(out, mode="plan", world="model", episodes=3, programs=[LEVEL1])
    small = evaluate_programs(slim, mode="plan", world="model", episodes=3, programs=[LEVEL1])
    assert small.programs == full.programs
    with pytest.raises(CheckpointError, match="inference-only"):
        train_meta_controller(slim.parent, resume=True)


# -- inference and the pipeline ---------------------------------------------------------------
def test_inference_modes_in_the_model(trained):
    out, _ = trained
    rates = {mode: evaluate_programs(out, mode=mode, world="model", episodes=5, programs=[LEVEL1])
             .programs[LEVEL1]["success_rate"] for mode in ("network", "plan", "replan")}
    assert rates["plan"] >= 0.8 and rates["replan"] >= 0.8
    report = evaluate_programs(out, mode="network", world="model", episodes=1)
    assert len(report.programs) == 7 and report.to_json()["mode"] == "network"
    assert set(report.families) == {"Stack_All_To_Zone", "Move_All_To_Zone", "Stack_All_Blocks", "Clean_Table",
                                    "Clean_And_Stack"}
    assert "Move_All_To_Zone" in "\n".join(report.table_lines())


def test_inference_modes_in_the_real_env_with_the_scripted_controller(trained, tmp_path):
    out, _ = trained
    png, js = tmp_path / "trace.png", tmp_path / "eval.json"
    replan = evaluate_programs(out, mode="replan", world="real", episodes=2, programs=[LEVEL1],
                               trace_png=png, json_path=js)
    assert replan.programs[LEVEL1]["success_rate"] >= 0.5
    assert json.loads(js.read_text())["programs"][LEVEL1]["episodes"] == 2
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert replan.example is not None and replan.example.atomic_count() >= 2
    for mode in ("plan", "network"):
        report = evaluate_programs(out, mode=mode, world="real", episodes=1, programs=[LEVEL1])
        assert 0.0 <= report.programs[LEVEL1]["success_rate"] <= 1.0


def test_error_paths(trained, tmp_path):
    out, _ = trained
    with pytest.raises(ConfigError, match="checkpoint"):
        evaluate_programs(None)
    with pytest.raises(ConfigError, match="mode must be one of"):
        evaluate_programs(out, mode="dream")
    with pytest.raises(ConfigError, match="atomic"):
        evaluate_programs(out, programs=["Stack_0_1"], world="model", episodes=1)
    with pytest.raises(ConfigError, match="unknown program"):
        evaluate_programs(out, programs=["Juggle"], world="model", episodes=1)
    bad = tmp_path / "meta_controller.npz"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt"):
        evaluate_programs(bad, world="model", episodes=1)
    with pytest.raises(CheckpointError, match="no meta-controller"):
        evaluate_programs(tmp_path / "missing.pt", world="model", episodes=1)
    with pytest.raises(ConfigError, match="already holds"):
        train_meta_controller(out, config=SMALL)
    with pytest.raises(ConfigError, match="c_puct"):
        SearchConfig(c_puct=-1.0)
    with pytest.raises(ConfigError, match="unknown field"):
        from_dict({"episodes": 3})
    assert from_dict(to_dict(SMALL)) == SMALL


def test_training_and_evaluation_leave_global_torch_state_as_it_was(tmp_path):
    threads, rng = torch.get_num_threads(), torch.random.get_rng_state()
    torch.set_num_threads(2)
    try:
        out = tmp_path / "run"
        train_meta_controller(out, config=replace(SMALL, iterations=1), seed=3)
        evaluate_programs(out, world="model", episodes=1, programs=[LEVEL1])
        assert torch.get_num_threads() == 2
        assert torch.equal(torch.random.get_rng_state(), rng)
    finally:
        torch.set_num_threads(threads)
