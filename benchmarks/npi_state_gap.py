"""How far the model's states are from the real ones where the meta-controller reads them (issue 36).

The meta-controller is trained in imagination: every state it sees in training is a start layout
or the learned behaviour model's prediction. In MuJoCo it reads real states. For ``--episodes``
starts of one non-atomic program (the start states of ``asg eval --suite non-atomic``, seed 0),
this runs the plan the search makes in the model from the real start (the ``plan`` mode's call
tree), and steps its atomic calls in MuJoCo (the goal policy ``--policy``) and in the model side by
side. After each of the program's own calls (a callee's atomic calls run inside it), where its
network reads the state next, it compares the two states:

- per observation group (block positions, gripper, fingers, their velocities, the blocks'
  relative positions, rotations and velocities), the mean absolute difference in units of the
  meta-controller's own normaliser (``state_std``, what its encoder divides by);
- the program's network policy at that point of the trace, fed the real states or the model's
  (each with the LSTM state its own inputs give): the share of points where the argmax over the
  legal calls differs, and the mean total-variation distance between the two policies.

A network that reads only what the model predicts well (``net.state_view`` "blocks") should show
no disagreement the dimensions it ignores could cause; the full view shows what they do. The
trivial peer is the model against itself: 0 by construction, so any disagreement is the gap.

    python benchmarks/npi_state_gap.py --checkpoint DIR --behaviour-model B.npz --policy P.npz \
        --program Clean_And_Stack [--episodes 20] [--out FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from provenance import command_line, write_result

from asg.envs.fetch import layout
from asg.learning import fetch_programs as fp
from asg.learning.npi.inference import FetchExecutor, policy_controller
from asg.learning.npi.mcts import SearchContext, Trace, execute, masked_priors
from asg.learning.npi.pipeline import CHECKPOINT, build_model, load_network

GROUPS = ("BLOCK_POS", "GRIP_POS", "FINGER_POS", "GRIP_VEL", "FINGER_VEL", "BLOCK_REL_POS", "BLOCK_EULER",
          "BLOCK_VELP", "BLOCK_VELR")


def atomic_steps(trace: Trace, table) -> list[int]:
    """The atomic calls of a planned call tree, in order."""
    out: list[int] = []
    for step in trace.steps:
        if step.call is not None:
            out.extend(atomic_steps(step.call, table))
        elif table.is_atomic(step.action):
            out.append(step.action)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="meta-controller file or run folder")
    parser.add_argument("--behaviour-model", type=Path, required=True)
    parser.add_argument("--policy", type=Path, required=True, help="goal policy (.npz) that runs the atomic calls")
    parser.add_argument("--program", required=True, help="a non-atomic program, e.g. Clean_And_Stack")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    model = build_model("learned", fp.world_model("learned", args.behaviour_model))
    path = args.checkpoint / CHECKPOINT if args.checkpoint.is_dir() else args.checkpoint
    net, config = load_network(path, model)
    snap, table = net.snapshot(), model.table
    if args.program not in table.names or table.is_atomic(table.index(args.program)):
        parser.error(f"--program: not a non-atomic program of the library: {args.program!r}")
    task = table.index(args.program)
    row = table.task_row(task)
    std = net.state_std.numpy().astype(float)  # floored at 1e-2 when the network was built
    real = FetchExecutor(controller=policy_controller(args.policy))
    diffs, disagree, tv = [], [], []
    for k in range(args.episodes):
        rng = np.random.default_rng([0, task, k])  # the start states of pipeline.evaluate_programs
        start = real.reset(int(rng.integers(2**31)))
        ctx = SearchContext(model, snap, config.search, rng)
        plan = execute(task, start, ctx, explore=False)
        imagined = start.copy()
        h_r, c_r = snap.initial_hidden()
        _, _, h_r, c_r = snap.evaluate(start, row, h_r, c_r)
        h_m, c_m = h_r, c_r
        depth = 0
        for step in plan.steps:  # the program's own calls; a callee's atomic calls run inside it
            if step.call is None and not table.is_atomic(step.action):
                break  # Stop
            depth += 1
            for program in atomic_steps(step.call, table) if step.call is not None else [step.action]:
                seen = real.run_atomic(program)
                imagined = model.step(imagined, program)
            diffs.append(np.abs(seen - imagined) / std)
            legal = table.legal(task, model.atoms(imagined), depth, ctx.call_limit(task), config.search.psi_prunings)
            logits_r, _, h_r, c_r = snap.evaluate(seen, row, h_r, c_r)
            logits_m, _, h_m, c_m = snap.evaluate(imagined, row, h_m, c_m)
            p_r = masked_priors(np.asarray(logits_r, dtype=float), legal)
            p_m = masked_priors(np.asarray(logits_m, dtype=float), legal)
            disagree.append(int(np.argmax(p_r) != np.argmax(p_m)))
            tv.append(0.5 * float(np.abs(p_r - p_m).sum()))
    gap = np.mean(diffs, axis=0)
    groups = {name: round(float(gap[getattr(layout, name)].mean()), 3) for name in GROUPS}
    result = {"program": args.program, "checkpoint": str(args.checkpoint), "state_view": config.net.state_view,
              "policy": str(args.policy), "behaviour_model": str(args.behaviour_model), "points": len(tv),
              "gap_in_normaliser_std": groups, "argmax_disagreement": round(float(np.mean(disagree)), 3),
              "policy_total_variation": round(float(np.mean(tv)), 3)}
    for name, value in groups.items():
        print(f"{name:14s} {value:6.2f} std")
    print(f"{args.program} ({config.net.state_view} view): the network's call differs between the real state and "
          f"the model's at {result['argmax_disagreement']:.2f} of {len(tv)} points, total variation "
          f"{result['policy_total_variation']:.2f}")
    if args.out is not None:
        write_result(args.out, result, command_line(__file__, argv), {"episodes": args.episodes}, [0])
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
