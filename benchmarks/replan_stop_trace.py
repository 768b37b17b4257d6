"""Why a re-planning meta-controller does or does not Stop: every search of a re-plan episode in MuJoCo.

Runs ``--episodes`` re-plan episodes of one non-atomic program through ``inference.run_program``,
as ``asg eval --suite non-atomic --mode replan`` does (same start states for the same seed), and
prints one line per search (its ``on_search`` callback): the program, the calls made so far,
whether its ψ holds in the real state, the network's value, and for every action the search
visited its prior P, visits N and Q, then the action taken.
Ends with the success count. ``--stop-at-expansion on|off`` overrides the saved search switch.
``--mode plan`` runs the plan mode instead (one search from the start state in the model, its atomic
calls run open-loop; no per-search lines), to set its calls beside re-plan's on the same starts.
``--policy`` and ``--behaviour-model`` take a stage's files in place of the shipped ones.

``--out FILE`` writes each episode's outcome (``episode_success``) and its atomic calls in order,
each with whether its ψ held in MuJoCo, for a Stack (``Stack_a_b``: a onto b) the height of the
tower it goes onto (b's level by the labeler's ``on`` atoms before the call), for a Move the blocks
already in its zone, and the tallest tower after it; per atomic family the ψ rate of its first,
second, third... call in an episode; and the ψ rate of the Stack calls by the height of the tower
they go onto, in the states the policy's own earlier calls left (the levels Stack_All_Blocks must
pass in turn; ``fetch_stack_end.py`` counts the same from chained starts),
and of the Moves by the blocks already in the zone, each split by whether the call before held its ψ;
and the Moves that left both of their zone's slots taken by one block (landed between the slots, so
the zone's next Move has no free slot and cannot run).

    python benchmarks/replan_stop_trace.py --checkpoint runs/mc-learned-stop --program Clean_Table \
        [--episodes 2] [--stop-at-expansion on|off] [--quiet] [--policy P --behaviour-model B] [--out FILE]
        [--mode replan|plan]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from provenance import command_line, write_result

from asg.envs.fetch import N_BLOCKS, block_index, library_program, state_atoms
from asg.envs.fetch.layout import BLOCK_POS, TABLE_TOP
from asg.learning import fetch_programs as fp
from asg.learning.npi.inference import CallRecord, FetchExecutor, OnSearch, policy_controller, run_program
from asg.learning.npi.mcts import Node, SearchContext, q_values
from asg.learning.npi.pipeline import CHECKPOINT, build_model, load_network
from asg.planning.task import Atom


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


def heights(atoms: frozenset) -> dict[str, int]:
    """Each block's level by the labeler's ``on`` atoms (1: not on another block)."""
    below = {a.args[0]: a.args[1] for a in atoms if a.predicate == "on"}
    def height(block: str) -> int:
        return 1 + height(below[block]) if block in below else 1
    return {f"b{k}": height(f"b{k}") for k in range(N_BLOCKS)}


def blocks_in_zone(atoms: frozenset, zone: str, other_than: str | None = None) -> int:
    """How many blocks (other than ``other_than``) the labeler's ``in-zone`` atoms put in ``zone``."""
    return sum(a.predicate == "in-zone" and a.args[1] == zone and a.args[0] != other_than for a in atoms)


class TowerExecutor(FetchExecutor):
    """``FetchExecutor`` noting the setting of every atomic call: for a Stack the height of the tower
    its block goes onto (the level of its lower block before the call), for a Move the blocks already
    in its zone; and what the call left (see ``failed_calls``)."""

    def __init__(self, controller: object) -> None:
        super().__init__(controller=controller)
        self.settings: list[dict[str, int | float | bool | None]] = []

    def run_atomic(self, program: int) -> np.ndarray:
        prog, before = library_program(self.names[program]), state_atoms(self.observe())
        moved, where = prog.arguments  # Stack: the lower block; Move_To_Zone: the zone
        onto = heights(before)[where] if prog.family == "Stack" else None
        zone = blocks_in_zone(before, where, other_than=moved) if prog.family == "Move_To_Zone" else None
        run = self.run(program)
        after = state_atoms(run.final)
        block = slice(3 * block_index(moved), 3 * block_index(moved) + 3)
        off = float(np.linalg.norm(run.final[block] - self.env.goal[block])) if run.applicable else None
        fallen = int(np.sum(run.final[BLOCK_POS].reshape(N_BLOCKS, 3)[:, 2] < TABLE_TOP))  # centres below the top
        blocked = None  # the zone full (both slots taken) with fewer blocks in it: its next Move has none
        if prog.family == "Move_To_Zone":
            blocked = Atom("zone-full", (where,)) in after and blocks_in_zone(after, where) < 2
        self.settings.append({"onto_tower": onto, "zone_before": zone, "tallest_after": max(heights(after).values()),
                              "applicable": run.applicable, "goal_test": run.success,
                              "held_after": any(a.predicate == "holding" for a in after),
                              "moved_off_m": None if off is None else round(off, 3), "off_table_after": fallen,
                              "zone_blocked_after": blocked})
        return run.final


def atomic_calls(record: CallRecord) -> list[tuple[str, bool]]:
    """The atomic calls of a call tree in the order they ran, each with whether its ψ held."""
    if record.atomic:
        return [(record.program, record.success)]
    return [call for sub in record.calls for call in atomic_calls(sub)]


def call_summary(episodes: list[list[dict]]) -> dict[str, list[dict]]:
    """Per atomic family (the name's part before its arguments), the n-th call of an episode:
    how many episodes made it and the share whose ψ held."""
    counts: dict[str, list[list[int]]] = {}
    for calls in episodes:
        seen: dict[str, int] = {}
        for call in calls:
            name, ok = call["program"], call["psi"]
            family = "Stack" if name.startswith("Stack") else "Move_To_Zone"
            n = seen[family] = seen.get(family, 0) + 1
            rows = counts.setdefault(family, [])
            if len(rows) < n:
                rows.append([0, 0])
            rows[n - 1][0] += 1
            rows[n - 1][1] += ok
    return {family: [{"call": n + 1, "episodes": made, "psi_rate": round(held / made, 3)}
                     for n, (made, held) in enumerate(rows)] for family, rows in counts.items()}


def by_setting(episodes: list[list[dict]], key: str) -> list[dict]:
    """The calls with a ``key`` setting (``onto_tower`` for Stacks, ``zone_before`` for Moves) by its
    value and by what came before them (the episode's ``first`` call, after a call whose ψ held,
    ``after_psi``, or after one whose ψ failed, ``after_failure``): how many and the share whose ψ held."""
    counts: dict[tuple[int, str], list[int]] = {}
    for calls in episodes:
        for k, call in enumerate(calls):
            if call[key] is None:
                continue
            before = "first" if k == 0 else "after_psi" if calls[k - 1]["psi"] else "after_failure"
            for group in ((call[key], "all"), (call[key], before)):
                row = counts.setdefault(group, [0, 0])
                row[0] += 1
                row[1] += call["psi"]
    order = {"all": 0, "first": 1, "after_psi": 2, "after_failure": 3}
    return [{key: h, "before": b, "calls": n, "psi_rate": round(ok / n, 3)}
            for (h, b), (n, ok) in sorted(counts.items(), key=lambda item: (item[0][0], order[item[0][1]]))]


def failed_calls(episodes: list[list[dict]]) -> dict[str, dict]:
    """Per atomic family, the calls whose ψ failed: how many, and the shares whose φ failed in the
    real state (the call ran no step), whose goal test passed all the same, that ended holding a block;
    and the quartiles of how far the moved block ended from its target."""
    out = {}
    for family in ("Stack", "Move_To_Zone"):
        failed = [c for calls in episodes for c in calls if c["program"].startswith(family) and not c["psi"]]
        if failed:
            counts = {"not_applicable": sum(not c["applicable"] for c in failed),
                      "goal_test": sum(c["goal_test"] for c in failed),
                      "held_after": sum(c["held_after"] for c in failed)}
            out[family] = {"calls": len(failed), **{f"{k}_rate": round(v / len(failed), 3) for k, v in counts.items()}}
            off = [c["moved_off_m"] for c in failed if c["moved_off_m"] is not None]
            out[family]["moved_off_quartiles_m"] = np.percentile(off, [25, 50, 75]).round(3).tolist() if off else None
    return out


def blocked_zones(episodes: list[list[dict]]) -> dict[str, float | int]:
    """The Moves that left both of their zone's slots taken by a single block (it landed between
    them; ``layout.SLOT_CLEARANCE``), and the share of episodes with one."""
    moves = [c for calls in episodes for c in calls if c.get("zone_blocked_after") is not None]
    blocked = [any(c.get("zone_blocked_after") for c in calls) for calls in episodes]
    return {"moves": len(moves), "blocked": sum(c["zone_blocked_after"] for c in moves),
            "episodes_rate": round(float(np.mean(blocked)), 3) if episodes else 0.0}


def off_table(episodes: list[list[dict]]) -> dict[str, float | int]:
    """The share of episodes in which a block fell off the table (its centre below the table top
    after some call)."""
    fell = [any(c["off_table_after"] for c in calls) for calls in episodes]
    return {"episodes": len(episodes), "rate": round(float(np.mean(fell)), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="meta-controller file or run folder")
    parser.add_argument("--program", required=True)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-at-expansion", choices=["on", "off"])
    parser.add_argument("--quiet", action="store_true", help="only the success count")
    parser.add_argument("--policy", type=Path, help="goal policy (.npz; default: the shipped one)")
    parser.add_argument("--behaviour-model", type=Path, help="behaviour model (.npz; default: the shipped one)")
    parser.add_argument("--out", type=Path, help="write the episodes' atomic calls and their summary here (JSON)")
    parser.add_argument("--mode", choices=["replan", "plan"], default="replan",
                        help="inference mode (plan: one search from the start, its calls run open-loop)")
    args = parser.parse_args(argv)
    model = build_model("learned", fp.world_model("learned", args.behaviour_model))
    path = args.checkpoint / CHECKPOINT if args.checkpoint.is_dir() else args.checkpoint
    net, config = load_network(path, model)
    search = config.search
    if args.stop_at_expansion is not None:
        search = replace(search, stop_at_expansion=args.stop_at_expansion == "on")
    task = model.table.index(args.program)
    real = TowerExecutor(policy_controller(args.policy or fp.shipped("goal-policy")))
    wins, episodes, outcomes = 0, [], []
    for k in range(args.episodes):
        rng = np.random.default_rng([args.seed, task, k])  # the start states of pipeline.evaluate_programs
        real.reset(int(rng.integers(2**31)))
        real.settings.clear()
        ctx = SearchContext(model, net.snapshot(), search, rng)
        record = run_program(args.mode, task, real, ctx, on_search=None if args.quiet else printer(ctx))
        wins += record.success
        outcomes.append(record.success)
        episodes.append([{"program": name, "psi": ok, **setting}
                         for (name, ok), setting in zip(atomic_calls(record), real.settings, strict=True)])
        if not args.quiet:
            print(f"episode {k}: {'success' if record.success else 'failure'}")
    print(f"{args.program}: {wins}/{args.episodes} ({args.mode}, stop_at_expansion {search.stop_at_expansion})")
    summary = call_summary(episodes)
    by_tower, by_zone = by_setting(episodes, "onto_tower"), by_setting(episodes, "zone_before")
    for family, rows in summary.items():
        print(f"{family}: " + ", ".join(f"call {r['call']} ψ {r['psi_rate']:.2f} of {r['episodes']}" for r in rows))
    for r in by_tower:
        print(f"Stack onto a tower of {r['onto_tower']}, {r['before']}: ψ {r['psi_rate']:.2f} of {r['calls']}")
    for r in by_zone:
        print(f"Move into a zone holding {r['zone_before']}, {r['before']}: ψ {r['psi_rate']:.2f} of {r['calls']}")
    failures, fell, blocked = failed_calls(episodes), off_table(episodes), blocked_zones(episodes)
    for family, f in failures.items():
        print(f"{family} calls whose ψ failed: {f['calls']}; φ failed (no step run) {f['not_applicable_rate']:.2f}, "
              f"goal test passed {f['goal_test_rate']:.2f}, ended holding a block {f['held_after_rate']:.2f}, "
              f"the block this far from its target (quartiles) {f['moved_off_quartiles_m']} m")
    print(f"episodes in which a block fell off the table: {fell['rate']:.2f}")
    print(f"Moves that left their zone's two slots taken by one block: {blocked['blocked']} of {blocked['moves']} "
          f"(episodes with one: {blocked['episodes_rate']:.2f})")
    if args.out is not None:
        result = {"program": args.program, "mode": args.mode, "checkpoint": str(args.checkpoint),
                  "policy": str(args.policy), "behaviour_model": str(args.behaviour_model), "success": wins,
                  "episode_success": outcomes, "calls_by_family": summary,
                  "stacks_by_onto_tower": by_tower, "moves_by_zone_before": by_zone,
                  "failed_calls": {**failures, "episodes_with_a_block_off_the_table": fell},
                  "moves_leaving_the_zone_blocked": blocked,
                  "episodes": episodes}
        write_result(args.out, result, command_line(__file__, argv), {"episodes": args.episodes}, [args.seed])
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
