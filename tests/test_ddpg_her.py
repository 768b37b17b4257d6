"""DDPG+HER building blocks: relabelling, normaliser, buffers, config, networks, one update, rollouts."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from asg.learning.errors import ConfigError
from asg.learning.goal_policy import config as C
from asg.learning.goal_policy.ddpg import DDPGAgent
from asg.learning.goal_policy.demos import bc_loss
from asg.learning.goal_policy.her import Transitions, relabel_probability, sample_transitions
from asg.learning.goal_policy.normalizer import Normalizer
from asg.learning.goal_policy.replay import EpisodeBuffer, StateBuffer

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def env():
    from asg.envs.fetch.env import FetchBlocksEnv

    return FetchBlocksEnv()


def fetch_like_episodes(rng: np.random.Generator, n: int = 6, horizon: int = 8):
    """Episodes whose blocks drift a little each step, so future goals are sometimes within ε."""
    start = rng.uniform(0.4, 1.2, size=(n, 1, 12))
    drift = np.cumsum(rng.normal(scale=0.02, size=(n, horizon + 1, 12)), axis=1)
    ag = start + drift
    o = np.concatenate([ag, rng.normal(size=(n, horizon + 1, 58))], axis=-1)
    g = rng.uniform(0.4, 1.2, size=(n, 12))
    u = rng.uniform(-1, 1, size=(n, horizon, 4))
    return o, ag, g, u


# -- HER ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["future", "final"])
def test_her_rewards_equal_the_env_compute_reward(env, strategy):
    rng = np.random.default_rng(0)
    o, ag, g, u = fetch_like_episodes(rng)
    batch = sample_transitions(o, ag, g, u, len(o), 4000, np.random.default_rng(1), env.compute_reward, strategy, 4)
    np.testing.assert_array_equal(batch.r, env.compute_reward(batch.ag2, batch.g, None).astype(np.float32))
    assert set(np.unique(batch.r)) == {-1.0, 0.0}  # both outcomes occur: the check compares something
    assert abs(batch.relabelled.mean() - relabel_probability(4)) < 0.03


@pytest.mark.parametrize("strategy", ["future", "final"])
def test_relabelled_goals_are_achieved_goals_of_the_same_episode(strategy):
    rng = np.random.default_rng(2)
    o, ag, g, u = fetch_like_episodes(rng, n=5, horizon=6)
    batch = sample_transitions(o, ag, g, u, 5, 2000, np.random.default_rng(3), lambda a, b, info: np.zeros(len(a)),
                               strategy, 4)
    o32, ag32, g32 = o.astype(np.float32), ag.astype(np.float32), g.astype(np.float32)
    for k in range(len(batch)):
        e, t = np.argwhere((o32[:, :-1] == batch.o[k]).all(axis=-1))[0]
        np.testing.assert_array_equal(batch.o2[k], o32[e, t + 1])
        np.testing.assert_array_equal(batch.ag2[k], ag32[e, t + 1])
        if not batch.relabelled[k]:
            np.testing.assert_array_equal(batch.g[k], g32[e])
            continue
        later = [s for s in range(t + 1, 7) if (ag32[e, s] == batch.g[k]).all()]
        assert later, "a relabelled goal must be achieved later in the same episode"
        if strategy == "final":
            assert later == [6]


def test_no_relabelling_with_k_zero_and_bad_arguments():
    rng = np.random.default_rng(4)
    o, ag, g, u = fetch_like_episodes(rng)
    batch = sample_transitions(o, ag, g, u, len(o), 500, rng, lambda a, b, info: np.zeros(len(a)), "future", 0)
    assert not batch.relabelled.any()
    with pytest.raises(ValueError, match="strategy"):
        sample_transitions(o, ag, g, u, len(o), 5, rng, lambda a, b, info: np.zeros(len(a)), "episode", 4)
    with pytest.raises(ValueError, match="n_episodes"):
        sample_transitions(o, ag, g, u, 0, 5, rng, lambda a, b, info: np.zeros(len(a)), "future", 4)


# -- normaliser --------------------------------------------------------------------------------
def test_normaliser_statistics_clip_and_merge():
    rng = np.random.default_rng(5)
    x = rng.normal(loc=[3.0, -2.0, 0.0], scale=[2.0, 0.5, 0.0], size=(1000, 3))
    norm = Normalizer(3, eps=0.01, clip=5.0)
    norm.update(x[:400])
    norm.update(x[400:])
    np.testing.assert_allclose(norm.mean, x.mean(axis=0), atol=1e-9)
    np.testing.assert_allclose(norm.std[:2], x.std(axis=0)[:2], rtol=1e-6)
    assert norm.std[2] == pytest.approx(0.01)  # the floor for a constant input
    z = norm.normalize(np.array([[3.0 + 100.0, norm.mean[1], 0.0]]))
    assert z[0, 0] == pytest.approx(5.0) and abs(z[0, 1]) < 1e-3 and z.dtype == np.float32
    a, b = Normalizer(3), Normalizer(3)  # two workers' statistics merge into the whole data's
    a.update(x[:700])
    b.update(x[700:])
    a.merge(b)
    np.testing.assert_allclose(a.mean, norm.mean)
    np.testing.assert_allclose(a.std, norm.std)
    back = Normalizer.from_state_dict(norm.state_dict())
    np.testing.assert_array_equal(back.normalize(x[:5]), norm.normalize(x[:5]))
    with pytest.raises(ValueError):
        a.merge(Normalizer(2))


# -- buffers -----------------------------------------------------------------------------------
def test_episode_buffer_ring_and_state_dict():
    buf = EpisodeBuffer(capacity=3, horizon=2, obs_dim=1, goal_dim=1, act_dim=1)
    for k in range(5):
        o = np.full((1, 3, 1), float(k))
        buf.store(o, o, np.full((1, 1), float(k)), np.zeros((1, 2, 1)))
    assert len(buf) == 3 and buf.stored == 5 and buf.transitions == 6
    assert sorted(buf.g[:, 0]) == [2.0, 3.0, 4.0]  # the two oldest were overwritten
    back = EpisodeBuffer.from_state_dict(buf.state_dict())
    np.testing.assert_array_equal(back.o, buf.o)
    assert (back.next, back.size, back.stored) == (buf.next, buf.size, buf.stored)
    with pytest.raises(ValueError, match="do not fit"):
        buf.store(np.zeros((1, 4, 1)), np.zeros((1, 4, 1)), np.zeros((1, 1)), np.zeros((1, 2, 1)))
    with pytest.raises(ValueError, match="empty"):
        EpisodeBuffer(2, 2, 1, 1, 1).sample(4, np.random.default_rng(0), lambda a, b, info: a[:, 0])


def test_state_buffer_samples_only_accepted_states():
    buf = StateBuffer(capacity=4)
    for k in range(6):
        buf.add(f"s{k}", np.array([float(k)]))
    assert len(buf) == 4 and {s for s in buf.states} == {"s4", "s5", "s2", "s3"}
    rng = np.random.default_rng(0)
    picks = {buf.sample(rng, lambda obs: obs[0] % 2 == 1)[0] for _ in range(50)}
    assert picks == {"s3", "s5"}
    assert buf.sample(rng, lambda obs: False) is None and StateBuffer(2).sample(rng) is None


# -- config ------------------------------------------------------------------------------------
def test_presets_and_checks():
    paper, fast = C.preset("paper"), C.preset("fast")
    assert paper.agent.hidden == (256, 256) and paper.agent.gamma == 0.99 and paper.agent.batch_size == 256
    assert paper.replay.replay_k == 4 and paper.replay.buffer_size == 1_000_000 and paper.replay.strategy == "final"
    assert (paper.schedule.epochs_phase1, paper.schedule.epochs_phase2, paper.schedule.cycles,
            paper.schedule.batches) == (100, 150, 40, 40) and not paper.demos.enabled
    assert fast.demos.enabled and fast.demos.q_filter and fast.demos.reset_prob > 0
    assert C.from_dict(C.to_dict(fast)) == fast
    for bad in (lambda: C.AgentConfig(gamma=1.0), lambda: C.ReplayConfig(strategy="episode"),
                lambda: C.DemoConfig(reset_prob=1.5), lambda: C.ScheduleConfig(epochs_phase1=0, epochs_phase2=0),
                lambda: C.preset("slow"), lambda: C.from_dict({"agents": {}}),
                lambda: C.from_dict({"agent": {"hidden": [64], "gama": 0.9}})):
        with pytest.raises(ConfigError):
            bad()


# -- networks and the update ---------------------------------------------------------------------
def random_batch(rng: np.random.Generator, n: int, od: int = 70, gd: int = 12, ad: int = 4) -> Transitions:
    f = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return Transitions(f(n, od), f(n, od), f(n, gd), f(n, gd), f(n, gd), np.tanh(f(n, ad)),
                       -(rng.random(n) < 0.7).astype(np.float32), np.zeros(n, bool))


def test_numpy_snapshot_acts_like_the_torch_actor():
    rng = np.random.default_rng(6)
    agent = DDPGAgent(70, 12, 4, C.AgentConfig(), seed=3)
    batch = random_batch(rng, 32)
    agent.update_normalizers(batch)
    o, g = agent._inputs(batch.o, batch.g)
    with torch.no_grad():
        want = agent.actor(o, g).numpy()
    got = agent.snapshot().act(batch.o, batch.g)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert np.abs(got).max() <= 1.0


def test_one_update_changes_the_networks_and_lowers_the_critic_loss():
    rng = np.random.default_rng(7)
    agent = DDPGAgent(70, 12, 4, C.AgentConfig(hidden=(64, 64), polyak=0.5), seed=0)
    batch = random_batch(rng, 128)
    agent.update_normalizers(batch)
    before = [p.detach().clone() for p in (*agent.actor.parameters(), *agent.critic.parameters())]
    target_before = [p.detach().clone() for p in agent.critic_target.parameters()]
    loss0 = agent.critic_loss(batch)
    stats = agent.update(batch)
    after = [p.detach() for p in (*agent.actor.parameters(), *agent.critic.parameters())]
    assert all(not torch.equal(a, b) for a, b in zip(before, after))
    assert all(torch.equal(a, b) for a, b in zip(target_before, agent.critic_target.parameters()))
    agent.update_targets()
    assert not any(torch.equal(a, b) for a, b in zip(target_before, agent.critic_target.parameters()))
    assert set(stats) >= {"critic_loss", "actor_loss", "q_mean"}
    for _ in range(30):
        agent.update(batch)
    assert agent.critic_loss(batch) < 0.5 * loss0


def test_update_with_demo_rows_applies_the_q_filtered_bc_loss():
    rng = np.random.default_rng(8)
    agent = DDPGAgent(70, 12, 4, C.AgentConfig(hidden=(32, 32)), seed=1)
    batch, demo = random_batch(rng, 64), random_batch(rng, 16)
    agent.update_normalizers(batch)
    stats = agent.update(batch, demo, bc_weight=1.0, q_filter=True)
    assert stats["bc_loss"] > 0 and 0.0 <= stats["q_filter_kept"] <= 1.0
    assert agent.update(batch, demo, bc_weight=1.0, q_filter=False)["q_filter_kept"] == 1.0


def test_bc_loss_counts_only_rows_the_critic_prefers():
    pi = torch.zeros(4, 2)
    demo = torch.ones(4, 2)
    loss, kept = bc_loss(pi, demo, q_pi=torch.tensor([0.0, 0.0, 1.0, 1.0]), q_demo=torch.tensor([1.0, 1.0, 0.0, 0.0]))
    assert kept == 0.5 and float(loss) == pytest.approx(2.0 * 2 / 4)
    loss, kept = bc_loss(pi, demo)
    assert kept == 1.0 and float(loss) == pytest.approx(2.0)


# -- rollouts on the Fetch world ---------------------------------------------------------------
def test_fetch_batch_rotates_into_the_focus_frame_and_matches_env_steps():
    from asg.envs.fetch import FetchTask
    from asg.envs.fetch.env import FetchBlocksEnv
    from asg.envs.fetch.goal_setter import acting_block
    from asg.envs.fetch.permutation import rotate_goal, rotate_observation
    from asg.learning.goal_policy.rollout import EpisodeSpec, RolloutWorker

    task = replace(FetchTask(), horizon=5)
    agent = DDPGAgent(70, 12, 4, C.AgentConfig(hidden=(16, 16)), seed=0)
    specs = [EpisodeSpec(11, program="Stack_2_0"), EpisodeSpec(12, program="Move_To_Zone_3_BLUE"),
             EpisodeSpec(13, focus=1)]
    worker = RolloutWorker(task, n_envs=2, threads=2)
    episodes = worker.run(specs, agent.snapshot(), C.ExploreConfig())
    worker.close()
    assert episodes.o.shape == (3, 6, 70) and episodes.u.shape == (3, 5, 4) and episodes.g.shape == (3, 12)
    assert episodes.programs == ("Stack_2_0", "Move_To_Zone_3_BLUE", None)
    ref = FetchBlocksEnv(max_steps=None)  # the same episode through the plain env API
    obs, _ = ref.reset(seed=11, options={"program": "Stack_2_0"})
    focus = acting_block("Stack_2_0")
    np.testing.assert_allclose(episodes.o[0, 0], rotate_observation(obs["observation"], focus), atol=1e-6)
    np.testing.assert_allclose(episodes.g[0], rotate_goal(ref.goal, focus), atol=1e-6)
    for t in range(5):
        obs, *_ = ref.step(episodes.u[0, t].astype(np.float64))
        np.testing.assert_allclose(episodes.o[0, t + 1], rotate_observation(obs["observation"], focus), atol=1e-5)
    np.testing.assert_allclose(episodes.final_obs[0], obs["observation"], atol=1e-12)
    np.testing.assert_array_equal(episodes.ag, episodes.o[:, :, :12])
    uniform = episodes.g[2].reshape(4, 3)
    np.testing.assert_allclose(uniform[1:], episodes.o[2, 0, :12].reshape(4, 3)[1:], atol=1e-6)  # others stay


def test_release_reward_wants_the_gripper_clear_of_a_block_set_at_rest():
    """schedule.release_height: a goal that sets the moved block at rest is reached only once the
    gripper has let go; goals mid-carry and the paper's reward (None) are unchanged."""
    from asg.envs.fetch import FetchBlocksEnv, ScriptedController, acting_block, run_atomic
    from asg.envs.fetch.batch import FetchTask, gripper_clear, resting_goal
    from asg.envs.fetch.layout import GRIP_POS
    from asg.learning.npi.inference import Focused

    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    env.reset(seed=0)
    run = run_atomic(env, "Move_To_Zone_0_ORANGE", Focused(ScriptedController(), acting_block("Move_To_Zone_0_ORANGE")))
    released = env.observation()["observation"]
    env.close()
    assert run.success
    holding = released.copy()
    holding[GRIP_POS] = released[0:3]  # the same end, the grip site still at the block's centre
    assert gripper_clear(released, 0.05) and not gripper_clear(holding, 0.05)
    goal = released[:12].copy()
    assert resting_goal(goal)
    carried = goal.copy()
    carried[2] += 0.08  # a relabelled goal taken mid-carry: the block in the air
    assert not resting_goal(carried)
    task, paper = FetchTask(release_height=0.05), FetchTask()
    ag = np.stack([goal, goal, carried])
    g = np.stack([goal, goal, carried])
    o2 = np.stack([released, holding, holding])
    assert task.compute_reward(ag, g, {"o2": o2}).tolist() == [0.0, -1.0, 0.0]
    assert paper.compute_reward(ag, g, {"o2": o2}).tolist() == [0.0, 0.0, 0.0]
    assert task.compute_reward(ag, g, None).tolist() == [0.0, 0.0, 0.0]  # no observation: positions only
    with pytest.raises(ConfigError, match="release_height"):
        C.ScheduleConfig(release_height=0.0)
    assert all(C.preset(name).schedule.release_height is None for name in ("paper", "fast", "learned"))


def test_her_passes_the_next_observation_to_the_reward():
    seen = {}

    def reward(ag, g, info):
        seen["o2"] = info["o2"]
        return np.zeros(len(ag))

    rng = np.random.default_rng(0)
    o, ag = rng.normal(size=(2, 4, 3)).astype(np.float32), rng.normal(size=(2, 4, 2))
    g, u = rng.normal(size=(2, 2)), rng.normal(size=(2, 3, 1))
    batch = sample_transitions(o, ag, g, u, 2, 16, rng, reward)
    np.testing.assert_array_equal(seen["o2"], batch.o2)
