"""Where a landmark's stage spends its env steps: every training skill run and, at every curve point,
each skill's training clock and the meta-controller's choices (issue 39).

    python benchmarks/skill_trace.py --world keyinbox-repaired --seed 1 --steps 200000 --n-envs 16 \
        --out benchmarks/results/own_worlds/skill_trace/keyinbox-repaired_seed1.json

This trains one run of ``benchmarks/own_worlds.py``'s ASGRL config for a world (deep skills in
lock-step over ``--n-envs`` envs, ε = 0.05 curve points every ``--eval-every`` env steps on
``--eval-episodes`` layouts) and records, read-only, what the learner did:

* per training episode: the env steps at its end, each skill run as (subgoal, skill, verdict)
  with the verdict ``reached``, ``failed`` or ``cut`` (the trainer stopped it: no verdict);
* per curve point: the point's success and per-landmark reach, each skill's training transitions
  (the clock of its linear ε schedule), ε and successes, the meta-controller's ε, and for every
  meta-state it has values in, those values and the greedy one among them (first on ties, as the
  meta-controller breaks them; a choice with no value yet counts 0 there and is not listed).

Nothing here draws from the learner's or the trainer's generators or changes the learner, so the
run is the one ``own_worlds.py`` trains with the same settings (``--eval-every`` only sets where
the curve is read; evaluations change no learner). Writes ``--out`` (command, commit, budget,
seeds first).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from own_worlds import WORLDS, asgrl_config
from provenance import command_line, write_result

from asg.learning.asgrl import lockstep, model_hints
from asg.learning.asgrl.trainer import train


def skill_clocks(learner: Any) -> dict[str, list[dict[str, Any]]]:
    """Per subgoal, each skill's training transitions, ε and successes."""
    return {skills.name: [{"steps": int(s.steps), "epsilon": round(float(s.epsilon), 4), "successes": int(s.successes)}
                          for s in skills.skills]
            for skills in learner.skill_sets}


def meta_choices(learner: Any) -> list[dict[str, Any]]:
    """Every meta-state with values: the state, its values and the greedy choice among them."""
    rows = []
    for state, row in learner.meta.q.items():
        actions = sorted(row, key=str)
        best, value = learner.meta.best(state, actions)
        rows.append({"state": str(state), "greedy": str(best), "greedy_value": round(float(value), 4),
                     "values": {str(a): round(float(v), 4) for a, v in sorted(row.items(), key=lambda kv: str(kv[0]))}})
    return sorted(rows, key=lambda r: r["state"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", choices=sorted(WORLDS), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--n-envs", type=int, default=16)
    parser.add_argument("--eval-every", type=int, default=12_500)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--learner", type=json.loads, default=None, metavar="JSON",
                        help="other fields of learner, as own_worlds.py's --learner")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.learner is not None and not isinstance(args.learner, dict):
        parser.error("--learner: expected a JSON object of learner fields")

    learner_fields = args.learner or {}
    overrides = {"eval_interval": args.eval_every, "curve_eval": "epsilon", "eval_episodes": args.eval_episodes,
                 "learner": {**learner_fields, "deep": {**learner_fields.get("deep", {}), "n_envs": args.n_envs}}}
    cfg, binding = asgrl_config(args.world, args.seed, args.steps, overrides)
    env_id = WORLDS[args.world][0]

    episodes: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    record, evaluate_point = model_hints.record, lockstep._evaluate
    steps = [0]

    def traced_record(evidence: Any, stats: Any) -> None:
        steps[0] += stats.steps
        runs = [[name, int(skill), "cut" if i >= len(stats.segments) else
                 ("reached" if stats.segments[i][2] is not None else "failed")]
                for i, (name, skill) in enumerate(stats.skills)]
        episodes.append({"env_steps": steps[0], "steps": stats.steps, "success": bool(stats.success), "runs": runs})
        record(evidence, stats)

    def traced_evaluate(lock: Any, loop: Any, count: Any) -> None:
        evaluate_point(lock, loop, count)
        learner = lock.learner
        points.append({"env_steps": int(learner.env_steps), "row": dict(loop.state.rows[-1]),
                       "skills": skill_clocks(learner), "meta_epsilon": round(float(learner.meta.epsilon), 4),
                       "meta": meta_choices(learner)})
        print(f"{learner.env_steps}: success {loop.state.rows[-1]['success_rate']}", flush=True)

    model_hints.record = traced_record  # type: ignore[assignment]
    lockstep._evaluate = traced_evaluate  # type: ignore[assignment]
    result = train(cfg, binding)
    data = {"world": args.world, "env_id": env_id, "n_envs": args.n_envs, "episodes": episodes, "points": points,
            "result": result.to_json()}
    write_result(args.out, data, command_line(__file__, argv), {"env_steps": args.steps}, [args.seed])
    print(f"{len(episodes)} training episodes, {len(points)} curve points; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
