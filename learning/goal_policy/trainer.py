"""Training the goal-conditioned policy: AlphaNPI-X Algorithms 1 and 2, resumable.

Each epoch runs ``cycles`` cycles of (collect ``episodes_per_cycle`` episodes per emulated actor
(``schedule.actors``; at least that many per worker) with the exploring policy; store them;
``batches`` DDPG updates on HER batches of ``agent.batch_size`` × actors, plus demo rows and
DAgger labels × actors; one target update), then greedy test episodes on program goals from the
all-on-table distribution, one metrics row, the curves and a checkpoint.

- Phase 1 (Algorithm 1), the first ``epochs_phase1`` epochs: every episode starts from a fresh
  reset; goals are uniform (the focus block anywhere), program goals Θ(s0, i), or a mix.
- Phase 2 (Algorithm 2): a uniformly drawn atomic program; with probability ``p_reset`` a fresh
  reset, otherwise a stored final state of an earlier episode on which the program's φ holds.
- With demonstrations (``fast`` preset): a demo batch in every update (BC + Q-filter) and, with
  probability ``demos.reset_prob``, a start at a state along a demonstration.

Run directory::

    config.json       resolved config, seed, workers
    metrics.csv       one row per epoch
    curves.png        success and losses against environment steps
    policy.npz        the greedy policy after the last epoch (``evaluate.load_policy``)
    checkpoint.npz    everything needed to resume exactly, in asg's one checkpoint format
                      (``asg.learning.checkpoint``: no pickle)
    checkpoint.json   its description (version, epoch, env steps, SHA-256)
    result.json       the final summary (also returned)
    .lock             the writer's lock (``run_dir.RunLock``)

A resume checks that ``config.json`` names the stage, seed and task the checkpoint holds. Ctrl-C
or SIGTERM stop the run at the next cycle boundary: it checkpoints there (mid-epoch, with the
finished cycles) and raises ``KeyboardInterrupt``; resuming repeats the uninterrupted run exactly.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from asg.envs.fetch import TRAINING, FetchTask, SimState
from asg.learning import checkpoint as ckpt
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.goal_policy import carry
from asg.learning.goal_policy import config as cfgmod
from asg.learning.goal_policy.config import GoalPolicyConfig
from asg.learning.goal_policy.dagger import ExpertLabels, label_episodes
from asg.learning.goal_policy.ddpg import DDPGAgent
from asg.learning.goal_policy.demos import DemoSet, demo_start, generate_demos
from asg.learning.goal_policy.distributed import make_collector
from asg.learning.goal_policy.evaluate import POLICY_FILE, family, save_policy
from asg.learning.goal_policy.her import sample_transitions
from asg.learning.goal_policy.replay import EpisodeBuffer, StateBuffer
from asg.learning.goal_policy.rollout import Episodes, EpisodeSpec, GoalTask, RolloutWorker
from asg.learning.goal_policy.runlog import plot_curves
from asg.learning.run_dir import RunDir, StageProgress, StopOnSignal
from asg.learning.torch_state import torch_threads

CHECKPOINT_VERSION = ckpt.VERSION
SNAPSHOTS = "snapshots"  # the folder of a run's kept policy snapshots (schedule.snapshot_every)
STAGE, DOMAIN = "goal-policy", "fetch-programs"
CHECKPOINT_KIND = "goal-policy-trainer"
IDENTITY = ("domain", "stage", "seed", "task")  # what config.json and the checkpoint must share
CURVES, CHECKPOINT = "curves.png", "checkpoint.npz"  # config.json, metrics.csv, result.json: run_dir.RunDir
EVAL_ENVS = 10


@dataclass
class Progress:
    """Counters a checkpoint carries besides the learner and buffers."""

    epoch: int = 0  # epochs finished
    cycles: int = 0
    episodes: int = 0
    env_steps: int = 0
    wall_s: float = 0.0  # training wall time over all sessions
    pretrain_loss: float | None = None  # last loss of the BC pre-training on the demos
    rows: list[dict[str, Any]] = field(default_factory=list)
    epoch_cycles: list[dict[str, float]] = field(default_factory=list)  # finished cycles of the current epoch
    refilled: int = 0  # episodes collected to refill the replay buffer after carried resumes (``carry.py``)


def training_starts(chained: float, handoff: float = 0.0, place: float = 0.0, place_family: str | None = None,
                    jitter: float = TRAINING.chain_jitter,
                    tower_weights: tuple[float, float, float] | None = None, other_zone: float = 0.0) -> Any:
    """D.1's training distribution, with a share ``chained`` of chained starts, ``place`` of them
    (of the programs of ``place_family``, None: all) with the program's block held above its
    target, ``handoff`` of the rest with the last placed block still held; each placement of a
    chained start up to ``jitter`` off in x and y, a Stack's onto towers of 1, 2, 3 blocks in the
    proportions ``tower_weights`` (None: equally often), a share ``other_zone`` of them with the blocks
    their setting leaves unused first put in the other zone."""
    if chained == 0.0:
        return "training"
    return replace(TRAINING, p_chained=chained, chain_handoff=handoff, chain_place=place, place_family=place_family,
                   chain_jitter=jitter, tower_weights=None if tower_weights is None else tuple(tower_weights),
                   chain_other_zone=other_zone)


class GoalPolicyTrainer:
    """Algorithms 1-2 over any :class:`GoalTask` (the Fetch world by default)."""

    def __init__(self, config: GoalPolicyConfig, task: GoalTask | None = None, seed: int = 0,
                 workers: int = 1, ray_address: str | None = None) -> None:
        sch = config.schedule
        self.config, self.seed = config, seed
        self.task = task if task is not None else FetchTask(training_starts(sch.chained_starts, sch.chained_handoff,
                                                                             sch.chained_place,
                                                                             sch.chained_place_family,
                                                                             sch.chained_jitter,
                                                                             sch.chained_tower_weights,
                                                                             sch.chained_other_zone),
                                                             sch.horizon,
                                                             z_tolerance=sch.goal_z_tolerance,
                                                             xy_tolerance=sch.goal_xy_tolerance,
                                                             release_height=sch.release_height)
        if self.task.horizon != sch.horizon:
            raise ConfigError(f"schedule.horizon {sch.horizon} differs from the task's horizon {self.task.horizon}")
        if (config.demos.enabled or config.demos.dagger) and not isinstance(self.task, FetchTask):
            raise ConfigError("demonstrations and DAgger labels come from the Fetch scripted controller; "
                              "use demos.episodes = 0 and demos.dagger = false")
        if not self.task.programs and sch.phase1_goals != "uniform":
            raise ConfigError("this task has no programs: schedule.phase1_goals must be 'uniform'")
        self.programs = self._programs(sch.programs)
        seeds = np.random.SeedSequence(seed).generate_state(4)
        self.agent = DDPGAgent(self.task.obs_dim, self.task.goal_dim, self.task.act_dim, config.agent,
                               seed=int(seeds[0]))
        self.rng = np.random.default_rng(int(seeds[1]))
        self.demo_seed, self.eval_seed = int(seeds[2]), int(seeds[3])
        self.buffer = EpisodeBuffer.for_transitions(config.replay.buffer_size, sch.horizon, self.task.obs_dim,
                                                    self.task.goal_dim, self.task.act_dim)
        self.states = StateBuffer(config.replay.state_buffer_size)
        self.demos: DemoSet | None = None
        self.demo_buffer: EpisodeBuffer | None = None
        d = config.demos
        self.labels = (ExpertLabels(d.dagger_size, self.task.obs_dim, self.task.goal_dim, self.task.act_dim)
                       if d.dagger else None)
        self.progress = Progress()
        self.workers = max(1, workers)
        # each worker steps episodes_per_cycle envs together and plays its share of the cycle's episodes
        # through them one batch after another: 56 Fetch envs at once (28 actors) would take ~0.5 GB per
        # worker and measured slower than 28 batches of 2 (MuJoCo stepping dominates, not the MLP)
        self.collector = make_collector(self.task, sch.episodes_per_cycle, sch.threads, self.workers, ray_address)
        # greedy tests start from the all-on-table distribution (D.1's evaluation states)
        self.eval_task = (FetchTask("table", sch.horizon, z_tolerance=self.task.z_tolerance,
                                    xy_tolerance=self.task.xy_tolerance)
                          if isinstance(self.task, FetchTask) else self.task)
        self.evaluator = RolloutWorker(self.eval_task, max(1, min(EVAL_ENVS, sch.eval_episodes)), sch.threads)

    def _programs(self, chosen: tuple[str, ...]) -> tuple[str, ...]:
        """The programs to train on: ``chosen`` (checked against the task's) or all of them."""
        unknown = sorted(set(chosen) - set(self.task.programs))
        if unknown:
            raise ConfigError(f"schedule.programs: unknown program(s) {unknown}; e.g. {self.task.programs[:2]}")
        return chosen or self.task.programs

    # -- episodes ------------------------------------------------------------------------------
    def prepare_demos(self) -> None:
        """Generate the demonstrations and fill the demo buffer (once per run)."""
        d = self.config.demos
        if not d.enabled or self.demos is not None:
            return
        self.demos = generate_demos(d.episodes, self.demo_seed, self.config.schedule.horizon,
                                    programs=self.programs)
        self.demo_buffer = EpisodeBuffer(len(self.demos), self.config.schedule.horizon, self.task.obs_dim,
                                         self.task.goal_dim, self.task.act_dim)
        self.demo_buffer.store(self.demos.o, self.demos.ag, self.demos.g, self.demos.u)
        if d.pretrain_steps:
            self.pretrain_bc(d.pretrain_steps)

    def pretrain_bc(self, steps: int) -> float:
        """Normalise on the demos, then ``steps`` behaviour-cloning steps of the actor; the last loss.

        Batches stay ``agent.batch_size`` whatever ``schedule.actors``: the learner pre-trains once,
        before any actor plays (ours; the paper has no demonstrations)."""
        rep, d, task = self.config.replay, self.config.demos, self.task
        horizon = self.config.schedule.horizon
        self.agent.update_normalizers(self.demo_buffer.sample(len(self.demo_buffer) * horizon, self.rng,
                                                              task.compute_reward, rep.strategy, rep.replay_k))
        loss = float("nan")
        for _ in range(steps):
            batch = self.demo_buffer.sample(self.config.agent.batch_size, self.rng, task.compute_reward,
                                            rep.strategy, rep.replay_k if d.her else 0)
            loss = self.agent.bc_step(batch)
        self.progress.pretrain_loss = loss
        return loss

    def start_progress(self, epoch: int) -> float:
        """D.1's annealing progress in [0, 1] at ``epoch``."""
        sch = self.config.schedule
        span = sch.anneal_epochs or sch.total_epochs
        return min(1.0, epoch / span)

    def demo_reset_prob(self, epoch: int) -> float:
        d, sch = self.config.demos, self.config.schedule
        if not d.enabled or d.reset_prob == 0.0:
            return 0.0
        if not d.reset_anneal:
            return d.reset_prob
        return d.reset_prob * max(0.0, 1.0 - epoch / sch.epochs_phase1) if sch.epochs_phase1 else 0.0

    def episode_specs(self, n: int, epoch: int) -> list[EpisodeSpec]:
        """Starts of the next ``n`` training episodes (phase 1 or 2 by ``epoch``)."""
        sch, rng, programs = self.config.schedule, self.rng, self.programs
        phase2 = epoch >= sch.epochs_phase1
        progress, p_demo = self.start_progress(epoch), self.demo_reset_prob(epoch)
        specs = []
        for _ in range(n):
            seed = int(rng.integers(2**31))
            if p_demo and rng.random() < p_demo:
                specs.append(demo_start(self.demos, rng, seed))
                continue
            goal_mode = "programs" if phase2 else sch.phase1_goals
            use_program = bool(programs) and (goal_mode == "programs" or (
                goal_mode == "mixed" and rng.random() < sch.p_program_goal))
            program = programs[int(rng.integers(len(programs)))] if use_program else None
            state = None
            if phase2 and rng.random() >= sch.p_reset:
                accept = None if program is None else (lambda obs, p=program: self.task.applicable(obs, p))
                found = self.states.sample(rng, accept)
                state = None if found is None else found[0]
            specs.append(EpisodeSpec(seed, program=program, state=state, progress=progress))
        return specs

    def store(self, episodes: Episodes) -> None:
        """Keep the episodes, their final states, and update the normalisers (HER-sampled, as baselines)."""
        rep = self.config.replay
        self.buffer.store(episodes.o, episodes.ag, episodes.g, episodes.u)
        for state, obs in zip(episodes.final_states, episodes.final_obs):
            self.states.add(state, obs)
        if self.labels is not None:
            self.labels.add(*label_episodes(episodes))
        n = len(episodes)
        batch = sample_transitions(episodes.o, episodes.ag, episodes.g, episodes.u, n, n * self.task.horizon,
                                   self.rng, self.task.compute_reward, rep.strategy, rep.replay_k)
        self.agent.update_normalizers(batch)

    # -- one cycle, one epoch ----------------------------------------------------------------
    def cycle(self, epoch: int) -> dict[str, float]:
        """Collect, store, update; the cycle's mean losses and training success."""
        cfg = self.config
        sch, rep, d = cfg.schedule, cfg.replay, cfg.demos
        specs = self.episode_specs(sch.cycle_episodes(self.workers), epoch)
        episodes = self.collector.run(specs, self.agent.snapshot(), cfg.explore)
        self.store(episodes)
        stats: list[dict[str, float]] = []
        # one update over `actors` actors' batches: the losses are row means, so this gradient is the
        # average of theirs (config.ScheduleConfig); demo rows and labels scale so each keeps its mix
        actors = sch.actors
        for _ in range(sch.batches):
            batch = self.buffer.sample(cfg.agent.batch_size * actors, self.rng, self.task.compute_reward,
                                       rep.strategy, rep.replay_k)
            demo = None
            if self.demo_buffer is not None:
                demo = self.demo_buffer.sample(d.batch_size * actors, self.rng, self.task.compute_reward,
                                               rep.strategy, rep.replay_k if d.her else 0)
            expert = None
            if self.labels is not None and len(self.labels):
                expert = self.labels.sample(d.dagger_batch * actors, self.rng)
            q_weight = d.q_weight if demo is not None else 1.0
            stats.append(self.agent.update(batch, demo, d.bc_weight, d.q_filter, q_weight, expert,
                                           d.dagger_weight))
        self.agent.update_targets()
        p = self.progress
        p.cycles += 1
        p.episodes += len(episodes)
        p.env_steps += len(episodes) * sch.horizon
        out = {k: float(np.mean([s[k] for s in stats])) for k in stats[0]} if stats else {}
        out["train_success"] = float(np.mean(episodes.success))
        return out

    def test_success(self, epoch: int) -> dict[str, float]:
        """Greedy success on program goals (uniform goals for tasks without programs)."""
        n = self.config.schedule.eval_episodes
        if n == 0:
            return {"test_success": float("nan")}
        rng = np.random.default_rng([self.eval_seed, epoch])
        programs = self.programs
        names = [programs[int(rng.integers(len(programs)))] if programs else None for _ in range(n)]
        specs = [EpisodeSpec(int(rng.integers(2**31)), program=p, progress=1.0) for p in names]
        success = self.evaluator.run(specs, self.agent.snapshot()).success
        out = {"test_success": float(np.mean(success))}
        if programs and isinstance(self.task, FetchTask):
            for fam in ("Stack", "Move_To_Zone"):
                picked = [s for s, p in zip(success, names) if family(p) == fam]
                out[f"test_{fam.lower()}"] = float(np.mean(picked)) if picked else float("nan")
        return out

    def epoch(self, on_cycle: Callable[[dict[str, float]], Any] | None = None,
              should_stop: Callable[[], bool] | None = None) -> dict[str, Any] | None:
        """Run (the rest of) one epoch (``on_cycle`` is called after each cycle); its metrics row, or
        None when ``should_stop()`` said so between cycles (the finished cycles stay in ``progress``)."""
        sch = self.config.schedule
        e = self.progress.epoch
        start = time.perf_counter()
        cycles = self.progress.epoch_cycles
        while len(cycles) < sch.cycles:
            if should_stop is not None and should_stop():
                self.progress.wall_s += time.perf_counter() - start
                return None
            cycles.append(self.cycle(e))
            if on_cycle is not None:
                on_cycle(cycles[-1])
        self.progress.epoch_cycles = []
        row: dict[str, Any] = {"epoch": e + 1, "phase": 1 if e < sch.epochs_phase1 else 2}
        keys = [k for k in cycles[0]]
        row.update({k: float(np.mean([c[k] for c in cycles])) for k in keys})
        row.update(self.test_success(e))
        p = self.progress
        p.wall_s += time.perf_counter() - start
        p.epoch += 1
        row.update(env_steps=p.env_steps, episodes=p.episodes, updates=self.agent.updates,
                   start_progress=self.start_progress(e), demo_reset_prob=self.demo_reset_prob(e),
                   buffer_episodes=len(self.buffer), wall_s=round(p.wall_s, 3))
        p.rows.append(row)
        return row

    # -- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly, as data (``asg.learning.checkpoint``)."""
        return {"version": CHECKPOINT_VERSION, "config": cfgmod.to_dict(self.config), "seed": self.seed,
                "agent": self.agent.state_dict(), "buffer": self.buffer.state_dict(),
                "states": states_tree(self.states), "demos": None if self.demos is None else _fields(self.demos),
                "labels": None if self.labels is None else self.labels.state_dict(),
                "rng": self.rng.bit_generator.state, "progress": asdict(self.progress)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output, or from a carry file's (``carry.py``: no buffers, the
        replay and state buffers stay empty, demonstrations are regenerated from the seed)."""
        self.agent.load_state_dict(data["agent"])
        if data.get("buffer") is not None:
            self.buffer = EpisodeBuffer.from_state_dict(data["buffer"])
        if data.get("states") is not None:
            self.states = states_from(data["states"])
        self.demos = None if data.get("demos") is None else DemoSet(**data["demos"])
        if self.demos is None and self.config.demos.enabled:
            self.demos = generate_demos(self.config.demos.episodes, self.demo_seed, self.config.schedule.horizon,
                                        programs=self.programs)
        if data.get("labels") is not None:
            self.labels = ExpertLabels.from_state_dict(data["labels"])
        if self.demos is not None:
            self.demo_buffer = EpisodeBuffer(len(self.demos), self.config.schedule.horizon, self.task.obs_dim,
                                             self.task.goal_dim, self.task.act_dim)
            self.demo_buffer.store(self.demos.o, self.demos.ag, self.demos.g, self.demos.u)
        self.rng.bit_generator.state = data["rng"]
        self.progress = Progress(**data["progress"])

    def refill(self, episodes: int) -> int:
        """Collect ``episodes`` episodes with the exploring policy (the current epoch's starts) into the
        replay buffer, no update (the refill resume, ``carry.py``); the episodes collected."""
        sch, p = self.config.schedule, self.progress
        batch, done, start = sch.cycle_episodes(self.workers), 0, time.perf_counter()
        while done < episodes:
            specs = self.episode_specs(min(batch, episodes - done), p.epoch)
            got = self.collector.run(specs, self.agent.snapshot(), self.config.explore)
            self.store(got)
            done += len(got)
        p.refilled += done
        p.episodes += done
        p.env_steps += done * sch.horizon
        p.wall_s += time.perf_counter() - start  # the training wall time includes the refill
        return done

    def close(self) -> None:
        self.collector.close()
        self.evaluator.close()


def _fields(obj: Any) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in obj.__dataclass_fields__}


def states_tree(buf: StateBuffer) -> dict[str, Any]:
    """A state buffer as arrays: simulation states (``SimState``) or plain arrays, stacked."""
    sim = bool(buf.states) and all(isinstance(s, SimState) for s in buf.states)
    values = [s.values if sim else np.asarray(s) for s in buf.states]
    return {"capacity": buf.capacity, "next": buf.next, "kind": "sim_state" if sim else "array",
            "states": np.stack(values) if values else None, "obs": np.stack(buf.obs) if buf.obs else None}


def states_from(data: dict[str, Any]) -> StateBuffer:
    buf = StateBuffer(int(data["capacity"]))
    states = [] if data["states"] is None else [row.copy() for row in data["states"]]
    buf.states = [SimState(v) for v in states] if data["kind"] == "sim_state" else states
    buf.obs = [] if data["obs"] is None else [row.copy() for row in data["obs"]]
    if len(buf.states) != len(buf.obs) or len(buf.states) > buf.capacity:
        raise ValueError("state buffer of inconsistent size")
    buf.next = int(data["next"])
    return buf


def _run_identity(seed: int, task: str) -> dict[str, Any]:
    return {"domain": DOMAIN, "stage": STAGE, "seed": seed, "task": task}


def read_checkpoint(run_dir: str | Path) -> dict[str, Any]:
    """The checkpoint payload of a run directory; ``CheckpointError`` if missing, corrupt, foreign,
    or when ``config.json`` names another stage, seed or task than the checkpoint."""
    run = RunDir(run_dir)
    loaded = run.load_state(CHECKPOINT_KIND, IDENTITY, defaults={"domain": DOMAIN, "stage": STAGE})
    data = loaded.tree  # (runs of before the domain and stage fields were the goal policy's)
    needed = {"version", "config", "agent", "buffer", "states", "rng", "progress"}
    ckpt.require(isinstance(data, dict) and needed <= set(data), run.path / CHECKPOINT, "unexpected content")
    return data


def write_checkpoint(trainer: GoalPolicyTrainer, run: RunDir) -> None:
    """Checkpoint then its description, each atomically."""
    p = trainer.progress
    meta = {**_run_identity(trainer.seed, type(trainer.task).__name__), "epoch": p.epoch, "env_steps": p.env_steps}
    state = trainer.state_dict()
    run.save_state(CHECKPOINT_KIND, state, meta,
                   {"epoch": p.epoch, "cycles_into_epoch": len(p.epoch_cycles), "env_steps": p.env_steps})
    carry.write_carry(run.path / carry.CARRY_FILE, state, meta)  # the few MB that travel (``carry.py``)


def _resolve_config(config: GoalPolicyConfig | None, saved: dict[str, Any], where: Path) -> GoalPolicyConfig:
    """The saved config; a given config may only change the number of epochs (to extend a run)."""
    old = cfgmod.from_dict(saved, str(where))
    if config is None:
        return old
    same_but_epochs = cfgmod.with_epochs(config, old.schedule.epochs_phase1, old.schedule.epochs_phase2)
    if same_but_epochs != old:
        a, b = cfgmod.to_dict(old), cfgmod.to_dict(same_but_epochs)
        diff = sorted(f"{s}.{k}" for s in a if isinstance(a[s], dict) for k in a[s] if a[s][k] != b[s][k])
        raise ConfigError(f"{where}: resuming with a different config ({', '.join(diff) or 'preset'}); "
                          "only the epochs may change")
    if config.schedule.epochs_phase1 < old.schedule.epochs_phase1:
        raise ConfigError(f"{where}: phase 1 cannot be shortened once a run has started")
    return config


def branch_phase2(source: str | Path, out_dir: str | Path, *, p_reset: float, epochs_phase2: int) -> Path:
    """A new run in ``out_dir`` that continues ``source``'s finished phase 1 with its own phase 2:
    ``epochs_phase2`` epochs with reset probability ``p_reset`` (Alg. 2; the paper's p of not
    resetting is ``1 - p_reset``). The source's checkpoint must sit at the end of phase 1 (epoch
    ``epochs_phase1``, no cycle of the next epoch done); it is read, not changed. The new run has the
    source's learner, buffers, RNG and metrics rows; ``train_goal_policy(None, out_dir,
    resume=out_dir)`` trains its phase 2 (Figure 9: several phase-2 settings from one phase 1).
    ``config.json`` records ``branched_from``."""
    saved = read_checkpoint(source)
    old = cfgmod.from_dict(saved["config"], str(Path(source) / CHECKPOINT))
    done = saved["progress"]
    if done["epoch"] != old.schedule.epochs_phase1 or done["epoch_cycles"]:
        raise ConfigError(f"{Path(source) / CHECKPOINT}: at epoch {done['epoch']} (+{len(done['epoch_cycles'])} "
                          f"cycles), not at the end of phase 1 (epoch {old.schedule.epochs_phase1})")
    config = replace(old, schedule=replace(old.schedule, p_reset=p_reset, epochs_phase2=epochs_phase2))
    out = Path(out_dir)
    with RunDir(out) as run:
        if (out / CHECKPOINT).exists():
            raise ConfigError(f"{out}: already holds a run ({CHECKPOINT}); resume it or choose another folder")
        source_cfg = RunDir(source).read_config("a goal-policy run config")
        identity = _run_identity(int(saved["seed"]), source_cfg.get("task", "FetchTask"))
        tree = {**saved, "config": cfgmod.to_dict(config)}
        run.save_state(CHECKPOINT_KIND, tree, {**identity, "epoch": done["epoch"], "env_steps": done["env_steps"]},
                       {"epoch": done["epoch"], "cycles_into_epoch": 0, "env_steps": done["env_steps"]})
        run.write_config({**source_cfg, "config": cfgmod.to_dict(config), **identity,
                          "branched_from": str(Path(source).resolve())})
    return out


def train_goal_policy(config: GoalPolicyConfig | None, out_dir: str | Path, resume: str | Path | None = None,
                      workers: int = 1, ray_address: str | None = None, seed: int = 0, *,
                      task: GoalTask | None = None, progress: StageProgress | None = None,
                      max_epochs: int | None = None, carry_from: str | Path | None = None,
                      refill_episodes: int | None = None) -> dict[str, Any]:
    """Train (or resume) the goal policy; the result summary (also ``result.json``).

    ``resume``: a run directory to continue in (``out_dir`` is then ignored; ``config`` None =
    the saved one). ``carry_from``: a carry file (``carry.py``) to continue from in the new folder
    ``out_dir``, its replay buffer refilled with ``refill_episodes`` episodes (default
    :func:`default_refill`) before the next update; ``config`` may change only the epochs and
    speed fields. ``max_epochs``: stop after that many epochs in this call (a later resume
    continues). ``task``: another goal task (tests); default the Fetch world.
    """
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    if carry_from is not None and resume is not None:
        raise ConfigError("carry_from starts a new folder from a carry file; resume continues a folder: not both")
    if refill_episodes is not None and (carry_from is None or refill_episodes < 0):
        raise ConfigError("refill_episodes: only with carry_from, and >= 0")
    run_dir = Path(resume if resume is not None else out_dir)
    if resume is not None and not (run_dir / CHECKPOINT).is_file():
        raise CheckpointError(f"{run_dir / CHECKPOINT}: missing (nothing to resume)")
    with RunDir(run_dir) as run:
        saved = None
        if carry_from is not None:
            carry.check_new_folder(run_dir, CHECKPOINT)
            tree, meta = carry.read_carry(carry_from)
            config = carry.carried_config(config, tree["config"], Path(carry_from))
            seed = int(tree["seed"])
            refill = default_refill(config) if refill_episodes is None else refill_episodes
            saved = {**tree, "carried_from": {"file": str(Path(carry_from).resolve()), "sha256":
                                              ckpt.sha256_file(carry_from), "epoch": int(meta.get("epoch", 0)),
                                              "refill_episodes": refill,
                                              "changed": carry.changed_fields(config, tree["config"],
                                                                              Path(carry_from))}}
        elif resume is not None:
            saved = read_checkpoint(run_dir)
            config = _resolve_config(config, saved["config"], run_dir / CHECKPOINT)
            seed = int(saved["seed"])
        else:
            if config is None:
                raise ConfigError("a config (or a preset) is needed for a new run")
            if (run_dir / CHECKPOINT).exists():
                raise ConfigError(f"{run_dir}: already holds a run ({CHECKPOINT}); resume it or choose another folder")
        with torch_threads(config.schedule.torch_threads):
            return _run(run, config, task, seed, workers, ray_address, saved, progress, max_epochs)


def _run(run: RunDir, config: GoalPolicyConfig, task: GoalTask | None, seed: int, workers: int,
         ray_address: str | None, saved: dict[str, Any] | None, progress: StageProgress | None,
         max_epochs: int | None) -> dict[str, Any]:
    trainer = GoalPolicyTrainer(config, task, seed, workers, ray_address)
    try:
        carried = None if saved is None else saved.get("carried_from")
        if saved is not None:
            try:
                trainer.load_state_dict(saved)
            except (KeyError, ValueError, TypeError, RuntimeError) as err:
                where = carried["file"] if carried else run.path / CHECKPOINT
                raise CheckpointError(f"{where}: does not fit the run's config ({err})") from None
        else:
            trainer.prepare_demos()
        kept = ("branched_from", "carried_from")  # where the run came from, kept by later resumes
        origin = ({"carried_from": carried} if carried else {} if saved is None else
                  {k: v for k, v in run.read_config().items() if k in kept})
        run.write_config({"config": cfgmod.to_dict(config), "seed": seed, "workers": workers,
                          **_run_identity(seed, type(trainer.task).__name__), **origin})
        if carried:
            trainer.refill(carried["refill_episodes"])
        with StopOnSignal() as stop:
            return _train_loop(trainer, run, progress, max_epochs, stop)
    finally:
        trainer.close()


def _train_loop(trainer: GoalPolicyTrainer, run: RunDir, progress: StageProgress | None,
                max_epochs: int | None, should_stop: Callable[[], bool]) -> dict:
    run_dir = run.path
    sch = trainer.config.schedule
    p = trainer.progress
    last = sch.total_epochs if max_epochs is None else min(sch.total_epochs, p.epoch + max_epochs)
    # the progress counts towards where this call stops (``max_epochs``), so its ETA is this call's
    total, done, test = last * sch.cycles, p.epoch * sch.cycles + len(p.epoch_cycles), ""

    def on_cycle(out: dict[str, float]) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress("goal policy", done, total, f"train {out['train_success']:.2f}{test}")

    while p.epoch < last:
        row = trainer.epoch(on_cycle, should_stop)
        if row is None:  # Ctrl-C / SIGTERM: checkpoint between cycles, then stop
            write_checkpoint(trainer, run)
            raise KeyboardInterrupt
        test = f", test {row['test_success']:.2f} (epoch {p.epoch}, phase {row['phase']})"
        run.write_metrics(p.rows)
        policy = trainer.agent.snapshot()
        save_policy(policy, run_dir / POLICY_FILE)
        if sch.snapshot_every and p.epoch % sch.snapshot_every == 0:
            save_policy(policy, run_dir / SNAPSHOTS / f"policy_e{p.epoch:04d}.npz")
        if p.epoch % sch.checkpoint_every == 0 or p.epoch == last:
            plot_curves(run_dir / CURVES, p.rows, sch.epochs_phase1)  # a second or so: with checkpoints
            write_checkpoint(trainer, run)
    last_row = p.rows[-1] if p.rows else {}
    result = {"run_dir": str(run_dir), "preset": trainer.config.preset, "seed": trainer.seed,
              "epochs": p.epoch, "total_epochs": sch.total_epochs, "finished": p.epoch >= sch.total_epochs,
              "env_steps": p.env_steps, "episodes": p.episodes, "wall_seconds": round(p.wall_s, 1),
              "test_success": last_row.get("test_success"), "policy": str(run_dir / POLICY_FILE),
              "refilled_episodes": p.refilled,
              "demo_success_rate": None if trainer.demos is None else trainer.demos.success_rate,
              "bc_pretrain_loss": p.pretrain_loss}
    run.write_result(_json_safe(result))
    return result


def default_refill(config: GoalPolicyConfig) -> int:
    """Episodes a carried run refills its buffer with by default: those of ``checkpoint_every`` epochs
    (as many as the run collects between two checkpoints), at most what the buffer holds."""
    sch = config.schedule
    per_epoch = sch.cycles * sch.cycle_episodes()
    return min(sch.checkpoint_every * per_epoch, config.replay.buffer_size // sch.horizon)


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    return obj


__all__ = ["GoalPolicyTrainer", "read_checkpoint", "train_goal_policy", "write_checkpoint"]
