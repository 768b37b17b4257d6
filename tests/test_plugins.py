"""Plug-in domains (``asg.envs.plugins``): a world defined here, outside asg, trained through the library.

``KeyDoorCorridor`` is a 1-D corridor, cells 0..6, start at cell 3: the key lies at cell 0, a
locked door stands at cell 5 and the goal at cell 6. Actions: 0 left, 1 right, 2 pick up (at the
key), 3 open (next to the door, holding the key). It has no ``hashable_state``: its labeler reads
the unwrapped env, as every plug-in labeler does.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from toy_domains import KEYDOOR_LABELS, KEYDOOR_PDDL, KeyDoorCorridor

import asg
from asg.envs import plugins
from asg.envs.domains import UnknownDomainError, domain_names, get_domain
from asg.envs.labeling import LabelerEvaluationError, LabelTable, UnknownAtomError
from asg.learning.asgrl.config import make_config, merge_overrides, small_preset
from asg.learning.asgrl.trainer import train
from asg.learning.errors import DomainError
from asg.learning.registry import asgrl_domains, bind_domain, bind_spec
from asg.planning.errors import AsgError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"





def make_corridor() -> KeyDoorCorridor:
    """A factory without ``max_steps``: the plug-in API caps it with a TimeLimit."""
    return KeyDoorCorridor(max_steps=10_000)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "keydoor.pddl"
    path.write_text(KEYDOOR_PDDL)
    return path


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it (the registry is process-wide)."""
    names: list[str] = []
    yield names
    for name in names:
        plugins.unregister_domain(name)


def corridor_domain(name: str, model: Path | str, **kwargs) -> plugins.PluginDomain:
    """The corridor as a plug-in domain (also what the entry-point test's package returns)."""
    return plugins.make_domain(name, env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model, **kwargs)


# ------------------------------------------------------------------------- register and train
def test_registered_domain_trains_through_the_library(model, registered):
    spec = asg.register_domain("keydoor", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model,
                               skill_max_steps=60)
    registered.append("keydoor")
    assert get_domain("keydoor") is spec
    assert "keydoor" in domain_names() and "keydoor" in asgrl_domains()
    binding = bind_domain("keydoor")
    assert sorted(str(a) for a in binding.task.facts) == ["(at-goal)", "(door-open)", "(has-key)"]
    cfg = small_preset(make_config("keydoor", "asgrl", seed=0), total_steps=20_000)
    cfg = merge_overrides(cfg, {"learner": {"skill_max_steps": spec.skill_max_steps}, "eval_episodes": 3})
    result = train(cfg)  # binds "keydoor" itself, as ``asg train --domain keydoor`` does
    assert result.success_rate == 1.0, result.to_json()
    assert result.steps_to_success is not None and result.steps_to_success <= 20_000


def test_same_seed_same_metrics(model):
    spec = corridor_domain("keydoor-seeded", model)
    cfg = small_preset(make_config(spec.name, "asgrl", seed=3), total_steps=3_000)
    cfg = merge_overrides(cfg, {"learner": {"skill_max_steps": 60}})
    first, second = (train(cfg, bind_spec(spec)).to_json() for _ in range(2))
    for result in (first, second):
        result.pop("wall_seconds")
    assert first == second


def test_factory_without_max_steps_gets_a_time_limit(model):
    spec = plugins.make_domain("keydoor-factory", env=make_corridor, labeler=KEYDOOR_LABELS, model=model)
    env = spec.make_env(max_steps=5)
    env.reset(seed=0)
    outcomes = [env.step(0)[3] for _ in range(5)]
    assert outcomes == [False] * 4 + [True]
    assert spec.env_id.endswith(":make_corridor")


def test_a_world_keeps_its_own_time_limit(model, monkeypatch):
    """Episodes end where the env's own do (Minigrid's max_steps: 10 x 5 x 5 on DoorKey-5x5), in
    training as in the flat baselines; ``max_episode_steps`` overrides; an env with none gets 2000."""
    pytest.importorskip("minigrid")
    monkeypatch.chdir(EXAMPLES / "doorkey")
    monkeypatch.delitem(sys.modules, "labels", raising=False)
    spec = plugins.domain_from_parts("MiniGrid-DoorKey-5x5-v0", "labels:DOORKEY", "doorkey.pddl", observation="view")
    sys.modules.pop("labels", None)
    binding = bind_spec(spec)
    assert binding.episode_limit == spec.episode_limit() == 250
    env = spec.make_env()
    env.reset(seed=0)
    truncated = [env.step(0)[3] for _ in range(250)]  # turning left never ends the episode otherwise
    assert truncated == [False] * 249 + [True]
    assert plugins.own_episode_limit(spec.make_env(max_steps=30)) == 30
    capped = plugins.make_domain("keydoor-capped", env=make_corridor, labeler=KEYDOOR_LABELS, model=model,
                                 max_episode_steps=40)
    assert capped.episode_limit() == 40 and plugins.own_episode_limit(capped.make_env()) == 40
    bare = plugins.make_domain("keydoor-bare", env=make_corridor, labeler=KEYDOOR_LABELS, model=model)
    assert bare.episode_limit() == plugins.DEFAULT_EPISODE_STEPS == 2000


def test_a_babyai_level_keeps_its_own_limit_and_takes_max_steps(model):
    """BabyAI levels and ObstructedMaze take ``max_steps`` through ``**kwargs`` (Minigrid's base
    class has it), so a cap reaches the env itself rather than a TimeLimit its own limit undercuts;
    a BabyAI level sets its own limit at reset (576 on KeyInBox), not 0 as it reads before one."""
    pytest.importorskip("minigrid")
    for env_id, own in (("BabyAI-KeyInBox-v0", 576), ("MiniGrid-ObstructedMaze-1Dl-v0", 288)):
        spec = plugins.make_domain("level", env=env_id, labeler={"(has-key)": lambda env: False}, model=model)
        assert spec.episode_limit() == own
        env = spec.make_env(max_steps=5000)
        env.reset(seed=0)
        assert env.unwrapped.max_steps == 5000


def test_label_table_decorator_and_fixed_seed(model):
    table = LabelTable("keydoor")

    @table.atom("(has-key)", monotone=True)
    def has_key(env):
        return env.has_key

    table.atom("(door-open)")(lambda env: env.door_open)
    table.atom("(at-goal)")(lambda env: env.pos == 6)
    spec = plugins.make_domain("keydoor-table", env=KeyDoorCorridor, labeler=table, model=model, fixed_seed=7)
    assert spec.labeler.reads == "env" and {str(a) for a in spec.labeler.monotone} == {"(has-key)"}
    spec.load_task()
    env = spec.make_env()
    assert isinstance(env, plugins.FixedSeed)
    env.reset(seed=1)
    assert env.unwrapped.np_random_seed == 7


def test_registration_refuses_taken_and_builtin_names(model, registered):
    asg.register_domain("keydoor-twice", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model)
    registered.append("keydoor-twice")
    with pytest.raises(plugins.DomainRegistrationError, match="already registered.*replace=True"):
        asg.register_domain("keydoor-twice", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model)
    asg.register_domain("keydoor-twice", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model, replace=True)
    with pytest.raises(plugins.DomainRegistrationError, match="one of asg's own domains"):
        asg.register_domain("mario", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model)
    with pytest.raises(plugins.DomainRegistrationError, match="not a domain"):
        plugins.add_domain(object())
    with pytest.raises(plugins.PluginError, match="^observation pixels: domain 'x'"):
        plugins.make_domain("x", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model=model, observation="pixels")
    with pytest.raises(plugins.PluginError, match="^model nowhere.pddl: no such file"):
        plugins.make_domain("x", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS, model="nowhere.pddl")


def test_unknown_names_still_list_the_choices():
    with pytest.raises(UnknownDomainError, match="choose one of .*mario"):
        get_domain("zelda")
    with pytest.raises(DomainError, match="unknown domain 'zelda'; choose from .*mario"):
        bind_domain("zelda")


# ------------------------------------------------------------------------- the resolver's errors
@pytest.fixture
def labels_module(tmp_path, monkeypatch):
    """A labeler module on sys.path: good and bad labelers, and env factories."""
    (tmp_path / "toy_labels.py").write_text(textwrap.dedent(f"""
        import sys
        test = sys.modules[{__name__!r}]
        GOOD = test.KEYDOOR_LABELS
        SHORT = {{"(has-key)": lambda env: env.has_key}}
        RAISES = {{**GOOD, "(door-open)": lambda env: env.no_such_field}}
        NUMBER = 42
        NOT_CALLABLE = {{"(has-key)": True}}
        make_env = test.make_corridor
        NOT_AN_ENV = 3
        def make_list():
            return []
    """))
    (tmp_path / "broken_labels.py").write_text("import not_installed_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toy_labels"
    for name in ("toy_labels", "broken_labels"):
        sys.modules.pop(name, None)


def test_domain_from_parts_builds_a_checked_domain(labels_module, model):
    spec = plugins.domain_from_parts(f"{labels_module}:make_env", f"{labels_module}:GOOD", str(model))
    assert spec.name == "toy_labels-make_env" and spec.source == "parts"
    binding = bind_spec(spec)
    assert binding.name == spec.name
    spec = plugins.domain_from_parts("CartPole-v1", f"{labels_module}:GOOD", str(model), check=False)
    assert spec.env == "CartPole-v1"


@pytest.mark.parametrize("env, labeler, error, message", [
    ("CartPole-v1", "mypkg.x:Y", plugins.PluginImportError, "labeler mypkg.x:Y: no module mypkg.x"),
    ("CartPole-v1", "no_colon", plugins.PluginImportError, "labeler no_colon: expected module:NAME"),
    ("CartPole-v1", "toy_labels:MISSING", plugins.PluginImportError,
     "labeler toy_labels:MISSING: module toy_labels has no attribute MISSING"),
    ("CartPole-v1", "broken_labels:X", plugins.PluginImportError,
     "labeler broken_labels:X: importing broken_labels failed: No module named 'not_installed_dependency_xyz'"),
    ("CartPol-v1", "toy_labels:GOOD", plugins.UnknownEnvError,
     "env CartPol-v1: no Gymnasium id 'CartPol-v1' is registered (did you mean CartPole-v1?)"),
    ("nomodule_abc:make", "toy_labels:GOOD", plugins.PluginImportError,
     "env nomodule_abc:make: no module nomodule_abc"),
    ("toy_labels:nothing", "toy_labels:GOOD", plugins.UnknownEnvError,
     "env toy_labels:nothing: module toy_labels has no attribute nothing and registers no Gymnasium id"),
    ("toy_labels:NOT_AN_ENV", "toy_labels:GOOD", plugins.UnknownEnvError,
     "env toy_labels:NOT_AN_ENV: NOT_AN_ENV is a int, not a callable"),
    ("toy_labels:make_list", "toy_labels:GOOD", plugins.UnknownEnvError,
     "env toy_labels:make_list: the factory returned a list, not a gymnasium.Env"),
    ("toy_labels:make_env", "toy_labels:NUMBER", plugins.LabelerTypeError,
     "labeler toy_labels:NUMBER: a int; expected a dict"),
    ("toy_labels:make_env", "toy_labels:NOT_CALLABLE", plugins.LabelerTypeError,
     "labeler toy_labels:NOT_CALLABLE: (has-key) maps to a bool, not a predicate"),
    ("toy_labels:make_env", "toy_labels:RAISES", LabelerEvaluationError,
     "labeler toy_labels-make_env: (door-open) raised AttributeError: 'KeyDoorCorridor' object has no attribute "
     "'no_such_field' (first evaluation, on a reset"),
    ("CartPole-v1", "toy_labels:GOOD", LabelerEvaluationError, "(has-key) raised AttributeError"),
])
def test_domain_from_parts_errors_are_one_line(labels_module, model, env, labeler, error, message):
    with pytest.raises(error) as info:
        plugins.domain_from_parts(env, labeler, str(model))
    text = str(info.value)
    assert isinstance(info.value, AsgError) and "\n" not in text
    assert text.startswith(message) or message in text, text
    assert "--" not in text  # library errors name parameters, not command-line flags


def test_vocabulary_check_names_every_missing_atom(labels_module, model):
    with pytest.raises(UnknownAtomError) as info:
        plugins.domain_from_parts(f"{labels_module}:make_env", f"{labels_module}:SHORT", str(model))
    text = str(info.value)
    assert "does not know (at-goal) (door-open)" in text and str(model) in text


def test_missing_model_and_discrete_actions(labels_module, model):
    with pytest.raises(plugins.PluginError, match="^model none.pddl: no such file or bundled model"):
        plugins.domain_from_parts(f"{labels_module}:make_env", f"{labels_module}:GOOD", "none.pddl")
    spec = plugins.make_domain("pendulum", env="Pendulum-v1", labeler=KEYDOOR_LABELS, model=model)
    with pytest.raises(plugins.UnknownEnvError, match="learners need a Discrete one"):
        spec.check_env()


# ------------------------------------------------------------------------- entry points
def _fake_distribution(root: Path, name: str, entry_points: str) -> None:
    """A ``*.dist-info`` folder on ``root``: what importlib.metadata reads for an installed package."""
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\n{entry_points}")


@pytest.fixture
def plugin_path(tmp_path, monkeypatch, model):
    """A tmp sys.path entry holding an installed-looking plug-in package with good and broken entry points."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "toy_plugin.py").write_text(textwrap.dedent(f"""
        import sys
        def domain():
            return sys.modules[{__name__!r}].corridor_domain("toy-plugin", {str(model)!r})
        def misnamed():
            return sys.modules[{__name__!r}].corridor_domain("other-name", {str(model)!r})
        NOT_A_DOMAIN = 3
    """))
    _fake_distribution(root, "asg-toy-plugin", "toy-plugin = toy_plugin:domain\n"
                                               "toy-broken = toy_plugin_missing:domain\n"
                                               "toy-misnamed = toy_plugin:misnamed\n"
                                               "toy-number = toy_plugin:NOT_A_DOMAIN\n")
    monkeypatch.syspath_prepend(str(root))
    plugins.discover(refresh=True)
    yield root
    monkeypatch.undo()
    sys.modules.pop("toy_plugin", None)
    plugins.discover(refresh=True)


def test_entry_points_are_listed_without_loading_and_bound_on_lookup(plugin_path):
    assert {"toy-plugin", "toy-broken"} <= set(asgrl_domains())
    assert "toy_plugin" not in sys.modules  # listing loads nothing
    spec = get_domain("toy-plugin")
    assert spec.source == "entry point toy-plugin (package asg-toy-plugin)"
    assert bind_domain("toy-plugin").task.goal
    assert get_domain("mario").name == "mario"  # a broken plug-in does not break the others


@pytest.mark.parametrize("name, message", [
    ("toy-broken", "entry point toy-broken = toy_plugin_missing:domain (package asg-toy-plugin, group asg.domains): "
                   "ModuleNotFoundError: No module named 'toy_plugin_missing'"),
    ("toy-misnamed", "gives domain 'other-name'; name the entry point after its domain"),
    ("toy-number", "entry point toy-number = toy_plugin:NOT_A_DOMAIN (package asg-toy-plugin, group asg.domains): "
                   "a int is not a domain"),
])
def test_broken_entry_point_is_one_line_naming_it_and_its_package(plugin_path, name, message):
    with pytest.raises(plugins.EntryPointError) as info:
        get_domain(name)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_two_packages_declaring_one_domain(plugin_path):
    _fake_distribution(plugin_path, "asg-other-plugin", "toy-plugin = toy_plugin:domain\n")
    plugins.discover(refresh=True)
    with pytest.raises(plugins.EntryPointError, match="declared by 2 asg.domains entry points"):
        get_domain("toy-plugin")


# ------------------------------------------------------------------------- examples (Minigrid)
def test_example_package_declares_the_entry_point():
    import tomllib

    data = tomllib.loads((EXAMPLES / "plugin_package" / "pyproject.toml").read_text())
    assert data["project"]["entry-points"][plugins.ENTRY_POINT_GROUP] == {"doorkey": "asg_doorkey:domain"}


@pytest.mark.parametrize("folder, env_id, labeler", [
    ("doorkey", "MiniGrid-DoorKey-8x8-v0", "labels:DOORKEY"),
    ("unlockpickup", "MiniGrid-UnlockPickup-v0", "labels:UNLOCKPICKUP"),
])
def test_examples_resolve_from_their_folder(monkeypatch, folder, env_id, labeler):
    pytest.importorskip("minigrid")
    monkeypatch.chdir(EXAMPLES / folder)
    monkeypatch.delitem(sys.modules, "labels", raising=False)
    spec = plugins.domain_from_parts(env_id, labeler, f"{folder}.pddl")
    task = bind_spec(spec).task
    assert len(task.facts) >= 3
    env = spec.make_env(max_steps=50)
    obs, _ = env.reset(seed=0)
    assert isinstance(env, plugins.StateObservation) and obs.dtype == np.uint8
    assert spec.labeler(env) == frozenset()  # nothing of the model holds at the start
    sys.modules.pop("labels", None)


def test_fixed_seed_doorkey_runs_through_training(monkeypatch):
    """Tabular skills on one DoorKey-5x5 layout: a few thousand steps run without error."""
    pytest.importorskip("minigrid")
    monkeypatch.chdir(EXAMPLES / "doorkey")
    monkeypatch.delitem(sys.modules, "labels", raising=False)
    spec = plugins.domain_from_parts("MiniGrid-DoorKey-5x5-v0", "labels:DOORKEY", "doorkey.pddl",
                                     name="doorkey-5x5", fixed_seed=0)
    sys.modules.pop("labels", None)
    cfg = small_preset(make_config(spec.name, "asgrl", seed=0), total_steps=3_000)
    cfg = merge_overrides(cfg, {"learner": {"skill_max_steps": 100}})
    result = train(cfg, bind_spec(spec))
    assert result.env_steps >= 3_000 and result.status in ("finished", "solved")


# ------------------------------------------------------------------------- the command line
def _cli(*args: str):
    from click.testing import CliRunner

    from asg.cli.main import main

    result = CliRunner().invoke(main, [str(a) for a in args])
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    return result, lines


@pytest.fixture
def world_folder(tmp_path, monkeypatch):
    """A user's folder: the corridor's factory and labeler in ``world.py``, the model beside it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "world.py").write_text(textwrap.dedent(f"""
        import sys
        test = sys.modules[{__name__!r}]
        make_env = test.make_corridor
        LABELS = test.KEYDOOR_LABELS
        SHORT = {{"(has-key)": lambda env: env.has_key}}
    """))
    (folder / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    monkeypatch.chdir(folder)
    before = set(plugins.plugin_names())
    yield folder
    sys.modules.pop("world", None)
    for name in set(plugins.plugin_names()) - before:  # the CLI registers the world it trains
        plugins.unregister_domain(name)


def test_cli_trains_resumes_and_evaluates_a_world_of_ones_own(world_folder, tmp_path, monkeypatch):
    out = tmp_path / "run"
    args = ["--env", "world:make_env", "--labeler", "world:LABELS", "--model", "keydoor.pddl", "--eval-episodes", "2"]
    first, errors = _cli("train", *args, "--steps", "3000", "--out", out, "--quiet", "--json")
    assert first.exit_code == 0 and not errors, first.output
    saved = __import__("json").loads((out / "config.json").read_text())["plugin"]
    assert saved["env"] == "world:make_env" and Path(saved["model"]).is_absolute()
    assert (out / "subgoals.json").is_file() and (out / "landmarks.json").is_file()
    monkeypatch.chdir(tmp_path)  # elsewhere: the run imports its labeler from where it was trained
    sys.modules.pop("world", None)
    resumed, errors = _cli("train", "--resume", out, "--steps", "20000", "--quiet", "--json")
    assert resumed.exit_code == 0 and not errors, resumed.output
    result = __import__("json").loads(resumed.output[resumed.output.index("{"):])
    assert result["env_steps"] > 3000 and result["greedy_success_rate"] == 1.0
    evaluated, errors = _cli("eval", out, "--episodes", "3", "--json")
    assert evaluated.exit_code == 0 and not errors, evaluated.output
    assert __import__("json").loads(evaluated.output)["success_rate"] == 1.0
    config = __import__("json").loads((out / "config.json").read_text())
    assert config["plugin"]["episode_limit"] == 2000  # the corridor has no limit of its own
    config["plugin"]["episode_limit"] = 100  # a run whose episodes ended elsewhere is not continued
    (out / "config.json").write_text(__import__("json").dumps(config))
    refused, errors = _cli("train", "--resume", out, "--steps", "30000", "--quiet")
    assert refused.exit_code == 2 and len(errors) == 1 and "its episodes ended at 100 steps" in errors[0], \
        refused.output


@pytest.mark.parametrize("args, message", [
    (["--env", "world:make_env", "--model", "keydoor.pddl"], "--labeler: needed with --env"),
    (["--labeler", "world:LABELS", "--model", "keydoor.pddl"], "--env: needed with --labeler"),
    (["--env", "world:make_env", "--labeler", "world:LABELS"], "--model: needed with --env"),
    (["--env", "world:make_env", "--labeler", "world:LABELS", "--model", "keydoor.pddl", "--domain", "mario"],
     "--env: not with --domain"),
    (["--env", "world:make_env", "--labeler", "nowhere:LABELS", "--model", "keydoor.pddl"],
     "--labeler nowhere:LABELS: no module nowhere"),
    (["--env", "World-Nope-v0", "--labeler", "world:LABELS", "--model", "keydoor.pddl"],
     "--env World-Nope-v0: no Gymnasium id 'World-Nope-v0' is registered"),
    (["--env", "world:make_env", "--labeler", "world:SHORT", "--model", "keydoor.pddl"], "(at-goal)"),
    (["--env", "world:make_env", "--labeler", "world:LABELS", "--model", "missing.pddl"], "missing.pddl"),
    (["--env", "world:make_env", "--labeler", "world:LABELS", "--model", "keydoor.pddl", "--stage", "goal-policy"],
     "--stage: only with --domain fetch-programs"),
    (["--domain", "mario", "--observation", "view"], "--observation: only with --env"),
    (["--env", "world:make_env", "--labeler", "world:LABELS", "--model", "keydoor.pddl", "--observation", "view"],
     "is not a Minigrid env; the egocentric view is Minigrid's"),
])
def test_cli_errors_of_a_world_of_ones_own_are_one_line(world_folder, args, message):
    result, errors = _cli("train", *args)
    assert result.exit_code == 2 and len(errors) == 1 and message in errors[0], result.output
    assert not (world_folder / "runs").exists()


def test_the_egocentric_view_is_minigrids_only(model):
    from asg.learning.asgrl.trainer import learner_observation

    spec = corridor_domain("corridor-view", model, observation="view")
    with pytest.raises(plugins.PluginError, match="not a Minigrid env"):
        spec.make_env()
    assert learner_observation(make_corridor, "deep") == "env"  # deep skills read a toy env's own observation


def test_each_world_folder_gets_its_own_module_of_a_shared_name(tmp_path, monkeypatch):
    """Two worlds whose labelers are both ``labels.py`` (as in examples/): in one process (a grid's
    cells, ``python -c`` with ``""`` on ``sys.path``) each folder's own module is imported."""
    monkeypatch.syspath_prepend("")
    for key in [k for k in sys.modules if k == "labels" or k.startswith("labels.")]:
        monkeypatch.delitem(sys.modules, key)
    folders = []
    for value in (1, 2):
        folder = tmp_path / f"world{value}"
        folder.mkdir()
        (folder / "labels.py").write_text(f"VALUE = {value}\n")
        folders.append(folder)
    assert plugins.import_object("labels:VALUE", "labeler", folders[0]) == 1
    assert plugins.import_object("labels:VALUE", "labeler", folders[1]) == 2
    assert plugins.import_object("labels:VALUE", "labeler", folders[0]) == 1
    monkeypatch.delitem(sys.modules, "labels")
