"""Why a re-planning meta-controller does or does not Stop: every search of a re-plan episode in MuJoCo.

Runs ``--episodes`` re-plan episodes of one non-atomic program through ``inference.run_program``,
as ``asg eval --suite non-atomic --mode replan`` does (same start states for the same seed), and
prints one line per search (its ``on_search`` callback): the program, the calls made so far,
whether its ψ holds in the real state, the network's value, and for every action the search
visited its prior P, visits N and Q, then the action taken.
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
from asg.learning.npi.inference import FetchExecutor, OnSearch, policy_controller, run_program
from asg.learning.npi.mcts import Node, SearchContext, q_values
from asg.learning.npi.pipeline import CHECKPOINT, build_model, load_network


def describe(ctx: SearchContext, root: Node, action: int, indent: int) -> str:
    table = ctx.table
    q = q_values(root, ctx.config.q_estimate)
    shown = [a for a in np.flatnonzero(root.legal) if root.visits[a] > 0 or root.prior[a] >= 0.05 or a == table.stop]
    seen = " ".join(f"{table.label(a)}: P {root.prior[a]:.2f} N {root.visits[a]} Q {q[a]:.2f}" for a in shown)
    psi = table.post_holds(root.task, root.atoms)
    return (f"{' ' * indent}{table.names[root.task]} after {root.depth} calls, ψ {psi}, V {root.value:.2f} | "
            f"{seen} -> {table.label(action)}")


def printer(ctx: SearchContext) -> OnSearch:
    """An ``on_search`` callback printing ``describe``'s line, indented by the call level."""
    return lambda root, action, level: print(describe(ctx, root, action, 2 * level))


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
        ctx = SearchContext(model, net.snapshot(), search, rng)
        record = run_program("replan", task, real, ctx, on_search=None if args.quiet else printer(ctx))
        wins += record.success
        if not args.quiet:
            print(f"episode {k}: {'success' if record.success else 'failure'}")
    print(f"{args.program}: {wins}/{args.episodes} (stop_at_expansion {search.stop_at_expansion})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
