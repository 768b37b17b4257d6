"""Why a re-planning meta-controller does or does not Stop: every search of a re-plan episode in MuJoCo.

Runs ``--episodes`` re-plan episodes of one non-atomic program exactly as ``asg eval --suite
non-atomic --mode replan`` does (same start states for the same seed), and prints one line per
search: the program, the calls made so far, whether its ψ holds in the real state, the network's
value, and for every action the search visited its prior P, visits N and Q, then the action taken.
Ends with the success count. ``--stop-at-expansion on|off`` overrides the saved search switch.

    python benchmarks/replan_stop_trace.py --checkpoint runs/mc-learned-stop --program Clean_Table \
        [--episodes 2] [--stop-at-expansion on|off] [--quiet]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from asg.learning import fetch_programs as fp
from asg.learning.npi.inference import CallRecord, Executor, FetchExecutor, policy_controller
from asg.learning.npi.mcts import SearchContext, most_visited, new_root, q_values, run_simulations
from asg.learning.npi.pipeline import CHECKPOINT, build_model, load_network


def describe(ctx: SearchContext, root, action: int, indent: int) -> str:
    table = ctx.table
    q = q_values(root, ctx.config.q_estimate)
    shown = [a for a in np.flatnonzero(root.legal) if root.visits[a] > 0 or root.prior[a] >= 0.05 or a == table.stop]
    seen = " ".join(f"{table.label(a)}: P {root.prior[a]:.2f} N {root.visits[a]} Q {q[a]:.2f}" for a in shown)
    psi = table.post_holds(root.task, root.atoms)
    return (f"{' ' * indent}{table.names[root.task]} after {root.depth} calls, ψ {psi}, V {root.value:.2f} | "
            f"{seen} -> {table.label(action)}")


def replan(task: int, executor: Executor, ctx: SearchContext, quiet: bool, indent: int = 0) -> CallRecord:
    """``inference._run_replan`` with a line per search."""
    table = ctx.table
    h, c = ctx.evaluator.initial_hidden()
    calls = []
    for depth in range(ctx.call_limit(task) + 1):
        root = new_root(task, executor.observe(), ctx, False, h, c, depth)
        ctx.sub_traces.clear()
        run_simulations(root, ctx.config.simulations_exploit, ctx, False)
        action = most_visited(root)
        if not quiet:
            print(describe(ctx, root, action, indent))
        h, c = root.h, root.c
        if action == table.stop:
            break
        if table.is_atomic(action):
            state = executor.run_atomic(action)
            calls.append(CallRecord(table.names[action], True, table.post_holds(action, ctx.model.atoms(state))))
        else:
            calls.append(replan(action, executor, ctx, quiet, indent + 2))
    ok = table.post_holds(task, ctx.model.atoms(executor.observe()))
    return CallRecord(table.names[task], False, ok, tuple(calls))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="meta-controller file or run folder")
    parser.add_argument("--program", required=True)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-at-expansion", choices=["on", "off"])
    parser.add_argument("--quiet", action="store_true", help="only the success count")
    args = parser.parse_args(argv)
    model = build_model("learned", fp.world_model("learned"))
    path = args.checkpoint / CHECKPOINT if args.checkpoint.is_dir() else args.checkpoint
    net, config = load_network(path, model)
    search = config.search
    if args.stop_at_expansion is not None:
        search = replace(search, stop_at_expansion=args.stop_at_expansion == "on")
    task = model.table.index(args.program)
    real = FetchExecutor(controller=policy_controller(fp.shipped("goal-policy")))
    wins = 0
    for k in range(args.episodes):
        rng = np.random.default_rng([args.seed, task, k])  # the start states of pipeline.evaluate_programs
        real.reset(int(rng.integers(2**31)))
        record = replan(task, real, SearchContext(model, net.snapshot(), search, rng), args.quiet)
        wins += record.success
        if not args.quiet:
            print(f"episode {k}: {'success' if record.success else 'failure'}")
    print(f"{args.program}: {wins}/{args.episodes} (stop_at_expansion {search.stop_at_expansion})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
