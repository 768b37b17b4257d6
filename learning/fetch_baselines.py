"""The model-free baselines of AlphaNPI-X Table 2: multitask DDPG, with and without a goal setter.

Both learn one flat policy for the 7 expanded non-atomic programs of the Fetch library
(``fetch_library().non_atomic``), with the goal-policy machinery unchanged: :class:`NonAtomicTask`
is a ``rollout.GoalTask``, so ``trainer.GoalPolicyTrainer`` trains it (Section 5):

- ``m-ddpg``: input = the 70-d state and the one-hot of the episode's program. Reward 0 when
  the program's post-condition ψ holds, else -1 (the Fetch sparse convention). Nothing to
  relabel: ``replay_k`` must be 0.
- ``m-ddpg-her``: input = the state and a goal vector, the 12 end positions of the blocks that
  a non-atomic goal setter gives (AlphaNPI-X itself has none). Reward 0 when every block is
  within ε of its target (the HER reward of Section 4.1), goals relabelled "final".

Shapes. Observations are the env's 70 values, unrotated. Achieved goals are the 12 block
positions, the first 12 observation values (``rollout.run_episodes`` reads the achieved goal
there), so both goals have 12 entries: the goal-setter one is 4 target positions, the one-hot
one is the 7-d one-hot followed by 5 zeros (constant inputs the normaliser maps to 0, so the
policy sees exactly the state and the one-hot).

The goal setter Θ_na(s, p) composes the atomic Θ of ``envs/fetch/goal_setter.py``: the exact
behaviour model's planner (``behaviour_model.plan_program``) picks the atomic calls that reach
ψ(p) from s, and the exact model (Θ applied call after call) gives the end positions. Plans
are cached by the start state's atoms and checked on every use (ψ must hold at the end).

Horizon: one episode has T = 200 steps, four atomic programs of 50, as many as the longest
programs need (Clean_Table and Clean_And_Stack: 4 calls; Stack_All_Blocks 3; the level-1 zone
programs 2). One length for all programs keeps the replay buffer's fixed-length episodes.
Starts: the all-on-table distribution (``initial_state="table"``), where Table 2 is measured.
Success, in training metrics and evaluation alike, is ψ of the program at the last step.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from asg.envs.fetch import (
    BLOCK_NAMES,
    INITIAL_STATES,
    N_BLOCKS,
    T_ATOMIC,
    ZONE_NAMES,
    ExactBehaviourModel,
    FetchBatch,
    block_relations,
    goals_reached,
    plan_program,
    state_atoms,
)
from asg.learning.checkpoint import read_json
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.goal_policy.config import GoalPolicyConfig, nonatomic_baseline
from asg.learning.goal_policy.evaluate import load_policy, program_success
from asg.learning.goal_policy.rollout import EpisodeSpec, PolicySnapshot, RolloutWorker
from asg.learning.run_dir import StageProgress, atomic_write_json
from asg.planning.errors import AsgError
from asg.planning.programs import fetch_library

KINDS = {"m-ddpg": "one-hot", "m-ddpg-her": "goal-setter"}  # baseline -> goal representation
GOAL_KINDS = ("one-hot", "goal-setter")
HORIZON = 4 * T_ATOMIC
GOAL_DIM = 12
BASELINE_FILE = "baseline.json"
EVAL_ENVS = 10
# AlphaNPI-X Table 2, "Multitask DDPG" and "Multitask DDPG + HER": 0.0 on every row.
TABLE2_ROWS = ("Clean_Table", "Clean_And_Stack", "Stack_All_Blocks", "Stack_All_To_Zone", "Move_All_To_Zone")
PAPER_TABLE2_BASELINES = {"m-ddpg": dict.fromkeys(TABLE2_ROWS, 0.0), "m-ddpg-her": dict.fromkeys(TABLE2_ROWS, 0.0)}


class GoalSetterError(AsgError):
    """The non-atomic goal setter found no end state satisfying the program's ψ."""


@lru_cache(maxsize=1)
def nonatomic_programs() -> tuple[str, ...]:
    """The 7 expanded non-atomic programs, in library order (index = one-hot position)."""
    return tuple(p.name for p in fetch_library().non_atomic)


def program_index(name: str) -> int:
    """Position of a non-atomic program (any case) in :func:`nonatomic_programs`."""
    for i, known in enumerate(nonatomic_programs()):
        if known.lower() == str(name).lower():
            return i
    raise ConfigError(f"unknown non-atomic program {name!r}; e.g. {nonatomic_programs()[0]}")


def goal_kind(kind: str) -> str:
    """The goal representation of a baseline (``m-ddpg`` or ``m-ddpg-her``)."""
    if kind not in KINDS:
        raise ConfigError(f"baseline must be one of {sorted(KINDS)}, got {kind!r}")
    return KINDS[kind]


# -- ψ on block positions, batched -------------------------------------------------------------
relations = block_relations  # the labeler's geometry, batched over states (kept under this name)


@lru_cache(maxsize=1)
def _post_clauses() -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], ...]:
    """Each program's ψ as (positive, negative) column lists into :func:`_features`."""
    blocks, zones = {b: i for i, b in enumerate(BLOCK_NAMES)}, {z: i for i, z in enumerate(ZONE_NAMES)}

    def column(atom) -> int:
        a = blocks[atom.args[0]]
        if atom.predicate == "on":
            return a * N_BLOCKS + blocks[atom.args[1]]
        if atom.predicate == "on-table":
            return N_BLOCKS * N_BLOCKS + a
        if atom.predicate == "in-zone":
            return N_BLOCKS * (N_BLOCKS + 1) + a * len(ZONE_NAMES) + zones[atom.args[1]]
        raise ConfigError(f"ψ on block positions cannot decide {atom}")

    cols = lambda atoms: np.array(sorted(column(a) for a in atoms), dtype=np.int64)  # noqa: E731
    return tuple(tuple((cols(c.pos), cols(c.neg)) for c in p.post.clauses) for p in fetch_library().non_atomic)


def _features(positions: np.ndarray) -> np.ndarray:
    """on, on-table and in-zone flattened: (N, 16 + 4 + 8) booleans."""
    on, on_table, in_zone = relations(positions)
    n = on.shape[0]
    return np.concatenate([on.reshape(n, -1), on_table, in_zone.reshape(n, -1)], axis=1)


def post_holds(positions: np.ndarray, programs: np.ndarray) -> np.ndarray:
    """ψ of non-atomic program ``programs[i]`` (index) on block positions ``positions[i]`` (N, 12)."""
    feats = _features(positions)
    programs = np.asarray(programs, dtype=np.int64).reshape(-1)
    out = np.zeros(feats.shape[0], dtype=bool)
    for k in np.unique(programs):
        rows = programs == k
        f = feats[rows]
        for pos, neg in _post_clauses()[int(k)]:
            out[rows] |= f[:, pos].all(axis=1) & ~f[:, neg].any(axis=1)
    return out


# -- goals -------------------------------------------------------------------------------------
def one_hot_goal(name: str) -> np.ndarray:
    """The one-hot of a non-atomic program, padded with zeros to 12 entries."""
    goal = np.zeros(GOAL_DIM)
    goal[program_index(name)] = 1.0
    return goal


_PLANS: dict[tuple[str, frozenset], tuple[str, ...]] = {}
MAX_CACHED_PLANS = 4096


def planned_calls(obs: np.ndarray, name: str) -> tuple[str, ...]:
    """The atomic calls that reach ψ(name) from ``obs`` in the exact model."""
    return _plan(obs, name)[0]


def nonatomic_goal(obs: np.ndarray, name: str) -> np.ndarray:
    """Θ_na(s, p): the 12 block positions at which ψ(p) holds, reached from ``obs`` (70,)."""
    return _plan(obs, name)[1]


def _plan(obs: np.ndarray, name: str) -> tuple[tuple[str, ...], np.ndarray]:
    """Calls and end positions for ``name`` from ``obs``: the cached plan of these atoms if it
    works from ``obs``, else a fresh one from the planner."""
    name = nonatomic_programs()[program_index(name)]
    key = (name, state_atoms(obs))
    calls = _PLANS.get(key)
    end = None if calls is None else _end_positions(obs, name, calls)
    if end is None:
        tree = plan_program(obs, name)
        calls = None if tree is None else tuple(tree.atomic_sequence())
        end = None if calls is None else _end_positions(obs, name, calls)
        if end is None:
            raise GoalSetterError(f"no plan reaches the post-condition of {name} from this state")
        if len(_PLANS) >= MAX_CACHED_PLANS:
            _PLANS.clear()
        _PLANS[key] = calls
    return calls, end


def _end_positions(obs: np.ndarray, name: str, calls: Sequence[str]) -> np.ndarray | None:
    """Block positions (12,) after ``calls`` in the exact model, None unless each φ and ψ hold."""
    model, state = ExactBehaviourModel(), np.asarray(obs, dtype=float)
    for call in calls:
        state, ok = model.predict(state, call)
        if not ok:
            return None
    if not fetch_library().get(name).post.holds(state_atoms(state)):
        return None
    return state[:GOAL_DIM].copy()


# -- the task ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class NonAtomicTask:
    """The non-atomic programs of the Fetch library as one goal task (see the module docstring)."""

    goal: str = "goal-setter"  # "one-hot" (m-ddpg) or "goal-setter" (m-ddpg-her)
    horizon: int = HORIZON
    initial_state: str = "table"  # start distribution: "table" (Table 2's) or "training" (D.1)
    obs_dim: int = 70
    goal_dim: int = GOAL_DIM
    act_dim: int = 4

    def __post_init__(self) -> None:
        if self.goal not in GOAL_KINDS:
            raise ConfigError(f"goal must be one of {GOAL_KINDS}, got {self.goal!r}")
        if self.horizon < 1:
            raise ConfigError(f"horizon must be >= 1, got {self.horizon}")
        if self.initial_state not in INITIAL_STATES:
            raise ConfigError(f"initial_state must be one of {sorted(INITIAL_STATES)}, got {self.initial_state!r}")

    @property
    def programs(self) -> tuple[str, ...]:
        return nonatomic_programs()

    def make_batch(self, n_envs: int, threads: int = 1) -> NonAtomicBatch:
        return NonAtomicBatch(self, n_envs, threads)

    def goal_of(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The episode goal (12,) of program ``name`` from start state ``obs``."""
        return one_hot_goal(name) if self.goal == "one-hot" else nonatomic_goal(obs, name)

    def compute_reward(self, ag: np.ndarray, g: np.ndarray, info: Any = None) -> np.ndarray:
        """0 where the goal is met (ψ of the one-hot's program; every block within ε), else -1."""
        ag, g = np.asarray(ag, dtype=float), np.asarray(g, dtype=float)
        shape = np.broadcast_shapes(ag.shape, g.shape)[:-1]
        ag, g = np.broadcast_to(ag, shape + (GOAL_DIM,)), np.broadcast_to(g, shape + (GOAL_DIM,))
        if self.goal == "goal-setter":
            return goals_reached(ag, g).astype(np.float64) - 1.0
        hot = g.reshape(-1, GOAL_DIM)[:, :len(nonatomic_programs())]
        valid = hot.max(axis=1) > 0.5
        met = post_holds(ag.reshape(-1, GOAL_DIM), hot.argmax(axis=1)) & valid
        return met.reshape(shape).astype(np.float64) - 1.0

    def applicable(self, raw_obs: np.ndarray, program: str) -> bool:
        """φ of a non-atomic program on a state (true everywhere in the Fetch library)."""
        return fetch_library().get(program).pre.holds(state_atoms(raw_obs))


class NonAtomicBatch(FetchBatch):
    """n Fetch simulations pursuing non-atomic programs; success is each program's ψ."""

    def __init__(self, task: NonAtomicTask, n: int, threads: int = 1) -> None:
        super().__init__(n, task.initial_state, task.horizon, threads)
        self.task = task
        self.program_ids = np.zeros(n, dtype=np.int64)

    def start(self, specs: Sequence[EpisodeSpec]) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        if not 1 <= len(specs) <= self.n:
            raise ValueError(f"a batch of {self.n} envs cannot start {len(specs)} episodes")
        self.active = len(specs)
        goals, programs = np.zeros((self.active, GOAL_DIM)), []
        for i, spec in enumerate(specs):
            if spec.program is None or spec.goal is not None:
                raise ConfigError("every non-atomic episode needs a program (schedule.phase1_goals = "
                                  "'programs', no demonstrations)")
            name = nonatomic_programs()[program_index(spec.program)]
            env = self.envs[i]
            env.set_progress(float(spec.progress))
            options = {} if spec.state is None else {"sim_state": spec.state}
            self.raw[i] = self._reset(env, spec.seed, options)["observation"]
            goals[i] = self.task.goal_of(self.raw[i], name)
            self.program_ids[i] = program_index(name)
            programs.append(name)
        self.focus[:self.active] = 0  # no rotation: the policy sees the env's block order
        return self._rotated(), goals, programs

    def reached(self, ag: np.ndarray, g: np.ndarray) -> np.ndarray:
        """ψ of each active episode's program on the achieved block positions."""
        return post_holds(ag, self.program_ids[:len(ag)])


# -- training and evaluation -------------------------------------------------------------------
def train_baseline(kind: str, out_dir: str | Path, config: GoalPolicyConfig | None = None, seed: int = 0, *,
                   initial_state: str = "table", progress: StageProgress | None = None,
                   max_epochs: int | None = None) -> dict[str, Any]:
    """Train baseline ``kind`` into ``out_dir`` (the goal-policy run layout plus ``baseline.json``).

    ``config`` defaults to ``config.nonatomic_baseline``; the result summary gains ``kind``.
    """
    # torch: rollout workers import this module for NonAtomicTask and run without it
    from asg.learning.goal_policy.trainer import CHECKPOINT, train_goal_policy

    goal = goal_kind(kind)
    config = config if config is not None else nonatomic_baseline(her=goal == "goal-setter")
    if goal == "one-hot" and config.replay.replay_k != 0:
        raise ConfigError("m-ddpg: a one-hot goal cannot be relabelled; set replay.replay_k = 0")
    if config.schedule.phase1_goals != "programs":
        raise ConfigError("non-atomic baselines draw a program every episode: schedule.phase1_goals = 'programs'")
    out = Path(out_dir)
    if (out / CHECKPOINT).exists():
        raise ConfigError(f"{out}: already holds a run; choose another folder")
    task = NonAtomicTask(goal, config.schedule.horizon, initial_state)
    atomic_write_json(out / BASELINE_FILE, {"kind": kind, "goal": goal, "horizon": task.horizon,
                                            "initial_state": initial_state, "programs": list(task.programs)})
    result = train_goal_policy(config, out, seed=seed, task=task, progress=progress, max_epochs=max_epochs)
    return {**result, "kind": kind}


def resume_baseline(out_dir: str | Path, config: GoalPolicyConfig | None = None, *,
                    progress: StageProgress | None = None, max_epochs: int | None = None) -> dict[str, Any]:
    """Continue the baseline run in ``out_dir`` (after Ctrl-C, SIGTERM or ``max_epochs``): its task from
    ``baseline.json``, its saved config, or ``config`` where only the number of epochs differs (to
    train it longer)."""
    from asg.learning.goal_policy.trainer import train_goal_policy

    out = Path(out_dir)
    saved = read_json(out / BASELINE_FILE, "a baseline run's baseline.json")
    if not {"kind", "goal", "horizon", "initial_state"} <= set(saved):
        raise CheckpointError(f"{out / BASELINE_FILE}: not a baseline run's description")
    task = NonAtomicTask(saved["goal"], int(saved["horizon"]), saved["initial_state"])
    result = train_goal_policy(config, out, resume=out, task=task, progress=progress, max_epochs=max_epochs)
    return {**result, "kind": saved["kind"]}


def evaluate_baseline(policy: str | Path | PolicySnapshot, kind: str, episodes: int = 100, seed: int = 0, *,
                      horizon: int = HORIZON, initial_state: str = "table", threads: int = 1) -> dict[str, Any]:
    """Greedy success of every non-atomic program over ``episodes`` starts each:
    ``{"programs": {name: {"success_rate", "episodes"}}, "families", "mean_success", ...}``.

    ``families`` averages over arguments (the rows of Table 2). ``policy`` is a ``policy.npz``,
    a run folder (its ``baseline.json`` must name ``kind``) or a snapshot.
    """
    goal = goal_kind(kind)
    if episodes < 1:
        raise ConfigError(f"episodes must be >= 1, got {episodes}")
    if not isinstance(policy, PolicySnapshot):
        info = Path(policy) / BASELINE_FILE
        if info.is_file():
            try:
                saved = json.loads(info.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as err:
                raise CheckpointError(f"{info}: unreadable ({type(err).__name__})") from None
            if not isinstance(saved, dict) or saved.get("kind") != kind:
                raise ConfigError(f"{info}: this run trained another baseline than {kind}")
        policy = load_policy(policy)
    task = NonAtomicTask(goal, horizon, initial_state)
    if policy.layers[0][0].shape[1] != task.obs_dim + task.goal_dim:
        raise CheckpointError(f"the policy takes {policy.layers[0][0].shape[1]} inputs, "
                              f"not the {task.obs_dim + task.goal_dim} of a non-atomic baseline")
    worker = RolloutWorker(task, min(EVAL_ENVS, episodes), threads)
    try:
        rates = program_success(worker, policy, task.programs, episodes, seed)
    finally:
        worker.close()
    families: dict[str, list[float]] = {}
    for name, rate in rates.items():
        families.setdefault(fetch_library().get(name).family, []).append(rate)
    return {"kind": kind, "goal": goal, "programs": {n: {"success_rate": r, "episodes": episodes}
                                                     for n, r in rates.items()},
            "families": {f: float(np.mean(v)) for f, v in families.items()},
            "mean_success": float(np.mean(list(rates.values()))), "seed": seed, "horizon": horizon,
            "initial_state": initial_state}


__all__ = ["HORIZON", "KINDS", "PAPER_TABLE2_BASELINES", "TABLE2_ROWS", "GoalSetterError", "NonAtomicBatch",
           "NonAtomicTask", "evaluate_baseline", "nonatomic_goal", "nonatomic_programs", "one_hot_goal",
           "planned_calls", "post_holds", "relations", "train_baseline"]
