"""Reading PDDL: the paper's models, every IPC STRIPS file, refusals and bad input."""
from __future__ import annotations

import pytest
from conftest import DATA, PITFALLS, ipc_paths, ipc_rows

from asg import pddl_models
from asg.planning import (
    ModelError,
    PDDLError,
    PDDLSyntaxError,
    UnsupportedRequirementError,
    load_task,
    parse_files,
    parse_text,
)
from asg.planning.task import Atom


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
def test_ipc_adl_tasks_are_read(row):
    # ADL (quantifiers, disjunctions, conditional effects) is compiled as FD's translator does
    domain, problem = ipc_paths(row)
    task = load_task(domain, problem)
    assert task.goal and task.operators


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


def test_conditional_effect_probe_is_read_with_its_condition(need_pitfalls):
    task = load_task(PITFALLS / "condeff_domain.pddl", PITFALLS / "condeff_problem.pddl")
    press = task.operator("(press)")
    assert [(sorted(map(str, e.condition)), sorted(map(str, e.add))) for e in press.conditional] == [
        (["(powered)"], ["(light)"])]
    assert str(next(iter(press.add))) == "(pressed)"


def test_derived_predicate_probe_is_read_as_an_axiom(need_pitfalls):
    task = load_task(PITFALLS / "axiom_domain.pddl", PITFALLS / "axiom_problem.pddl")
    assert [(str(a.head), sorted(map(str, a.body))) for a in task.axioms] == [("(ready)", ["(a)", "(b)"])]
    states = task.replay(["(make-a)", "(make-b)", "(finish)"])
    assert Atom("ready") in states[2] and task.goal_reached(states[-1])


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
    ("unsupported.pddl", UnsupportedRequirementError, "4:64: error: unsupported requirement :numeric-fluents"),
    ("empty.pddl", PDDLSyntaxError, "error: empty file"),
    ("junk.pddl", PDDLSyntaxError, "error: binary data (NUL byte at offset 7)"),
    ("deep_nesting.pddl", PDDLSyntaxError, "4:533: error: nesting deeper than 100 levels (asg's limit)"),
    ("duplicate_action.pddl", ModelError, "5:12: error: action 'go' defined twice (first at line 4)"),
    ("duplicate_predicate.pddl", ModelError, "4:17: error: predicate 'p' declared twice (first at line 3)"),
    ("unknown_requirement.pddl", PDDLSyntaxError, "3:26: error: unknown requirement ':foo'"),
    ("domain_mismatch.pddl", ModelError, "5:35: error: problem names domain 'elsewhere' but the domain is 'here'"),
    ("type_unrelated_parents.pddl", ModelError, "7:11: error: type 'room' declared twice with unrelated parents"),
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


# -- issue 14: nesting, duplicates, requirements, domain names, types declared twice ---------------

@pytest.mark.parametrize("depth", [500, 20_000])
def test_deep_nesting_is_refused_at_the_limit_not_by_recursion(depth):
    from asg.planning.sexpr import MAX_DEPTH

    text = ("(define (domain deep) (:predicates (p) (q))\n(:action a :parameters () :precondition "
            + "(and " * depth + "(p)" + ")" * depth + " :effect (q)))")
    with pytest.raises(PDDLSyntaxError) as info:
        parse_text(text, name="deep.pddl")
    column = len("(:action a :parameters () :precondition ") + 5 * (MAX_DEPTH - 2) + 1
    assert str(info.value) == f"deep.pddl:2:{column}: error: nesting deeper than {MAX_DEPTH} levels (asg's limit)"


def test_nesting_up_to_the_limit_is_read_and_walked():
    from asg.planning.sexpr import MAX_DEPTH, parse_sexprs, render, render_with_lines
    from asg.planning.structure import atom_uses

    depth = MAX_DEPTH - 2  # (x ...) and (p a) are levels too
    text = "(x " + "(and " * depth + "(p a)" + ")" * depth + ")"
    [form] = parse_sexprs(text, "deep.pddl")
    assert render(form) == text
    assert render_with_lines(form).replace(" )", ")") == text
    assert len(list(form.walk())) == MAX_DEPTH
    assert [(u.predicate.text, [a.text for a in u.args]) for u in atom_uses(form.items[1], "goal")] == [("p", ["a"])]
    with pytest.raises(PDDLSyntaxError, match=f"nesting deeper than {MAX_DEPTH} levels"):
        parse_sexprs("(x " + text + ")", "deep.pddl")


def test_deep_nesting_through_the_model_check_and_grounding():
    # 40 levels of (and ...) in a precondition and the goal: under the limit, read like a flat (and ...)
    depth = 40
    nest = "(and " * depth + "(p)" + ")" * depth
    goal = nest.replace("(p)", "(q)")
    model = parse_text(f"(define (domain d) (:predicates (p) (q)) (:action a :parameters () :precondition {nest}"
                       f" :effect (q))) (define (problem x) (:domain d) (:init (p)) (:goal {goal}))")
    from asg.planning import ground

    task = ground(model)
    assert [op.name for op in task.operators] == ["(a)"] and {str(a) for a in task.goal} == {"(q)"}


def test_domain_mismatch_is_a_warning_when_lenient():
    path = DATA / "bad" / "domain_mismatch.pddl"
    model = parse_files(path, lenient=True)
    [warning] = [w for w in model.warnings if w.code == "domain-mismatch"]
    assert warning.format() == (f"{path}:5:35: warning: problem names domain 'elsewhere' but the domain is "
                                "'here' (accepted by --lenient)")
    assert load_task(path, lenient=True).operators


def test_problem_file_naming_another_domain_is_an_error(tmp_path):
    domain, problem = tmp_path / "domain.pddl", tmp_path / "p01.pddl"
    domain.write_text("(define (domain here) (:predicates (p) (q)) (:action go :parameters () :precondition (p)"
                      " :effect (q)))")
    problem.write_text("(define (problem p01)\n  (:domain there) (:init (p)) (:goal (q)))")
    with pytest.raises(ModelError) as info:
        load_task(domain, problem)
    assert str(info.value).startswith(f"{problem}:2:12: error: problem names domain 'there'")


def test_known_but_unsupported_requirement_keeps_its_error():
    text = ("(define (domain d) (:requirements :strips :durative-actions) (:predicates (p) (q))"
            " (:durative-action a :parameters (?x) :duration (= ?duration 1) :condition (at start (p))"
            " :effect (at end (q))))")
    with pytest.raises(UnsupportedRequirementError, match=":durative-actions"):
        parse_text(text)
    declared_only = text[:text.index(" (:durative-action")] + ")"
    assert parse_text(declared_only).domain is not None  # declared but unused: read as before


def test_unknown_requirement_in_the_problem_names_its_place():
    with pytest.raises(PDDLSyntaxError) as info:
        parse_text("(define (domain d) (:predicates (p)) (:action a :parameters () :precondition (p) :effect (p)))",
                   "(define (problem x) (:domain d)\n (:requirements :bar) (:init (p)) (:goal (p)))", name="f.pddl")
    assert str(info.value) == "f.pddl:2:17: error: unknown requirement ':bar'"


def test_type_declared_twice_is_read_as_fast_downward_reads_it():
    path = DATA / "bad" / "type_declared_twice.pddl"
    model = parse_files(path)
    [warning] = [w for w in model.warnings if w.code == "duplicate-type"]
    assert warning.format().startswith(f"{path}:8:11: warning: type 'area' declared twice (first at line 6)")
    assert {str(k): v for k, v in model.domain.types.items()}["area"] == "surface"
    # Fast Downward's translator grounds exactly this operator (checked with up_fast_downward's translate)
    assert [op.name for op in load_task(path).operators] == ["(drop h c a1)"]


def test_section_given_twice_and_stray_action_keys_are_errors():
    base = "(define (domain d) (:predicates (p) (q)) {} (:action a :parameters () :precondition (p) :effect (q)))"
    with pytest.raises(PDDLSyntaxError, match=r"second \(:predicates \.\.\.\) section \(first at line 1\)"):
        parse_text(base.format("(:predicates (r))"))
    with pytest.raises(PDDLSyntaxError, match="expected one of :parameters"):
        parse_text(base.format("").replace(":effect", ":effects"))


def test_own_reader_builds_what_pddl_parser_builds(need_ipc):
    # Issue 19: asg tokenises once and builds pddl's objects itself; they print as pddl's lark parser's do
    from conftest import IPC
    from pddl.parser.domain import DomainParser
    from pddl.parser.problem import ProblemParser

    domain_parser, problem_parser = DomainParser(), ProblemParser()
    for family in ("logistics", "depot", "satellite", "rovers"):
        model = parse_files(IPC / family / "domain.pddl", IPC / family / "p02.pddl")
        assert str(domain_parser(str(model.domain))) == str(model.domain)
        assert str(problem_parser(str(model.problem))) == str(model.problem)


def test_parsing_never_imports_lark():
    # Issue 19: one tokenising pass; lark (pddl's parser) costs start-up time and is not needed
    import subprocess
    import sys

    code = ("import sys; from asg import pddl_models; from asg.planning import load_task; "
            "load_task(pddl_models.path('household_v1'));"
            " print(sorted(m for m in sys.modules if m.startswith('lark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
