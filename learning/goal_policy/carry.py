"""Carrying a goal-policy run across machines: the learner without its replay buffer ("refill" resume).

A run's ``checkpoint.npz`` holds everything, the replay buffer too (about 350 MB once T5's 1e6
transitions are in it): too big to commit, so a run did not outlive the machine it ran on. Every
checkpoint now also writes ``carry.npz`` (a few MB): the config and seed, the agent (actor,
critic, their targets, both Adam optimisers' state, the observation and goal normalisers, the
update count), the trainer's RNG and its progress (epoch, counters, metrics rows). What it leaves
out: the replay buffer of episodes, Algorithm 2's buffer of final states and, when a config uses
them, the DAgger labels (demonstrations are regenerated from the seed, without BC pre-training).

The **refill resume** (:func:`asg.learning.goal_policy.trainer.train_goal_policy` with ``carry=``,
``asg train --domain fetch-programs --stage goal-policy --carry FILE --out DIR``) starts a new run
folder from that file: the learner and progress as carried, then ``refill_episodes`` episodes of
the carried policy exploring as training does (the starts of the current epoch) fill the empty
replay buffer before the next update; those episodes count in the run's episodes and env steps
and in ``progress.refilled``. So the buffer is the only thing lost. It is not the uninterrupted
run to the last digit (the buffer's older episodes are gone, and the refill draws on the RNG);
``--resume DIR`` on the machine that holds ``checkpoint.npz`` still is.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from asg.learning import checkpoint as ckpt
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.goal_policy import config as cfgmod
from asg.learning.goal_policy.config import GoalPolicyConfig

CARRY_FILE, CARRY_KIND = "carry.npz", "goal-policy-carry"
CARRIED = ("version", "config", "seed", "agent", "rng", "progress")  # what a carry file keeps of a checkpoint
# fields a carried run may change: how long it trains, and speed only
SPEED_FIELDS = ("threads", "torch_threads", "checkpoint_every", "snapshot_every")
# what a continued run may change of its curriculum: the start distribution (chained starts, hand-offs,
# placing starts) and the release and horizontal precision the reward asks for, all ours (the run's
# config.json then holds the new values, ``carried_from`` in its checkpoint the change);
# docs/fetch_programs_switches.md
CURRICULUM_FIELDS = ("chained_starts", "chained_handoff", "chained_place", "chained_place_family", "chained_jitter",
                     "chained_tower_weights", "chained_other_zone", "release_height", "goal_xy_tolerance")
# what a continued run may change of its optimiser: the learning rates, to fine-tune a trained policy at a
# lower rate (the carried Adam moments are kept, the step size is the new config's; ours)
FINETUNE_FIELDS = ("lr_actor", "lr_critic")
# ... and how many of the paper's actors the learner emulates (episodes per cycle and rows per update × actors;
# T5: 28), e.g. to continue a one-actor run with the paper's larger averaged batches
SCALE_FIELDS = ("actors",)


def carry_tree(state: dict[str, Any]) -> dict[str, Any]:
    """The carried part of a trainer's ``state_dict`` (or of a read checkpoint)."""
    return {key: state[key] for key in CARRIED}


def write_carry(path: str | Path, state: dict[str, Any], meta: dict[str, Any]) -> str:
    """``state`` (a trainer's full state) without its buffers, atomically; the file's SHA-256."""
    return ckpt.save(Path(path), CARRY_KIND, carry_tree(state), meta, compress=True)


def export_carry(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """The carry file of a run folder's ``checkpoint.npz`` (for runs checkpointed before carry files
    existed), written to ``out`` (default ``<run_dir>/carry.npz``)."""
    from asg.learning.goal_policy.trainer import read_checkpoint

    saved = read_checkpoint(run_dir)
    meta = ckpt.read_meta(Path(run_dir) / "checkpoint.npz")
    target = Path(out) if out is not None else Path(run_dir) / CARRY_FILE
    write_carry(target, saved, meta)
    return target


def read_carry(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tree, meta) of a carry file; ``CheckpointError`` naming the file when it is not one."""
    loaded = ckpt.load(Path(path), CARRY_KIND)
    ckpt.require(isinstance(loaded.tree, dict) and set(CARRIED) <= set(loaded.tree), path, "unexpected content")
    return loaded.tree, loaded.meta


def carried_config(config: GoalPolicyConfig | None, saved: dict[str, Any], where: Path) -> GoalPolicyConfig:
    """The carried config; a given one may differ only in the epochs (phase 1 never shorter), in
    the speed-only fields ``SPEED_FIELDS`` (threads, torch threads, checkpoint and snapshot intervals), in the
    curriculum fields ``CURRICULUM_FIELDS``, ``schedule.actors`` and the learning rates (see
    ``changed_fields``)."""
    old = cfgmod.from_dict(saved, str(where))
    if config is None:
        return old
    from dataclasses import replace

    kept = {name: getattr(old.schedule, name) for name in SPEED_FIELDS + CURRICULUM_FIELDS + SCALE_FIELDS}
    rates = {name: getattr(old.agent, name) for name in FINETUNE_FIELDS}
    same = replace(config, agent=replace(config.agent, **rates),
                   schedule=replace(config.schedule, epochs_phase1=old.schedule.epochs_phase1,
                                    epochs_phase2=old.schedule.epochs_phase2, **kept))
    if same != old:
        a, b = cfgmod.to_dict(old), cfgmod.to_dict(same)
        diff = sorted(f"{s}.{k}" for s in a if isinstance(a[s], dict) for k in a[s] if a[s][k] != b[s][k])
        raise ConfigError(f"{where}: a carried run keeps its config ({', '.join(diff) or 'preset'} differ); only "
                          f"the epochs, schedule.{', schedule.'.join(SPEED_FIELDS + CURRICULUM_FIELDS + SCALE_FIELDS)}"
                          f" and agent.{', agent.'.join(FINETUNE_FIELDS)} may change")
    if config.schedule.epochs_phase1 < old.schedule.epochs_phase1:
        raise ConfigError(f"{where}: phase 1 cannot be shortened once a run has started")
    return config


def check_new_folder(out: Path, checkpoint_name: str) -> None:
    """A carried run starts a new folder: refuse one that already holds a run."""
    if (out / checkpoint_name).exists():
        raise CheckpointError(f"{out}: already holds a run ({checkpoint_name}); continue that run "
                              "(resume), or carry into another folder")


def changed_fields(config: GoalPolicyConfig, saved: dict[str, Any], where: Path) -> dict[str, list[Any]]:
    """The fields a carried run changes that are not speed only: ``{"schedule.F": [old, new]}``, and
    ``{"agent.lr_*": [old, new]}`` for a fine-tuning rate."""
    old = cfgmod.from_dict(saved, str(where))
    out = {f"schedule.{name}": [getattr(old.schedule, name), getattr(config.schedule, name)]
           for name in ("epochs_phase1", "epochs_phase2", *CURRICULUM_FIELDS, *SCALE_FIELDS)
           if getattr(old.schedule, name) != getattr(config.schedule, name)}
    out.update({f"agent.{name}": [getattr(old.agent, name), getattr(config.agent, name)]
                for name in FINETUNE_FIELDS if getattr(old.agent, name) != getattr(config.agent, name)})
    return out
