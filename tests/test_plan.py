"""Plans from Fast Downward through unified-planning, validated on asg's task."""
from __future__ import annotations

import threading

import pytest
from conftest import ipc_paths, ipc_rows

from asg import pddl_models
from asg.planning import find_plan, load_task
from asg.planning.plan import to_up

OPTIMAL = [r for r in ipc_rows("strips") if r["problem_file"] in (
    "blocks/p02.pddl", "gripper/p01.pddl", "logistics/p01.pddl", "miconic/p03.pddl", "satellite/p01.pddl",
    "rovers/p02.pddl", "visitall/p03.pddl", "zenotravel/p02.pddl", "driverlog/p01.pddl")]


@pytest.mark.parametrize("row", OPTIMAL, ids=lambda r: r["problem_file"])
def test_optimal_plan_length_matches_the_manifest(row):
    task = load_task(*ipc_paths(row))
    result = find_plan(task, optimal=True, timeout=60)
    assert result.solved
    assert len(result.plan) == int(row["fd_opt_plan_len"])
    assert task.goal_reached(task.replay(result.plan)[-1])


@pytest.mark.parametrize("name", ["household_v1", "household_v2", "minecraft", "mario"])
def test_paper_models_have_plans(name):
    task = load_task(pddl_models.path(name))
    result = find_plan(task)
    assert result.solved and task.goal_reached(task.replay(result.plan)[-1])


def test_household_plan_passes_the_landmarks_in_order():
    task = load_task(pddl_models.path("household_v1"))
    names = [op.name.split()[0].strip("()") for op in find_plan(task).plan]
    assert names.index("pickup_key") < names.index("open_door") < names.index("pass_through_door")
    assert names[-1] == "go_to_destination"


def test_unsolvable_task_is_reported():
    from conftest import DATA
    task = load_task(DATA / "bad" / "unreachable_goal.pddl")
    assert find_plan(task).status == "unsolvable"


def test_to_up_problem_is_a_unified_planning_problem():
    task = load_task(pddl_models.path("mario"))
    translation = to_up(task)
    problem = translation.problem
    assert len(problem.actions) == len(task.operators)
    assert len(problem.goals) == 1
    assert set(translation.action_to_operator.values()) == set(task.operators)


def test_concurrent_calls_do_not_corrupt_each_other(need_ipc):
    # FD writes output.sas to the cwd: each call must run in its own directory
    rows = [r for r in ipc_rows("strips") if r["problem_file"] in ("blocks/p01.pddl", "gripper/p01.pddl",
                                                                   "miconic/p02.pddl", "depot/p01.pddl")]
    results: dict[str, int] = {}

    def solve(row):
        task = load_task(*ipc_paths(row))
        result = find_plan(task)
        assert task.goal_reached(task.replay(result.plan)[-1])
        results[row["problem_file"]] = len(result.plan)

    threads = [threading.Thread(target=solve, args=(r,)) for r in rows]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results) == {r["problem_file"] for r in rows}


