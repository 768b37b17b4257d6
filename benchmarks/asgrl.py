"""ASGRL and its baselines over seeds: the targets of the learning issue, measured.

For every domain x method it trains seeds 0..N-1 with the resolved defaults (``asg train``'s),
evaluates the frozen greedy policy, and prints one table per domain: mean success ± s.e.m.,
seeds at 1.0, median env steps to the first evaluation at 1.0, wall time, and for failing runs
what the final greedy episode did (subgoals reached, and which labeler atoms it ever made true:
the paper's failure reasons, e.g. Mario's ladder route without the hidden key).

    python benchmarks/asgrl.py --domains mario --methods asgrl --seeds 10
    python benchmarks/asgrl.py --domains household-v1,minecraft --methods asgrl,landmark-hrl,plan-hrl \\
        --seeds 3 --out runs/bench --json benchmarks/results/asgrl.json

Runs are sequential (two cores); every run directory lands under ``--out`` when given.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from asg.learning.asgrl.experiments import format_table, run_grid, summarize
from asg.learning.registry import METHODS, bind_domain

# Atoms outside the paper's models that explain a route (Mario, Household, MineCraft labelers).
DIAGNOSTIC = ("(in-tube)", "(has-hidden-key)", "(ladder-broken)", "(holding red)", "(holding yellow)",
              "(holding green)", "(charged)", "(battery-empty)", "(has-two-raw-wood)", "(kiln-used)")


def _why(result: dict) -> str:
    episode = result.get("final_episode") or {}
    reached = " ".join(episode.get("reached", [])) or "-"
    seen = " ".join(a for a in episode.get("seen", []) if a in DIAGNOSTIC) or "-"
    return f"reached {reached}; route atoms {seen}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="mario", help="comma-separated ASGRL domains")
    parser.add_argument("--methods", default="asgrl", help=f"comma-separated, from {', '.join(METHODS)}")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="env-step budget (default 500000)")
    parser.add_argument("--out", type=Path, default=None, help="keep run directories here")
    parser.add_argument("--json", type=Path, default=None, help="write all results here")
    args = parser.parse_args(argv)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    everything: dict[str, dict] = {}
    for domain in args.domains.split(","):
        binding = bind_domain(domain)
        runs = []
        for method in args.methods.split(","):
            start = time.perf_counter()
            out = args.out / domain if args.out else None
            grid = run_grid(domain, [method], seeds, out, steps=args.steps, binding=binding)
            for run in grid:
                r = run.result
                print(f"{domain:13s} {method:17s} seed {run.seed:2d}: success {r.success_rate:.2f} "
                      f"first@{r.steps_to_success} steps {r.env_steps} wall {r.wall_seconds:.1f}s "
                      f"[{r.status}] {_why(r.to_json()) if r.success_rate < 1.0 else ''}", flush=True)
            print(f"  ({method}: {time.perf_counter() - start:.0f} s)", flush=True)
            runs.extend(grid)
        summary = summarize(runs)
        print(format_table(domain, summary), flush=True)
        everything[domain] = {"summary": summary, "runs": [r.result.to_json() for r in runs]}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(everything, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
