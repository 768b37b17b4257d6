"""The shipped policy file, and evaluating it: every atomic program, and the MultiStep suites.

A policy file (``policy.npz``, written by the trainer) holds the actor's weights and the
normaliser statistics in asg's one checkpoint format (``asg.learning.checkpoint``, kind
``goal-policy``): plain arrays, SHA-256 sealed, loading it runs no pickle. :func:`evaluate_atomic` plays
``episodes`` greedy episodes of each of the 20 atomic programs from the all-on-table
distribution (AlphaNPI-X Appendix D.1's evaluation states); success is the goal reward at the
last of the T steps, i.e. ψ_i. :func:`evaluate_multistep` chains programs without resets, as
the paper's MultiStep-Moving (4 Move_To_Zone calls) and MultiStep-Stacking (3 Stack calls,
one tower), block order drawn per episode. :class:`PolicyController` makes the learned
policy usable wherever the scripted controller is (``envs/fetch/runner.py``).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from asg.envs.fetch import (
    FetchTask,
    goals_reached,
    library_program,
    multistep_programs,
    rotate_goal,
    rotate_observation,
    state_atoms,
)
from asg.learning import checkpoint as ckpt
from asg.learning.errors import CheckpointError
from asg.learning.goal_policy.normalizer import NormStats
from asg.learning.goal_policy.rollout import EpisodeSpec, PolicySnapshot, RolloutWorker

POLICY_FILE = "policy.npz"
POLICY_KIND = "goal-policy"
MULTISTEP = {"MultiStep-Moving": "moving", "MultiStep-Stacking": "stacking"}
EVAL_ENVS = 10  # episodes stepped together


def save_policy(policy: PolicySnapshot, path: str | Path) -> Path:
    """Write ``policy`` as a checkpoint of kind ``goal-policy`` atomically."""
    tree = {"layers": [(w, b) for w, b in policy.layers], "clip_obs": float(policy.clip_obs),
            "o_stats": _stats_tree(policy.o_stats), "g_stats": _stats_tree(policy.g_stats)}
    path = Path(path)
    ckpt.save(path, POLICY_KIND, tree, {"layers": len(policy.layers), "inputs": int(policy.layers[0][0].shape[1])})
    return path


def _stats_tree(stats: NormStats) -> dict[str, Any]:
    return {"mean": stats.mean, "std": stats.std, "clip": float(stats.clip)}


def load_policy(path: str | Path) -> PolicySnapshot:
    """A policy from a policy file or a run directory holding one; ``CheckpointError`` if unusable."""
    path = Path(path)
    if path.is_dir():
        path = path / POLICY_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: no policy file (train a goal policy first)")
    try:
        tree = ckpt.load(path, POLICY_KIND).tree
        layers = tuple((np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in tree["layers"])
        ckpt.require(bool(layers) and all(w.ndim == 2 and b.shape == (w.shape[0],) for w, b in layers)
                     and all(w2.shape[1] == w1.shape[0] for (w1, _), (w2, _) in zip(layers, layers[1:])),
                     path, "layer shapes do not chain")
        o, g = tree["o_stats"], tree["g_stats"]
        return PolicySnapshot(layers, NormStats(o["mean"], o["std"], float(o["clip"])),
                              NormStats(g["mean"], g["std"], float(g["clip"])), float(tree["clip_obs"]))
    except CheckpointError as err:
        raise CheckpointError(f"{path}: not a policy file ({ckpt.reason(err)})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CheckpointError(f"{path}: not a policy file ({type(err).__name__})") from None


def average_policies(policies: Sequence[str | Path | PolicySnapshot]) -> PolicySnapshot:
    """The actors' weights averaged, layer by layer, under the last policy's normaliser statistics:
    stochastic weight averaging of snapshots of one run (Izmailov et al., UAI 2018; in deep RL,
    Nikishin et al. 2018), or a model soup of runs fine-tuned from one parent (Wortsman et al.,
    ICML 2022). Each policy's own normaliser is first folded into its first layer
    (:func:`renormalized`), so every actor is averaged as a function of the same inputs (ours,
    never a preset's)."""
    loaded = [_as_policy(p) for p in policies]
    if not loaded:
        raise ValueError("no policies to average")
    shapes = [tuple(w.shape for w, _ in p.layers) for p in loaded]
    if len(set(shapes)) != 1:
        raise ValueError(f"policies of different shapes cannot be averaged: {sorted(set(shapes))}")
    last = loaded[-1]
    loaded = [renormalized(p, last.o_stats, last.g_stats) for p in loaded]
    layers = tuple((np.mean([p.layers[i][0] for p in loaded], axis=0).astype(w.dtype),
                    np.mean([p.layers[i][1] for p in loaded], axis=0).astype(b.dtype))
                   for i, (w, b) in enumerate(last.layers))
    return PolicySnapshot(layers, last.o_stats, last.g_stats, last.clip_obs)


def renormalized(policy: PolicySnapshot, o_stats: NormStats, g_stats: NormStats) -> PolicySnapshot:
    """The same actor reading inputs normalised by ``o_stats`` and ``g_stats``: with x_own =
    (x - mean_own) / std_own = x_new * (std_new / std_own) + (mean_new - mean_own) / std_own, the first
    layer's columns scale by std_new / std_own and its bias gains W1 of the shift. Exact but for the
    ±clip of normalised inputs, which now applies on the new scale."""
    w, b = policy.layers[0]
    scale = np.concatenate([o_stats.std / policy.o_stats.std, g_stats.std / policy.g_stats.std])
    shift = np.concatenate([(o_stats.mean - policy.o_stats.mean) / policy.o_stats.std,
                            (g_stats.mean - policy.g_stats.mean) / policy.g_stats.std])
    first = ((w * scale[None, :]).astype(w.dtype), (b + w @ shift).astype(b.dtype))
    return PolicySnapshot((first, *policy.layers[1:]), o_stats, g_stats, policy.clip_obs)


def _as_policy(policy: str | Path | PolicySnapshot) -> PolicySnapshot:
    return policy if isinstance(policy, PolicySnapshot) else load_policy(policy)


def program_success(worker: RolloutWorker, policy: PolicySnapshot, programs: Sequence[str],
                    episodes: int, seed: int, post: dict[str, float] | None = None,
                    tolerant: tuple[float | None, float | None, dict[str, float]] | None = None
                    ) -> dict[str, float]:
    """Greedy success rate of each program over ``episodes`` fresh starts (seeded per program):
    the goal test f(s_T, g). With ``post``, also fills in how often ψ held at the end; with
    ``tolerant`` = (z, xy, rates), how often the same episodes pass the goal test that also wants each
    block within z (m) of its target's height (``schedule.goal_z_tolerance``) and within xy (m) of it
    horizontally (``schedule.goal_xy_tolerance``), each where not None."""
    out = {}
    for k, name in enumerate(programs):
        seeds = np.random.default_rng([seed, k]).integers(2**31, size=episodes)
        specs = [EpisodeSpec(int(s), program=name, progress=1.0) for s in seeds]
        run = worker.run(specs, policy)
        out[name] = float(np.mean(run.success))
        if tolerant is not None:
            tolerant[2][name] = float(np.mean(goals_reached(run.ag[:, -1], run.g, z_tolerance=tolerant[0],
                                                            xy_tolerance=tolerant[1])))
        if post is not None:
            psi = library_program(name).post
            post[name] = float(np.mean([psi.holds(state_atoms(obs)) for obs in run.final_obs]))
    return out


STARTS = ("table", "chained", "handoff", "placing", "other_zone")


def evaluate_atomic(policy_path: str | Path | PolicySnapshot, episodes: int = 100, seed: int = 0,
                    threads: int = 1, programs: Sequence[str] | None = None,
                    starts: str = "table", z_tolerance: float | None = None,
                    xy_tolerance: float | None = None) -> dict[str, Any]:
    """Success of every atomic program: ``{"programs": {name: {"success_rate", "episodes"}}, ...}``
    (the issue's contract): the goal test, every block within 5 cm of Θ's target (the paper's).
    ``post_success`` maps each program to how often ψ held at the end instead (what a calling
    program sees). Also gives the means per family (``families``, ``post_families``) and over all
    programs (``mean_success``, ``mean_post_success``).
    ``starts``: every block on the table (the paper's evaluation), or ``chained``: set up as
    inside a non-atomic program (a Stack onto a tower, a Move into a half-full zone), or
    ``handoff``: chained, with the block the last call placed still in the closed fingers, where a
    learned program leaves it, or ``placing``: chained, with the program's own block held in the
    closed fingers 2.5-5 cm above its target, or ``other_zone``: chained, the blocks the setting
    leaves unused first put into the other zone, as Clean_And_Stack and Clean_Table leave them
    (``initial_states.py``, ``goal_setter.setting_calls``).
    ``z_tolerance``: the same episodes also scored with the goal test that wants each block within
    that height of its target (the height tolerance of ``fast``/``learned``): ``tolerant_success``,
    ``tolerant_families``, ``mean_tolerant_success``; ``xy_tolerance``: that test also wants each block
    within that horizontal distance of its target (``schedule.goal_xy_tolerance``).
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if starts not in STARTS:
        raise ValueError(f"starts must be one of {STARTS}, got {starts!r}")
    policy = _as_policy(policy_path)
    task = FetchTask(initial_state=starts)
    names = tuple(programs) if programs is not None else task.programs
    worker = RolloutWorker(task, min(EVAL_ENVS, episodes), threads)
    post: dict[str, float] = {}
    tolerant: dict[str, float] = {}
    try:
        strict = z_tolerance is not None or xy_tolerance is not None
        rates = program_success(worker, policy, names, episodes, seed, post,
                                (z_tolerance, xy_tolerance, tolerant) if strict else None)
    finally:
        worker.close()
    extra = {} if not strict else {
        "z_tolerance": z_tolerance, **({} if xy_tolerance is None else {"xy_tolerance": xy_tolerance}),
        "tolerant_success": tolerant, "tolerant_families": _family_means(tolerant),
        "mean_tolerant_success": float(np.mean(list(tolerant.values())))}
    return {**extra, "programs": {n: {"success_rate": r, "episodes": episodes} for n, r in rates.items()},
            "post_success": post, "families": _family_means(rates), "post_families": _family_means(post),
            "mean_success": float(np.mean(list(rates.values()))),
            "mean_post_success": float(np.mean(list(post.values()))), "seed": seed, "starts": starts}


def _family_means(rates: dict[str, float]) -> dict[str, float]:
    families: dict[str, list[float]] = {}
    for name, rate in rates.items():
        families.setdefault(family(name), []).append(rate)
    return {f: float(np.mean(v)) for f, v in sorted(families.items())}


def family(program: str) -> str:
    """``Stack`` or ``Move_To_Zone`` (the name up to its block arguments)."""
    return "Stack" if program.startswith("Stack") else "Move_To_Zone"


def evaluate_multistep(policy_path: str | Path | PolicySnapshot, episodes: int = 100, seed: int = 0,
                       threads: int = 1) -> dict[str, Any]:
    """MultiStep-Moving and MultiStep-Stacking: ``{"suites": {name: {"success_rate", "episodes",
    "calls_success"}}}``; a chain fails at its first failed call (or a call whose φ does not hold)."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    policy = _as_policy(policy_path)
    task = FetchTask(initial_state="table")
    worker = RolloutWorker(task, min(EVAL_ENVS, episodes), threads)
    suites = {}
    try:
        for s, (suite, kind) in enumerate(MULTISTEP.items()):
            rng = np.random.default_rng([seed, 100 + s])
            chains = [multistep_programs(kind, rng) for _ in range(episodes)]
            seeds = rng.integers(2**31, size=episodes)
            ok, per_call = _run_chains(worker, policy, chains, seeds, task)
            suites[suite] = {"success_rate": float(np.mean(ok)), "episodes": episodes,
                             "calls_success": [float(x) for x in per_call.mean(axis=0)]}
    finally:
        worker.close()
    return {"suites": suites, "seed": seed}


def _run_chains(worker: RolloutWorker, policy: PolicySnapshot, chains: list[tuple[str, ...]],
                seeds: np.ndarray, task: FetchTask) -> tuple[np.ndarray, np.ndarray]:
    """Run each chain from a fresh table start; (whole chain succeeded (n,), each call (n, calls))."""
    n, calls = len(chains), len(chains[0])
    alive = np.ones(n, dtype=bool)
    per_call = np.zeros((n, calls), dtype=bool)
    states: list[Any] = [None] * n
    for c in range(calls):
        specs, rows = [], []
        for i in range(n):
            if not alive[i]:
                continue
            if states[i] is not None and not task.applicable(states[i][1], chains[i][c]):
                alive[i] = False  # φ fails where the previous call left the world
                continue
            state = None if states[i] is None else states[i][0]
            specs.append(EpisodeSpec(int(seeds[i]) + c, program=chains[i][c], state=state, progress=1.0))
            rows.append(i)
        if not specs:
            break
        episodes = worker.run(specs, policy)
        for j, i in enumerate(rows):
            per_call[i, c] = bool(episodes.success[j])
            alive[i] = per_call[i, c]
            states[i] = (episodes.final_states[j], episodes.final_obs[j])
    return per_call.all(axis=1), per_call


class PolicyController:
    """The learned policy behind the scripted controller's interface (``reset`` / ``act``)."""

    def __init__(self, policy: str | Path | PolicySnapshot) -> None:
        self.policy = _as_policy(policy)
        self._perm = [rotate_observation(np.arange(70), j).astype(np.int64) for j in range(4)]
        self._gperm = [rotate_goal(np.arange(12), j).astype(np.int64) for j in range(4)]
        self.block, self._goal = 0, np.zeros(12, dtype=np.float32)

    def reset(self, obs: np.ndarray, goal: np.ndarray, block: int | None = None) -> None:
        """Pursue ``goal`` (12, env frame) moving ``block`` (default: the block whose target is farthest)."""
        obs, goal = np.asarray(obs, dtype=float), np.asarray(goal, dtype=float)
        if block is None:
            block = int(np.argmax(np.linalg.norm((goal - obs[:12]).reshape(4, 3), axis=-1)))
        self.block = int(block)
        self._goal = goal[self._gperm[self.block]][None].astype(np.float32)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The greedy action for a 70-d observation in env frame."""
        o = np.asarray(obs, dtype=np.float32)[self._perm[self.block]][None]
        return self.policy.act(o, self._goal)[0].astype(np.float64)
