"""asg's landmarks equal Fast Downward's lm_hm on a sample (the full corpus: benchmarks/landmarks.py)."""
from __future__ import annotations

import pytest
from conftest import ipc_paths, ipc_rows

from asg import pddl_models
from asg.planning import compute_landmarks, load_task
from asg.planning.peer import asg_view, compare, fd_landmarks, pddl_texts

M1_SAMPLE = [r for r in ipc_rows("strips") if r["problem_file"].endswith("p01.pddl")]
M2_SAMPLE = [r for r in ipc_rows("strips")
             if r["problem_file"] in ("blocks/p01.pddl", "gripper/p01.pddl", "logistics/p01.pddl",
                                       "miconic/p03.pddl", "rovers/p01.pddl")]


def _agree(domain, problem, m, encoding="binary", reasonable=False):
    graph = compute_landmarks(load_task(domain, problem), m=m, reasonable=reasonable)
    peer = fd_landmarks(*pddl_texts(domain, problem), m=m, encoding=encoding, reasonable=reasonable, timeout=120)
    assert peer.landmarks, "FD printed an empty graph"
    return compare(asg_view(graph), peer)


@pytest.mark.parametrize("row", M1_SAMPLE, ids=lambda r: r["problem_file"])
def test_fact_landmarks_and_orderings_equal_fd_m1(row):
    result = _agree(*ipc_paths(row), m=1)
    assert result.landmarks_equal, (result.missing, result.extra)
    assert result.orderings_equal, (result.closure_missing, result.closure_extra, result.gn_missing, result.gn_extra)


@pytest.mark.parametrize("row", M2_SAMPLE, ids=lambda r: r["problem_file"])
def test_conjunctive_landmarks_and_orderings_equal_fd_m2(row):
    result = _agree(*ipc_paths(row), m=2)
    assert result.landmarks_equal, (result.missing, result.extra)
    assert result.orderings_equal, (result.closure_missing, result.closure_extra, result.gn_missing, result.gn_extra)


def test_paper_model_equals_fd_with_default_encoding():
    path = pddl_models.path("household_v1")
    for m in (1, 2):
        result = _agree(path, None, m=m, encoding="default")
        assert result.landmarks_equal and result.orderings_equal


def test_reasonable_orderings_equal_fd_beyond_the_sound_closure(need_ipc):
    from conftest import IPC
    result = _agree(IPC / "blocks/domain.pddl", IPC / "blocks/p03.pddl", m=1, encoding="default", reasonable=True)
    assert not result.reasonable_missing and not result.reasonable_extra


