"""How often a random walk carries a key it holds to the door the key opens (issues 39, 40).

A deep skill whose landmark is "the door is open" starts with the key in hand, and until its first
success it acts by ε-greedy steps that are nearly all random (ε 0.7-0.9 at the door stage,
docs/asgrl.md). Its first success is found by such a walk. This measures that chance on MiniGrid's
own worlds, per walk of the world's own episode length: each layout is reset as the env draws it,
the key is put in the agent's hand where it starts (the box of KeyInBox emptied into it), and the
walk is uniform over MiniGrid's seven actions. The comparator is the same walk without the `drop`
action, the one step of the seven that undoes the landmark before it: a metric that shows what the
drop costs, not a policy any learner uses.

    python benchmarks/carry_walk.py [--layouts 300] [--seed 0] [--out FILE]

Prints, per world and walk, the share of walks that opened the door (95 % Wilson interval), the
median steps of those that did, and the mean steps until the walk first let go of the key.

With ``learner.protect_landmarks`` a skill's run ends where its needed landmark, the key in hand,
turns false. The same walks scored that way (``protected``): the share that opened the door before
first letting go, and the doors opened per 1,000 steps walked, each walk cut where it let go,
against the uncut walk's rate. The cut walk's steps leave out what a learner pays to hold the key
again: under the switch the episode ends there, and the next one starts from the first landmark.
"""
from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np
from provenance import command_line, write_result
from random_walk import wilson

DROP = 4  # minigrid.core.actions.Actions.drop


def _carry(env: Any, key: Any) -> None:
    """Put ``key`` (on the grid, or inside a box on it) in the agent's hand, as ``pickup`` does."""
    for i, cell in enumerate(env.grid.grid):
        if cell is key or (cell is not None and getattr(cell, "contains", None) is key):
            env.grid.grid[i] = None
    key.cur_pos = np.array([-1, -1])
    env.carrying = key


def keyinbox(env: Any) -> Any:
    """BabyAI-KeyInBox-v0: the key the box holds, and the (locked) door."""
    from minigrid.core.world_object import Box, Door

    box = next(c for c in env.grid.grid if isinstance(c, Box))
    door = next(c for c in env.grid.grid if isinstance(c, Door))
    _carry(env, box.contains)
    return door


def lockedroom(env: Any) -> Any:
    """MiniGrid-LockedRoom-v0: the one key, and the locked door of its colour."""
    from minigrid.core.world_object import Door, Key

    key = next(c for c in env.grid.grid if isinstance(c, Key))
    door = next(c for c in env.grid.grid if isinstance(c, Door) and c.is_locked)
    _carry(env, key)
    return door


def unlocktounlock(env: Any) -> Any:
    """BabyAI-UnlockToUnlock-v0: key B (in the agent's own room), and door B of its colour."""
    from minigrid.core.world_object import Door, Key

    room = env.room_from_pos(*env.agent_pos)
    key = next(c for c in env.grid.grid if isinstance(c, Key) and env.room_from_pos(*c.cur_pos) is room)
    door = next(c for c in env.grid.grid if isinstance(c, Door) and c.color == key.color)
    _carry(env, key)
    return door


WORLDS = {"keyinbox": ("BabyAI-KeyInBox-v0", keyinbox), "lockedroom": ("MiniGrid-LockedRoom-v0", lockedroom),
          "unlocktounlock": ("BabyAI-UnlockToUnlock-v0", unlocktounlock)}


def walk(env_id: str, setup: Any, layout: int, actions: list[int],
         rng: np.random.Generator) -> tuple[int | None, int, int]:
    """One walk: (steps until the door opened, or None; steps until the key first left the hand,
    the env's max_steps if never; steps walked)."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the ids)

    env = gym.make(env_id).unwrapped
    env.reset(seed=layout)
    door = setup(env)
    let_go = env.max_steps
    for t in range(1, env.max_steps + 1):
        env.step(int(rng.choice(actions)))
        if env.carrying is None and let_go == env.max_steps:
            let_go = t
        if door.is_open:
            return t, let_go, t
    return None, let_go, env.max_steps


def measure(world: str, layouts: int, seed: int) -> dict[str, Any]:
    env_id, setup = WORLDS[world]
    out: dict[str, Any] = {"env": env_id}
    for name, actions in (("uniform", list(range(7))), ("uniform_without_drop", [a for a in range(7) if a != DROP])):
        rng = np.random.default_rng([seed, layouts])
        runs = [walk(env_id, setup, seed * 100_000 + i, actions, rng) for i in range(layouts)]
        opened = [t for t, _, _ in runs if t is not None]
        low, high = wilson(len(opened), layouts)
        out[name] = {"opened": len(opened), "walks": layouts, "rate": round(len(opened) / layouts, 4),
                     "wilson_95": [round(low, 4), round(high, 4)],
                     "median_steps_of_opened": statistics.median(opened) if opened else None,
                     "mean_steps_to_let_go": round(statistics.fmean(g for _, g, _ in runs), 1),
                     "opened_per_1000_steps": round(1000 * len(opened) / sum(n for _, _, n in runs), 2)}
        if name == "uniform":  # cut where the key first leaves the hand (a walk without drop never lets go)
            cut = [t if t is not None and t <= g else g for t, g, _ in runs]  # steps until open or let go
            kept = [t for t, g, _ in runs if t is not None and t <= g]
            low, high = wilson(len(kept), layouts)
            out["protected"] = {"opened": len(kept), "walks": layouts, "rate": round(len(kept) / layouts, 4),
                                "wilson_95": [round(low, 4), round(high, 4)],
                                "mean_steps_per_walk": round(statistics.fmean(cut), 1),
                                "opened_per_1000_steps": round(1000 * len(kept) / sum(cut), 2)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worlds", default=",".join(WORLDS))
    parser.add_argument("--layouts", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/own_worlds/carry_walk.json")
    args = parser.parse_args(argv)
    worlds = args.worlds.split(",")
    unknown = [w for w in worlds if w not in WORLDS]
    if unknown or args.layouts < 1:
        parser.error(f"--worlds: unknown {unknown}, expected some of {sorted(WORLDS)}" if unknown
                     else "--layouts: expected >= 1")
    rows = {}
    for world in worlds:
        rows[world] = measure(world, args.layouts, args.seed)
        for name in ("uniform", "uniform_without_drop"):
            r = rows[world][name]
            print(f"{world:15s} {name:21s} opened {r['rate']:.3f} {r['wilson_95']}, median steps "
                  f"{r['median_steps_of_opened']}, lets go after {r['mean_steps_to_let_go']}, "
                  f"{r['opened_per_1000_steps']} per 1000 steps")
        r = rows[world]["protected"]
        print(f"{world:15s} {'protected':21s} opened {r['rate']:.3f} {r['wilson_95']} before letting go, "
              f"{r['mean_steps_per_walk']} steps a walk, {r['opened_per_1000_steps']} per 1000 steps")
    write_result(args.out, {"worlds": rows}, command_line(__file__, argv),
                 {"layouts": args.layouts, "steps_per_walk": "the env's max_steps"}, [args.seed])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
