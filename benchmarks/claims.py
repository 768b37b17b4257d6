"""The README's status table, checked against the committed results it links.

Each :class:`Claim` reads one committed results file and renders the figure the README quotes
from it, with its setting (budget, seeds, episodes) where the file gives them. ``check`` says
where the README's table differs: a claim whose text is not in its row, or a row that does not
link the claim's file. ``unclaimed_numbers`` lists every number in the table's figure cells that
no claim renders, so no figure can stand there unread. ``tests/test_docs.py`` runs both.

    python benchmarks/claims.py            # the claims, and any fault (exit 1 on a fault)
"""
from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HEADING = "## What works"
TABLE2 = ("Stack_All_To_Zone", "Move_All_To_Zone", "Stack_All_Blocks", "Clean_Table", "Clean_And_Stack")
WORLDS = ("household-v1", "household-v2", "minecraft", "mario")


@dataclass(frozen=True)
class Claim:
    """A figure of the README's status table: the row it stands in, the file it comes from, and
    how it is written from that file's JSON."""

    row: str
    file: str
    render: Callable[[Any], str]

    def value(self, root: Path = ROOT) -> str:
        """The claim's text, read afresh from ``root / file`` (JSON, or a CSV as a list of rows)."""
        text = (root / self.file).read_text()
        return self.render(list(csv.DictReader(io.StringIO(text))) if self.file.endswith(".csv") else json.loads(text))


def _blocked_failures(d: dict[str, Any]) -> str:
    """``replan_stop_trace.py``'s calls: the failed episodes with a Move that left its zone's two slots
    taken by one block."""
    failed = [calls for ok, calls in zip(d["episode_success"], d["episodes"]) if not ok]
    blocked = sum(any(c.get("zone_blocked_after") for c in calls) for calls in failed)
    return f"in {blocked} of the {len(failed)} failed {d['program']} episodes"


def _tower_sites(d: dict[str, Any]) -> str:
    """``fetch_tower_sites.py``: how often a tower of four stood, built in place and in the zones, and the share of
    its last Stacks whose ψ the behaviour model foresaw."""
    chains = d["chains"]
    zones = sorted(chains[z]["completed_rate"] for z in ("orange", "blue"))
    foresee = sorted(chain["calls"][-1]["model_psi_rate"] for chain in chains.values())
    return (f"a tower of four built in place stands {_two(chains['table']['completed_rate'])} of the time, in a zone "
            f"{_two(zones[0])}-{_two(zones[1])}, and the behaviour model foresees ψ for {_two(foresee[0])}-"
            f"{_two(foresee[-1])} of its last Stacks")


def _two(x: float) -> str:
    """A success rate as the result files' tables print it: 0.995 stays, 1.0 is 1.00."""
    text = f"{x:.3f}".rstrip("0")
    return text + "0" * max(0, 4 - len(text))


def _steps(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def _solved(summary: list[dict[str, Any]], method: str) -> str:
    row = next(s for s in summary if s["method"] == method)
    return f"{row['seeds_succeeding']}/{row['seeds']}"


def _factories_agree(data: dict[str, Any]) -> str:
    """``benchmarks/landmarks.py``'s summary: tasks identical to FD's of those compared, per factory."""
    return ", ".join(f"{f} {data['summary'][f]['both_equal']}/{data['summary'][f]['compared']}"
                     for f in ("hm", "rhw", "zg"))


def _process_ratios(data: dict[str, Any]) -> str:
    return ", ".join(f"{f} {data['summary'][f]['median_process_ratio']:.2f}" for f in ("hm", "rhw", "zg"))


def _suite_read(data: dict[str, Any]) -> str:
    return f"{data['summary']['asg_read']}/{data['summary']['tasks']} tasks"


def _figure3(data: dict[str, Any], method: str) -> str:
    return ", ".join(_solved(data["summary"][world], method) for world in WORLDS)


def _all_worlds(data: dict[str, Any], key: str = "summary") -> str:
    rows = [table[0] for table in data[key].values()]
    return f"{sum(r['seeds_succeeding'] for r in rows)}/{sum(r['seeds'] for r in rows)}"


def _listed(command: str, option: str) -> list[str]:
    """The comma-separated values of ``option`` in a command line."""
    found = re.search(rf"{option} (\S+)", command)
    return found.group(1).split(",") if found else []


def _own_world(data: dict[str, Any], world: str, method: str) -> str:
    row = next(r for r in data["rows"] if r["world"] == world and r["method"] == method)
    flag = "--steps" if method == "asgrl" else "--ppo-steps"
    command = next(c for c in data["commands"] if world in _listed(c, "--worlds") and method in _listed(c, "--methods"))
    budget = int(re.search(rf"{flag} (\d+)", command).group(1))
    return f"{_two(row['final_success_mean'])} ({row['seeds']} seeds, {_steps(budget)} steps)"


def _repaired_vs_omitted(data: dict[str, Any], world: str) -> str:
    rows = {r["world"]: r for r in data["rows"] if r["method"] == "asgrl"}
    omitted, repaired = rows[world], rows[f"{world}-repaired"]
    return (f"median {repaired['median_steps_to_0.9']} env steps to 0.9 against {omitted['median_steps_to_0.9']} "
            f"({repaired['seeds']} seeds")


def _repair_compare(data: dict[str, Any], model: str) -> str:
    """``repair_compare.py``: the median env steps to success on the repaired model and the omitted one."""
    row = next(m for m in data["models"] if m["model"] == model)
    median = {k: round(row[k]["median"]) for k in ("repaired", "omitted")}
    return f"median {median['repaired']} env steps against {median['omitted']} ({len(data['seeds'])} seeds)"


def _own_world_hints(data: dict[str, Any]) -> str:
    """``own_worlds_omitted.py``: on how many worlds a top-3 hint names an omitted atom."""
    found = sum(bool(w["hints"].get("found")) for w in data["worlds"])
    return f"the omitted mechanism in the top 3 on {found} of {len(data['worlds'])} MiniGrid worlds of one's own"


def _env_process_speed(data: dict[str, Any]) -> str:
    """The fastest ``deep.env_process`` row against the fastest PPO row of the same run."""
    best = max(r["steps_per_second"] for r in data["rows"] if r.get("env_process"))
    ppo = max(r["steps_per_second"] for r in data["rows"] if r["method"] == "ppo")
    return f"{best / ppo:.2f}x PPO's env steps/s"


def _table2(data: dict[str, Any]) -> str:
    return " / ".join(_two(data["families"][name]) for name in TABLE2)


def _episodes(data: dict[str, Any]) -> int:
    counts = {p["episodes"] for p in data["programs"].values()}
    assert len(counts) == 1, counts
    return counts.pop()


def _baselines(data: dict[str, Any]) -> str:
    rates = [p["success_rate"] for b in data["baselines"].values() for p in b["evaluation"]["programs"].values()]
    steps = {b["budget"]["env_steps"] for b in data["baselines"].values()}
    return f"{_two(max(rates))} on every program ({steps.pop() // 1000}k env steps)"


def _atomic(data: dict[str, Any]) -> str:
    return f"Move_To_Zone {_two(data['families']['Move_To_Zone'])}, Stack {_two(data['families']['Stack'])}"


def _onto(data: dict[str, Any], height: int) -> str:
    """``replan_stop_trace.py``: ψ of the Stacks onto a tower of ``height`` after a call whose ψ held."""
    return _two(next(r["psi_rate"] for r in data["stacks_by_onto_tower"]
                     if r["onto_tower"] == height and r["before"] == "after_psi"))


def _level(data: dict[str, Any], height: int) -> str:
    """``fetch_stack_end.py``: ψ of the Stacks onto a tower of ``height`` from chained starts."""
    return _two(data["starts"]["chained"]["by_level"][str(height)]["psi_rate"])


def _off_table(data: dict[str, Any]) -> str:
    return _two(data["failed_calls"]["episodes_with_a_block_off_the_table"]["rate"])


def _soup_size(data: dict[str, Any]) -> int:
    """``fetch_select_snapshot.py --soup``: how many policies the greedy soup averages."""
    return len(next(r for r in data["rows"] if r.get("name") == "greedy")["ingredients"])


RESULTS = "benchmarks/results"
FETCH = f"{RESULTS}/fetch_programs"
CLAIMS: list[Claim] = [
    Claim("Planning core", f"{RESULTS}/landmarks_ipc_suite_all.json", _suite_read),
    Claim("Planning core", f"{RESULTS}/landmarks_ipc_suite_all.json", lambda d: f"{_factories_agree(d)} tasks"),
    Claim("Planning core", f"{RESULTS}/landmarks_ipc_all.json", lambda d: f"{_factories_agree(d)} IPC STRIPS tasks"),
    Claim("Planning core", f"{RESULTS}/landmarks_ipc_suite_all.json",
          lambda d: f"{_process_ratios(d)} of FD's process time"),
    Claim("Planning core", f"{RESULTS}/landmarks_ipc_all.json",
          lambda d: f"{d['summary']['hm']['other_encoding_both_equal']}/{d['summary']['hm']['other_encoding_compared']}"
                    " with FD's default encoding"),
    Claim("ASGRL, paper setting", f"{RESULTS}/figure3/figure3.json", lambda d: f"ASGRL {_figure3(d, 'asgrl')}"),
    Claim("ASGRL, paper setting", f"{RESULTS}/figure3/figure3.json",
          lambda d: f"{d['meta']['seeds']} seeds, {d['meta']['steps'] // 1000}k steps"),
    Claim("ASGRL, paper setting", f"{RESULTS}/figure3/figure3.json",
          lambda d: f"Goal-Q {_figure3(d, 'goal-q')}; Landmark-HRL {_figure3(d, 'landmark-hrl')}"),
    Claim("ASGRL, asg defaults", f"{RESULTS}/figure3/asg_cap_d20.json",
          lambda d: f"{_all_worlds(d)} runs on the four worlds"),
    Claim("ASGRL, asg defaults", f"{RESULTS}/omitted/omitted_cap_d20.json",
          lambda d: f"{_all_worlds(d, 'table')} on four models"),
    Claim("ASGRL, asg defaults", f"{RESULTS}/figure3/asg_cap_d20.json",
          lambda d: f"{d['meta']['seeds']} seeds, {d['meta']['steps'] // 1000}k steps"),
    Claim("Model repair hints", f"{RESULTS}/repair_compare_mario.json", lambda d: _repair_compare(d, "mario_no_key")),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/skill_horizon/unlocktounlock_2m_5seeds/own_worlds.json",
          lambda d: _own_world(d, "unlocktounlock-hints", "asgrl")),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/skill_horizon/unlocktounlock_2m_5seeds/retry_epsilon.json",
          lambda d: f"[{_two(d['summary']['with_0.5_epsilon']['mean'])}]"),
    Claim("Your own Gymnasium world",
          f"{RESULTS}/own_worlds/skill_horizon/unlocktounlock_fs4_2m_5seeds/own_worlds.json",
          lambda d: _own_world(d, "unlocktounlock-hints", "asgrl")),
    Claim("Your own Gymnasium world",
          f"{RESULTS}/own_worlds/skill_horizon/unlocktounlock_fs4_2m_5seeds/retry_other_skill.json",
          lambda d: f"[{_two(d['summary']['with_other_0.5_epsilon']['mean'])}]"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/skill_horizon/unlocktounlock_ppo_2m/own_worlds.json",
          lambda d: f"PPO, actions sampled, [{_own_world(d, 'unlocktounlock-hints', 'ppo')}]"),
    Claim("Model repair hints", f"{RESULTS}/repair_compare_minecraft.json",
          lambda d: _repair_compare(d, "minecraft_no_processing")),
    Claim("Model repair hints", f"{RESULTS}/own_worlds/omitted/omitted.json", _own_world_hints),
    Claim("Model repair hints", f"{RESULTS}/own_worlds/repaired_10seeds/own_worlds.json",
          lambda d: _repaired_vs_omitted(d, "keyinbox")),
    Claim("Model repair hints", f"{RESULTS}/own_worlds/repaired_seeds_10_19/own_worlds.json",
          lambda d: _repaired_vs_omitted(d, "keyinbox")),
    Claim("Model repair hints", f"{RESULTS}/own_worlds/success_window_10seeds/own_worlds.json",
          lambda d: _repaired_vs_omitted(d, "keyinbox")),
    Claim("Pixel-Mario", f"{RESULTS}/pixel_mario/pixel_mario.json",
          lambda d: f"{d['proto-kmeans']['summary']['solved']}/{d['proto-kmeans']['summary']['n']} seeds, "
                    f"{d['proto-kmeans']['steps'] // 1000}k steps"),
    Claim("Pixel-Mario", f"{RESULTS}/pixel_mario/baselines/compare.json",
          lambda d: ", ".join(f"{label} {_solved(d['summary'], method)}" for label, method in
                              (("Goal-Q", "goal-q"), ("Landmark-Shaping", "landmark-shaping"),
                               ("Landmark-HRL", "landmark-hrl")))),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/own_worlds.json",
          lambda d: f"DoorKey-8x8 {_own_world(d, 'doorkey-8x8', 'asgrl')}; UnlockPickup "
                    f"{_own_world(d, 'unlockpickup', 'asgrl')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/own_worlds.json",
          lambda d: f"DoorKey-8x8 {_own_world(d, 'doorkey-8x8', 'ppo')}; UnlockPickup "
                    f"{_own_world(d, 'unlockpickup', 'ppo')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/worlds_5seeds/own_worlds.json",
          lambda d: f"ObstructedMaze-1Dl {_own_world(d, 'obstructedmaze', 'asgrl')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/worlds_5seeds/own_worlds.json",
          lambda d: f"ObstructedMaze-1Dl {_own_world(d, 'obstructedmaze', 'ppo')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/multiroom_5seeds/own_worlds.json",
          lambda d: f"{_own_world(d, 'multiroom', 'asgrl')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/recurrent/multiroom_1m/own_worlds.json",
          lambda d: f"MultiRoom-N4-S5 {_own_world(d, 'multiroom', 'asgrl')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/recurrent/multiroom_1m/own_worlds.json",
          lambda d: f"MultiRoom-N4-S5 {_own_world(d, 'multiroom', 'ppo')}"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/blockedunlockpickup/omitted/own_worlds.json",
          lambda d: _own_world(d, "blockedunlockpickup", "asgrl")),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/blockedunlockpickup/omitted/own_worlds.json",
          lambda d: f"(PPO {_two(next(r for r in d['rows'] if r['method'] == 'ppo')['final_success_mean'])})"),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/blockedunlockpickup/repaired/own_worlds.json",
          lambda d: _own_world(d, "blockedunlockpickup-repaired", "asgrl")),
    Claim("Your own Gymnasium world", f"{RESULTS}/deep_skills_speed_env_process.json", _env_process_speed),
    Claim("Your own Gymnasium world", f"{RESULTS}/own_worlds/env_process_32_32/own_worlds.json",
          lambda d: f"UnlockPickup {_own_world(d, 'unlockpickup', 'asgrl')}"),
    Claim("AlphaNPI-X, `fast` preset", f"{FETCH}/learned_stop/fast-200/non-atomic-replan-learned.json",
          lambda d: f"{_table2(d)} ({_episodes(d)} episodes"),
    Claim("AlphaNPI-X, `fast` preset", f"{RESULTS}/npi_ddpg_baselines_800k.json", _baselines),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/table2-view-s3/non-atomic-replan-learned.json",
          lambda d: f"re-plan {_table2(d)} ({_episodes(d)} episodes"),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/goal-policy-soup/atomic_eval_100.json", _atomic),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/table2-view-s3/stack_all_blocks_calls.json",
          lambda d: f"ψ {_onto(d, 3)}"),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/table2-view-s3/move_all_to_zone_orange_calls.json",
          _blocked_failures),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/tower_sites/soup_row_model.json", _tower_sites),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/goal-policy-soup/stack_levels_chained_30.json",
          lambda d: f"{_level(d, 3)} onto towers built by Θ"),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/meta-controller-seeds/table2_seeds.json",
          lambda d: "their mean rows are {:.3f} and {:.3f}".format(
              *(d["groups"][view]["row_mean"] for view in ("full", "view")))),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/meta-controller-seeds/selection.json",
          lambda d: f"the best of {len(d['candidates'])} on held-out starts"),
    Claim("AlphaNPI-X, `learned` preset", f"{FETCH}/expert_free/soup_m_descendants.json",
          lambda d: f"of {_soup_size(d)} committed stages"),
    Claim("AlphaNPI-X, `paper` preset", f"{FETCH}/paper_pipeline/epochs-30/atomic.json", _atomic),
    Claim("AlphaNPI-X, `paper` preset", f"{FETCH}/paper_pipeline/epochs-30/replan.json",
          lambda d: f"re-plan {_table2(d)} ({_episodes(d)} episodes"),
    Claim("AlphaNPI-X, `paper` preset", f"{FETCH}/paper_pipeline/epochs-30/goal_policy_config.json",
          lambda d: f"{d['config']['schedule']['epochs_phase1'] + d['config']['schedule']['epochs_phase2']} epochs"),
    Claim("AlphaNPI-X, `paper` preset", f"{FETCH}/paper_pipeline/epochs-30/goal_policy_metrics.csv",
          lambda rows: f"goal policy at epoch {max(int(r['epoch']) for r in rows)}"),
]


def status_rows(readme: str) -> dict[str, str]:
    """The status table's rows by their first cell (the component), each the row's whole line."""
    after = readme.split(HEADING, 1)[1] if HEADING in readme else ""
    rows = {}
    for line in after.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            first = line.split("|")[1].strip()
            bold = re.match(r"\*\*(.+?)\*\*", first)
            rows[bold.group(1) if bold else first] = line
    return rows


def check(root: Path = ROOT) -> list[str]:
    """Where the README's status table and the results files disagree, one line each."""
    rows = status_rows((root / "README.md").read_text(encoding="utf-8"))
    faults = []
    for claim in CLAIMS:
        row = rows.get(claim.row)
        if row is None:
            faults.append(f"README.md: no status row {claim.row!r}")
            continue
        try:
            value = claim.value(root)
        except (OSError, KeyError, ValueError, StopIteration, AttributeError) as err:
            faults.append(f"{claim.file}: cannot read the claim of row {claim.row!r} ({type(err).__name__}: {err})")
            continue
        if value not in row:
            faults.append(f"{claim.file}: gives {value!r}, which row {claim.row!r} of README.md does not say")
        if f"]({claim.file})" not in row:
            faults.append(f"README.md: row {claim.row!r} does not link {claim.file}")
    return faults


def unclaimed_numbers(root: Path = ROOT) -> list[str]:
    """Numbers in the status table's figure cells (all but the first and the last) that no claim
    renders from a file; links, code spans and names (Figure 3, Household-V1, DoorKey-8x8) are not
    figures."""
    rows = status_rows((root / "README.md").read_text(encoding="utf-8"))
    faults = []
    for name, row in rows.items():
        if name == "component":
            continue
        text = "|".join(row.split("|")[2:-2])
        for claim in (c for c in CLAIMS if c.row == name):
            text = text.replace(claim.value(root), " ")
        text = re.sub(r"\[[^\]]*\]\([^)]*\)|`[^`]*`", " ", text)  # links and code are no figures
        text = re.sub(r"(?:Figure|Table) \d+|[A-Za-z][\w-]*\d\w*", " ", text)  # nor names: Figure 3, V1, 8x8
        faults += [f"README.md: row {name!r}: {number!r} is read from no file" for number in
                   re.findall(r"\d+(?:[.,/]\d+)*", text)]
    return faults


def main() -> int:
    for claim in CLAIMS:
        print(f"{claim.row:<28} {claim.value()!r:<70} {claim.file}")
    faults = check() + unclaimed_numbers()
    print("\n".join(faults) or "every figure of the status table matches its file")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
