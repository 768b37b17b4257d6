"""Reading PDDL: the paper's models, every IPC STRIPS file, refusals and bad input."""
from __future__ import annotations

import pytest
from conftest import DATA, PITFALLS, ipc_paths, ipc_rows

from asg import pddl_models
from asg.planning import (ModelError, PDDLError, PDDLSyntaxError, UnsupportedRequirementError, load_task,
                          parse_files, parse_text)


@pytest.mark.parametrize("name", pddl_models.names())
def test_every_shipped_model_parses_and_grounds(name):
    if name == "fetch_programs.pddl":
        model = parse_files(pddl_models.path(name), require_problem=False)
        assert model.domain is not None
        return
    task = load_task(pddl_models.path(name))
    assert task.operators and task.goal


def test_shipped_models_are_listed_by_importlib_resources():
    names = pddl_models.names()
    for expected in ("household_v1.pddl", "household_v2.pddl", "minecraft.pddl", "mario.pddl"):
        assert expected in names


@pytest.mark.parametrize("row", ipc_rows("strips"), ids=lambda r: r["problem_file"])
def test_every_ipc_strips_task_parses_and_grounds(row):
    domain, problem = ipc_paths(row)
    task = load_task(domain, problem)
    assert task.goal and task.operators
    assert all(a.predicate == a.predicate.lower() for a in task.facts)


@pytest.mark.parametrize("row", ipc_rows("adl"), ids=lambda r: r["problem_file"])
def test_ipc_adl_tasks_are_refused_with_requirement_and_place(row):
    domain, problem = ipc_paths(row)
    with pytest.raises(UnsupportedRequirementError) as info:
        load_task(domain, problem)
    message = str(info.value)
    assert message.startswith(f"{domain}:") and ": error: unsupported requirement :" in message
    assert info.value.line is not None


def test_upper_case_keywords_are_read(need_ipc):
    # pddl 0.5.1 alone fails on `(:INIT`; the normaliser lower-cases every symbol
    from conftest import IPC
    task = load_task(IPC / "blocks/domain.pddl", IPC / "blocks/p01.pddl")
    assert any(str(a) == "(clear c)" for a in task.init)


def test_equality_without_requirement_and_negative_preconditions(need_ipc):
    from conftest import IPC
    task = load_task(IPC / "snake/domain.pddl", IPC / "snake/p01.pddl")
    assert any(a.negated for a in task.facts)  # (not (blocked ...)) complement facts
    assert not any(op.name.startswith("(move-and-eat-spawn") and "dummypoint" in op.name.split()[3]
                   for op in task.operators)  # (not (= ?spawnpoint dummypoint)) was applied


def test_glued_variable_and_duplicate_parameter_names(need_ipc):
    from conftest import IPC
    assert load_task(IPC / "zenotravel/domain.pddl", IPC / "zenotravel/p01.pddl").operators
    assert load_task(IPC / "logistics/domain.pddl", IPC / "logistics/p01.pddl").operators


def test_conditional_effect_probe_is_refused(need_pitfalls):
    with pytest.raises(UnsupportedRequirementError, match=":conditional-effects") as info:
        load_task(PITFALLS / "condeff_domain.pddl", PITFALLS / "condeff_problem.pddl")
    assert (info.value.line, info.value.column) == (10, 29)  # the "(when"


def test_derived_predicate_probe_is_refused(need_pitfalls):
    with pytest.raises(UnsupportedRequirementError, match=":derived-predicates"):
        load_task(PITFALLS / "axiom_domain.pddl", PITFALLS / "axiom_problem.pddl")


def test_paper_household_listing_has_undeclared_charged():
    path = DATA / "household_v1_as_printed.pddl"
    with pytest.raises(ModelError) as info:
        load_task(path)
    assert str(info.value) == (f"{path}:20:27: error: predicate 'charged' is used in action 'charge_door' "
                               "effect but not declared in :predicates")
    lenient = parse_files(path, lenient=True)
    assert any(w.code == "undeclared-predicate" for w in lenient.warnings)
    assert any(w.code == "unused-predicate" and "'charge'" in w.message for w in lenient.warnings)


BAD = [
    ("unbalanced.pddl", PDDLSyntaxError, "1:1: error: unbalanced '(': never closed"),
    ("undeclared.pddl", ModelError, "4:56: error: predicate 'q' is used in action 'a' effect but not declared"),
    ("arity.pddl", ModelError, "4:46: error: predicate 'p' takes 1 argument(s), 2 given"),
    ("unknown_type.pddl", ModelError, "5:38: error: unknown type 'hallway' in action 'go'"),
    ("unknown_object.pddl", ModelError, "5:70: error: unknown object or constant 'ghost' in goal"),
    ("domain_only.pddl", PDDLError, "error: missing problem"),
    ("unsupported.pddl", UnsupportedRequirementError, "4:55: error: unsupported requirement :conditional-effects"),
    ("empty.pddl", PDDLSyntaxError, "error: empty file"),
    ("junk.pddl", PDDLSyntaxError, "error: binary data (NUL byte at offset 7)"),
]


@pytest.mark.parametrize("name,kind,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error_with_place(name, kind, expected):
    path = DATA / "bad" / name
    with pytest.raises(kind) as info:
        load_task(path)
    assert str(info.value).startswith(f"{path}:") and expected in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_path_and_directory():
    with pytest.raises(PDDLError, match="no such file"):
        load_task(DATA / "nope.pddl")
    with pytest.raises(PDDLError, match="is a directory"):
        load_task(DATA)


def test_parse_text_single_string_with_both_defines():
    model = parse_text("(define (domain d) (:predicates (p) (q)) (:action a :parameters () :precondition (p)"
                       " :effect (q))) (define (problem x) (:domain d) (:init (p)) (:goal (q)))")
    assert str(model.problem.name) == "x"
