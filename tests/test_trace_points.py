"""``benchmarks/trace_points.py`` on a small hand-made trace: the greedy path follows the meta's
first maximum from the empty history, training runs are counted per window, a skill failing its
recent runs is flagged, and failed runs at the episode's limit are told apart."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import trace_points  # noqa: E402  (benchmarks/, a script folder)

LANDMARKS = {"(a)": [], "(b)": []}


def meta(state: str, greedy: str, values: dict[str, float]) -> dict:
    return {"state": state, "greedy": greedy, "greedy_value": max(values.values()), "values": values}


TRACE = {
    "points": [
        {"env_steps": 1000, "row": {"success_rate": 0.0, "reached_(a)": 1.0, "reached_(b)": 0.0}, "skills": LANDMARKS,
         "meta": [meta("()", "(0, 1)", {"(0, 0)": 1.0, "(0, 1)": 1.9}),
                  meta("((0, 1),)", "(1, 0)", {"(1, 0)": 1.0, "(1, 1)": 0.5})]},
    ],
    "episodes": [
        {"env_steps": 100, "steps": 100, "success": False, "runs": [["(a)", 1, "reached"], ["(b)", 0, "failed"]]},
        {"env_steps": 600, "steps": 20, "success": True, "runs": [["(a)", 1, "reached"], ["(b)", 1, "reached"]]},
        {"env_steps": 700, "steps": 100, "success": False, "runs": [["(a)", 1, "reached"], ["(b)", 0, "failed"]]},
        {"env_steps": 800, "steps": 30, "success": False, "runs": [["(a)", 0, "failed"]]},
        {"env_steps": 900, "steps": 100, "success": False, "runs": [["(a)", 1, "reached"], ["(b)", 0, "failed"]]},
        {"env_steps": 950, "steps": 40, "success": False, "runs": [["(a)", 1, "reached"], ["(b)", 0, "cut"]]},
    ],
}


def test_the_greedy_path_the_windows_and_the_flag():
    (point,) = trace_points.summarise(TRACE, window=500, min_runs=2)
    assert [(s["landmark"], s["skill"]) for s in point["greedy_path"]] == [("(a)", 1), ("(b)", 0)]
    assert point["since_last_point"] == {"(a)": [[0, 1], [5, 5]], "(b)": [[0, 3], [1, 1]]}  # the cut run has no verdict
    assert point["last_500_steps"] == {"(a)": [[0, 1], [4, 4]], "(b)": [[0, 2], [1, 1]]}
    assert point["greedy_runs_a_weak_skill"] == ["(b) skill 0"]  # 0 of its 2 recent runs
    assert trace_points.summarise(TRACE, window=500, min_runs=3)[0]["greedy_runs_a_weak_skill"] == []


def test_failed_runs_at_the_episode_limit_are_counted_apart():
    assert trace_points.failures(TRACE, 0, limit=100) == {"(b)": {"failed": 3, "at_episode_limit": 3},
                                                          "(a)": {"failed": 1, "at_episode_limit": 0}}
    assert trace_points.failures(TRACE, 750, limit=100) == {"(a)": {"failed": 1, "at_episode_limit": 0},
                                                            "(b)": {"failed": 1, "at_episode_limit": 1}}
