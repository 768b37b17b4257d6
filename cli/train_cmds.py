"""``asg train``, ``asg eval``, ``asg compare``: options in, one library call, results out.

``--domain`` picks the workflow through the library's registry (``registry.domain_family``): an
ASGRL domain trains skills and a meta-controller (``asgrl.trainer.train``); ``fetch-programs``
trains the AlphaNPI-X pipeline or one ``--stage`` of it (``fetch_programs.train``) and scores
it (``fetch_programs.evaluate_suite``). An option of one workflow only is ``Scoped`` to it: given
in another, it is a usage error naming the option, before any work starts.
"""
from __future__ import annotations

import functools
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from asg.cli.options import (
    LazyChoice,
    ModelPath,
    OutputPath,
    Scoped,
    check_grid_options,
    echo_result,
    existing,
    fields_as_options,
    flag,
    grid_options,
    own_world_as_options,
    print_next,
    refuse_out_of_scope,
    split_list,
    world_parts,
)
from asg.cli.progress import Stages
from asg.learning.fetch_programs import DOMAIN, MODES, STAGES, SUITES, WORLD_MODELS
from asg.planning.errors import AsgError

ASGRL = "asgrl"
FETCH = ("pipeline", *STAGES)  # the workflows of --domain fetch-programs: the whole pipeline, or one stage
asgrl = functools.partial(click.option, cls=Scoped, scope=[ASGRL])
option = functools.partial(click.option, cls=Scoped)  # scope=[workflows] (absent: every workflow)
RESUME_REFUSES = ("domain", "env_id", "observation", "model", "k", "skills", "config_file", "preset", "eval_epsilon",
                  "curve_eval", "out")  # a resumed run keeps its saved config and folder
FETCH_TRAIN = ("preset", "seed", "config_file", "workers", "ray_address", "max_epochs", "goal_policy_epochs",
               "policy", "episodes", "world_model_kind", "behaviour_model", "iterations", "reuse_shipped", "carry",
               "refill_episodes")
FETCH_EVAL = ("seed", "policy", "starts", "mode", "checkpoint", "world_model_kind", "behaviour_model", "out",
              "z_tolerance", "xy_tolerance")


def _method_names() -> list[str]:
    from asg.learning.registry import METHODS

    return list(METHODS)


def _preset_names() -> list[str]:
    from asg.learning.asgrl.config import PRESETS

    return list(PRESETS)


def _family(domain: str) -> str:
    """``asgrl`` or ``fetch-programs`` for a known domain; a usage error naming --domain otherwise."""
    from asg.learning.errors import DomainError
    from asg.learning.registry import domain_family

    try:
        return domain_family(domain)
    except DomainError as err:
        raise AsgError(f"--domain: {err}") from None


def _train_scope_error(option: str, scope: frozenset[str], workflow: str) -> str:
    if workflow == ASGRL:
        return f"{option}: only with --domain {DOMAIN}"
    where = "without --stage (the whole pipeline)" if workflow == "pipeline" else f"--stage {workflow}"
    stages = sorted(scope & set(STAGES))
    hint = "" if not stages else "; only with --stage " + " or ".join(stages)
    return f"{option}: not an option of --domain {DOMAIN} {where}{hint}"


def _eval_scope_error(option: str, scope: frozenset[str], workflow: str) -> str:
    if workflow == ASGRL:
        return f"{option}: only with --domain {DOMAIN}"
    return f"{option}: only with --suite {' or '.join(sorted(scope))}"


@click.command("train", short_help="Train ASGRL on a domain (or the Fetch pipeline).")
@click.option("--domain", help="An ASGRL domain (household-v1, household-v2, minecraft, mario, pixel-mario, "
                               "or a plug-in's) or fetch-programs (the AlphaNPI-X pipeline).")
@asgrl("--env", "env_id", help="A world of your own instead of --domain: a Gymnasium id or module:callable, "
                               "with --labeler and --model (examples/).")
@asgrl("--labeler", help="With --env: module:NAME of its labeler (a dict atom -> predicate, or a Labeler).")
@asgrl("--observation", type=click.Choice(["state", "view", "env"]),
       help="With --env: what the skills read: state (Markov, for Q tables), view (Minigrid's egocentric "
            "view) or env (its own); default state, with --skills deep view (Minigrid) or env.")
@asgrl("--method", type=LazyChoice(_method_names), default="asgrl", show_default=True,
       help="ASGRL: the learner (ASGRL, or one of the paper's baselines).")
@asgrl("--model", type=ModelPath(), help="ASGRL: the symbolic model (PDDL file or bundled name; default: the "
                                         "domain's).")
@asgrl("--k", type=click.IntRange(min=1), help="ASGRL: diverse skills per landmark (all landmarks).")
@asgrl("--skills", type=click.Choice(["tabular", "deep"]),
       help="ASGRL: Q tables, or a torch Q-network with k-means counts of end states (App. D).")
@asgrl("--steps", type=click.IntRange(min=1), help="ASGRL: env-step budget (default 500000).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--out", type=OutputPath("dir"), help="Run folder (default runs/<domain>-<method>-seed<N>).")
@option("--config", "config_file", type=existing("file"), scope=[ASGRL, *STAGES],
        help="JSON file of config fields over the preset (ASGRL, or one fetch-programs --stage).")
@option("--resume", type=click.Path(path_type=Path, file_okay=False), scope=[ASGRL, *STAGES],
        help="Continue the run in DIR.")
@asgrl("--eval-episodes", type=click.IntRange(min=1), help="ASGRL: greedy episodes per evaluation point.")
@asgrl("--eval-epsilon", type=click.FloatRange(0.0, 1.0),
       help="ASGRL: ε of the final evaluation beside the greedy one (default 0.05, the paper's).")
@asgrl("--curve-eval", type=click.Choice(["greedy", "epsilon"]), help="ASGRL: protocol of the curve points "
                                                                      "(default greedy).")
@click.option("--preset", help="ASGRL: asg (default) or paper (App. G, every addition of ours off); "
                               "fetch-programs: fast (default), paper (Table 5) or learned (fast with no "
                               "scripted expert).")
@option("--stage", type=click.Choice(STAGES), scope=FETCH, help="fetch-programs: train one stage only.")
@option("--reuse-shipped", is_flag=True, default=None, scope=["pipeline"],
        help="fetch-programs pipeline: use asg's shipped files for stages not trained in --out.")
@option("--workers", type=click.IntRange(min=1), scope=["pipeline", "goal-policy", "meta-controller"],
        help="fetch-programs: rollout / self-play workers.")
@option("--ray-address", scope=["goal-policy", "meta-controller"],
        help="fetch-programs goal-policy / meta-controller: Ray cluster address.")
@option("--max-epochs", type=click.IntRange(min=1), scope=["goal-policy"],
        help="goal-policy: stop after N epochs (resumable).")
@option("--carry", type=existing("any"), scope=["goal-policy"],
        help="goal-policy: continue a run carried across machines (its carry.npz, or a run folder holding one) "
             "in the new folder --out, the replay buffer refilled (the buffer is all that is lost).")
@option("--refill-episodes", type=click.IntRange(min=0), scope=["goal-policy"],
        help="goal-policy with --carry: episodes that refill the replay buffer (default: checkpoint_every epochs').")
@option("--goal-policy-epochs", type=click.IntRange(min=1), scope=["pipeline"],
        help="fetch-programs pipeline: the goal policy trains to epoch N of its schedule, the stages after "
             "it use it as it is then (a larger N continues it).")
@option("--policy", type=existing("any"), scope=["behaviour-model"],
        help="behaviour-model: the goal policy (default: the shipped one).")
@option("--episodes", type=click.IntRange(min=1), scope=["behaviour-model"],
        help="behaviour-model: episodes to collect.")
@option("--world-model", "world_model_kind", type=click.Choice(WORLD_MODELS), scope=["pipeline", "meta-controller"],
        help="fetch-programs: the model the meta-controller searches in (default learned).")
@option("--behaviour-model", type=existing("any"), scope=["meta-controller"],
        help="meta-controller: the learned model file (default: the shipped one).")
@option("--iterations", type=click.IntRange(min=1), scope=["meta-controller"],
        help="meta-controller: training iterations.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def train_cmd(ctx: click.Context, **params: Any) -> None:
    """Learn skills and a meta-controller from a domain's symbolic model; report success.

    ASGRL writes a run folder (config.json, landmarks.json, subgoals.json, metrics.csv,
    learning_curve.png, model_hints.json, checkpoint, result.json) and ends with where an unsolved
    run stalls and the top model hints (asg eval RUN --hints prints them all). Ctrl-C or SIGTERM
    checkpoint; --resume DIR continues (exit 130 when interrupted). --domain fetch-programs trains
    the AlphaNPI-X pipeline (goal policy, behaviour model, meta-controller) or one --stage of it.
    """
    domain = params["domain"]
    if domain is None and params["resume"] is None and params["env_id"] is None and params["labeler"] is None:
        raise AsgError("--domain is required (or --env with --labeler and --model, or --resume DIR)")
    workflow = ASGRL if domain is None or _family(domain) == ASGRL else params["stage"] or "pipeline"
    refuse_out_of_scope(ctx, workflow, _train_scope_error)
    if params["resume"] is not None:
        refused = [name for name in RESUME_REFUSES if name != "domain" or workflow == ASGRL]  # fetch needs --domain
        given = [name for name in refused if params[name] is not None]
        if given:
            raise AsgError(f"{flag(given[0])}: not with --resume (give only budgets, --quiet and --json with it: "
                           "the run keeps its saved config and folder)")
    stages = Stages(quiet=params["quiet"])
    result, wrote, again, follow = (_train_asgrl if workflow == ASGRL else _train_fetch)(params, workflow, stages)
    echo_result(result, params["as_json"])
    if result.status == "interrupted":
        click.echo(f"interrupted; continue with: {again}", err=True)
        sys.exit(130)
    if not params["as_json"]:
        from asg.learning.run_dir import describe_files

        if workflow == ASGRL and wrote is not None:
            _echo_hints(wrote)
        if wrote is not None:
            click.echo(f"wrote {describe_files(wrote)}")
        if follow:
            print_next(*follow)


Outcome = tuple[Any, Path | None, str, list[tuple[str, str]]]  # result, run folder written, resume, next


def _train_asgrl(p: dict[str, Any], workflow: str, stages: Stages) -> Outcome:
    from asg.learning.asgrl.trainer import TrainRun, own_world, run_config, stage_label, train
    from asg.learning.errors import RunFailedError
    from asg.learning.registry import bind_domain
    from asg.learning.run_dir import default_run_path

    own = world_parts(p["domain"], p["env_id"], p["labeler"], p["model"])
    if p["resume"] is not None:
        run = TrainRun.resume(p["resume"], steps=p["steps"])
        _family(run.cfg.domain)
    else:
        if p["observation"] is not None and not own:
            raise AsgError("--observation: only with --env (a world of your own)")
        domain, plugin = p["domain"], None
        if own:
            with own_world_as_options():
                domain, plugin = own_world(p["env_id"], p["labeler"], p["model"], observation=p["observation"],
                                           skills=p["skills"])
        model = plugin["model"] if plugin is not None else str(p["model"]) if p["model"] else None
        binding = bind_domain(domain, model)  # the world resolved once: its config and its run come from it
        with fields_as_options(total_steps="steps", final_eval_epsilon="eval_epsilon"):
            cfg = run_config(binding, p["method"], p["preset"] or "asg", seed=p["seed"], model=model,
                             plugin=plugin is not None, config_file=p["config_file"], k=p["k"], skills=p["skills"],
                             total_steps=p["steps"], eval_episodes=p["eval_episodes"],
                             final_eval_epsilon=p["eval_epsilon"], curve_eval=p["curve_eval"])
        # the model is read, the subgoals built and checked before any file is written
        run = TrainRun.create(p["out"] or default_run_path("runs", domain, p["method"], p["seed"]), cfg, binding,
                              plugin=plugin)
    reason = None
    try:
        result = train(run.cfg, run.binding, run_dir=run.run_dir, resume=run.resumed, progress=stages,
                       subgoals=run.subgoals)
        stages(stage_label(run.cfg), result.env_steps, run.cfg.total_steps)
        reason = result.stop_reason()
    except RunFailedError as err:  # the world's own code raised: the run is checkpointed (asgrl.failures)
        if not err.saved:
            raise
        steps = f" --steps {p['steps']}" if p["resume"] is not None and p["steps"] else ""  # not in config.json
        raise AsgError(f"{err}; after fixing it: asg train --resume {shlex.quote(str(run.run_dir.path))}{steps}") \
            from err
    finally:
        stages.close(reason)
    path = run.run_dir.path
    follow = [(f"asg eval {path}", "re-evaluate the frozen greedy policy"),
              (f"asg landmarks {run.model_name}", "the subgoals its skills were learned for")]
    if run.run_dir.has_model_hints():
        follow.append((f"asg eval {path} --hints", "the model hints with their evidence"))
    if "plugin" not in run.run_dir.read_config():
        follow.append((f"asg compare --domain {run.cfg.domain} --seeds 3", "against the paper's baselines"))
    return result, path, f"asg train --resume {path}", follow


def _echo_hints(path: Path) -> None:
    """The top model hints a run folder's training left (``model_hints.json``), where it has them."""
    from asg.learning.run_dir import RunDir

    run = RunDir(path)
    if run.has_model_hints():
        click.echo("\n".join(run.read_model_hints().lines(top=3, brief=True)))


def _train_fetch(p: dict[str, Any], workflow: str, stages: Stages) -> Outcome:
    from asg.learning import fetch_programs as fp

    stage = None if workflow == "pipeline" else workflow
    try:
        with fields_as_options():
            result = fp.train(stage, p["resume"] or p["out"], resume=p["resume"] is not None, progress=stages,
                              on_stage=lambda name, what: click.echo(f"[{name}] {what}", err=True),
                              **{name: p[name] for name in FETCH_TRAIN})
    finally:
        stages.close()
    out, eval_atomic = result.run_dir, f"asg eval --domain {DOMAIN} --suite atomic --policy"
    eval_table = f"asg eval --domain {DOMAIN} --suite non-atomic --mode replan --checkpoint"
    if stage is None:
        done = len(result.stages) == len(STAGES)
        follow = [(f"{eval_atomic} {result.artifact('goal-policy')}", ""),
                  (f"{eval_table} {result.stages['meta-controller'].source} --world-model learned --behaviour-model "
                   f"{result.artifact('behaviour-model')}", "")] if done else []
        return result, None, f"asg train --domain {DOMAIN} --out {out}", follow
    follow = {"goal-policy": [f"{eval_atomic} {result.artifact}",
                              f"asg train --domain {DOMAIN} --stage behaviour-model --policy {result.artifact}"],
              "behaviour-model": [f"asg train --domain {DOMAIN} --stage meta-controller --behaviour-model "
                                  f"{result.artifact}"],
              "meta-controller": [f"{eval_table} {out} --world-model {result.summary.get('model', 'learned')}"]}
    return (result, Path(out), f"asg train --domain {DOMAIN} --stage {stage} --resume {out}",
            [(command, "") for command in follow[stage]])


@click.command("eval", short_help="Re-evaluate a saved run, or the Fetch programs.")
@click.argument("run_dir", type=click.Path(path_type=Path), required=False)
@click.option("--domain", help="fetch-programs: evaluate the Fetch programs (no RUN_DIR); an ASGRL "
                               "domain: check that RUN_DIR holds a run of it.")
@click.option("--episodes", type=click.IntRange(min=1), help="Episodes (default: the run's; fetch 100).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@option("--hints", is_flag=True, default=None, scope=[ASGRL],
        help="Print the model hints the run's training left (model_hints.json) instead of evaluating.")
@option("--retry-epsilon", type=click.FloatRange(0.0, 1.0), scope=[ASGRL],
        help="A run that follows a cut run of the same landmark acts randomly with this probability "
             "(learner.retry_epsilon, ours; needs a run trained with learner.retry_timed_out).")
@option("--retry-other-skill", is_flag=True, default=None, scope=[ASGRL],
        help="After a cut run, the meta-controller chooses among the landmark's skills not yet cut "
             "(learner.retry_other_skill, ours; needs a run trained with learner.retry_timed_out).")
@option("--suite", type=click.Choice(SUITES), scope=SUITES,
        help="fetch-programs: which programs (default atomic).")
@option("--programs", "program_list", metavar="A,B", scope=["atomic"],
        help="atomic: only these programs (comma-separated).")
@option("--policy", type=existing("any"), scope=SUITES,
        help="fetch-programs: goal policy (default: the shipped one).")
@option("--starts", type=click.Choice(["table", "chained", "handoff", "placing", "other_zone"]), scope=["atomic"],
        help="atomic: every block on the table (default), set up as inside a non-atomic program (chained), or "
             "chained with the last placed block still held, as a learned program leaves it (handoff), or "
             "chained with the program's own block held 2.5-5 cm above its target (placing), or chained with "
             "the blocks the setting leaves unused first put into the other zone (other_zone).")
@option("--z-tolerance", type=click.FloatRange(min=0.0, min_open=True), scope=["atomic"],
        help="atomic: also score the same episodes with the goal test that wants each block within this height "
             "(m) of its target (the fast/learned presets' 0.02).")
@option("--xy-tolerance", type=click.FloatRange(min=0.0, min_open=True), scope=["atomic"],
        help="atomic: that goal test (or, alone, the 5 cm ball) also wants each block within this horizontal "
             "distance (m) of its target (schedule.goal_xy_tolerance).")
@option("--mode", type=click.Choice(MODES), scope=["non-atomic"],
        help="non-atomic: inference mode (default replan).")
@option("--checkpoint", type=existing("any"), scope=["non-atomic"],
        help="non-atomic: meta-controller file or run folder (default: the shipped one).")
@option("--world-model", "world_model_kind", type=click.Choice(WORLD_MODELS), scope=["non-atomic"],
        help="non-atomic: the model searched in (default learned).")
@option("--behaviour-model", type=existing("any"), scope=["non-atomic"],
        help="non-atomic: learned model (default: the shipped one).")
@option("--psi-prunings", type=click.Choice(["on", "off"]), scope=["non-atomic"],
        help="non-atomic: override the meta-controller's ψ prunings (ours; off: the paper's masks).")
@option("--stop-at-expansion", type=click.Choice(["on", "off"]), scope=["non-atomic"],
        help="non-atomic: override the meta-controller's Stop scored at expansion (ours; off: the paper's).")
@option("--success-weighting", type=click.Choice(["on", "off"]), scope=["non-atomic"],
        help="non-atomic: override the meta-controller's success weighting (ours; needs a behaviour model "
             "with a success head; off: the paper's).")
@option("--retry-noise", type=click.FloatRange(min=0.0), scope=["non-atomic"],
        help="non-atomic: override the meta-controller's retry noise (ours): a call right after a failed call "
             "of the same program runs the goal policy with Gaussian action noise of this std (0: the paper's).")
@option("--out", type=OutputPath("dir"), scope=["non-atomic"],
        help="non-atomic: folder for the JSON and the call-tree PNG (default runs/fetch-programs-eval).")
@click.option("--json", "as_json", is_flag=True, help="Print the evaluation as JSON.")
@click.pass_context
def eval_cmd(ctx: click.Context, **params: Any) -> None:
    """Re-evaluate a saved run's frozen greedy policy (or, with --domain fetch-programs, the Fetch programs).

    --hints prints instead what the run's training saw as PDDL edits to its model, with their evidence
    (model_hints.json; docs/asgrl.md, "Model hints from training").
    """
    domain, run_dir = params["domain"], params["run_dir"]
    family = ASGRL if domain is None else _family(domain)
    workflow = ASGRL if family == ASGRL else params["suite"] or "atomic"
    if workflow != ASGRL and run_dir is not None:
        raise click.UsageError(f"RUN_DIR: not used with --domain {DOMAIN}", ctx)
    refuse_out_of_scope(ctx, workflow, _eval_scope_error)
    if workflow != ASGRL:
        _evaluate_fetch(params, workflow)
        return
    if run_dir is None:
        raise AsgError(f"--domain {domain}: asg eval re-evaluates a saved run; give its folder (asg eval RUN_DIR; "
                       f"asg train --domain {domain} writes one)" if domain else
                       f"give a run directory (asg eval RUN_DIR) or --domain {DOMAIN}")
    from asg.learning.asgrl.trainer import evaluate_run, run_hints

    if params["hints"]:
        for name in ("episodes", "retry_epsilon", "retry_other_skill"):
            if params[name] is not None:
                raise AsgError(f"--{name.replace('_', '-')}: not with --hints (it prints what training saw; "
                               "nothing is evaluated)")
        echo_result(run_hints(run_dir, domain=domain), params["as_json"])
        return
    echo_result(evaluate_run(run_dir, episodes=params["episodes"], domain=domain,
                             retry_epsilon=params["retry_epsilon"], retry_other_skill=params["retry_other_skill"]),
                params["as_json"])


def _evaluate_fetch(p: dict[str, Any], suite: str) -> None:
    """``asg eval --domain fetch-programs --suite ...``; every option is checked before any episode runs."""
    from asg.learning import fetch_programs as fp

    programs = None
    if suite == "atomic" and p["program_list"] is not None:
        from asg.planning.programs import fetch_library

        programs = split_list("--programs", p["program_list"], [prog.name for prog in fetch_library().atomic])
    switches = {name: None if p[name] is None else p[name] == "on" for name in ("psi_prunings", "stop_at_expansion",
                                                                                "success_weighting")}
    switches["retry_noise"] = p["retry_noise"]
    given = {name: p[name] for name in FETCH_EVAL if p[name] is not None}
    stages = Stages(quiet=p["as_json"])
    try:
        with fields_as_options():
            result = fp.evaluate_suite(suite, episodes=p["episodes"] or 100, programs=programs, progress=stages,
                                       **switches, **given)
    finally:
        stages.close()
    echo_result(result, p["as_json"])
    if result.saved and not p["as_json"]:
        click.echo(f"saved: {', '.join(result.saved)}")


@click.command("compare", short_help="Run methods x seeds on a domain; write Figure 3.")
@click.option("--domain", help="ASGRL domain (or --env, --labeler and --model: a world of your own).")
@click.option("--env", "env_id", help="A world of your own instead of --domain (as asg train takes it).")
@click.option("--labeler", help="With --env: module:NAME of its labeler.")
@click.option("--model", type=ModelPath(), help="With --env: its PDDL model.")
@click.option("--methods", multiple=True, help="Methods, comma-separated or repeated (default: all).")
@click.option("--seeds", type=click.IntRange(min=1), default=3, show_default=True, help="Seeds 0..N-1.")
@click.option("--steps", type=click.IntRange(min=1), help="Env-step budget per run (default 500000).")
@click.option("--eval-episodes", type=click.IntRange(min=1), help="Greedy episodes per evaluation point.")
@click.option("--out", type=OutputPath("dir"), help="Folder for runs and the report (default runs/compare-<domain>).")
@click.option("--preset", type=LazyChoice(_preset_names), default="asg", show_default=True,
              help="asg (the paper's schedules plus our additions) or paper (App. G, every addition off).")
@click.option("--eval-epsilon", type=click.FloatRange(0.0, 1.0),
              help="ε of the final evaluation reported beside the greedy one (default 0.05, the paper's).")
@click.option("--curve-eval", type=click.Choice(["greedy", "epsilon"]),
              help="Protocol of the curve points: greedy (default) or ε-greedy with --eval-epsilon.")
@grid_options
@click.option("--resume", is_flag=True,
              help="Continue the grid in --out: finished cells are read back, interrupted ones resumed.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def compare_cmd(domain: str | None, env_id: str | None, labeler: str | None, model: Path | None,
                methods: tuple[str, ...], seeds: int, steps: int | None, eval_episodes: int | None,
                out: Path | None, preset: str, eval_epsilon: float | None, curve_eval: str | None,
                jobs: int | None, ray_address: str | None, resume: bool, quiet: bool, as_json: bool) -> None:
    """Run methods x seeds on one domain; write Figure 3 as a table and a plot.

    Cells run one after another here, or on Ray: --jobs N (a local Ray with N CPUs) or --ray-address
    ADDR (a cluster). Ctrl-C checkpoints the running cells; --resume continues. A cell that fails
    is reported with its error and the others finish (exit 1).
    """
    from asg.learning.asgrl import experiments
    from asg.learning.registry import METHODS

    own = world_parts(domain, env_id, labeler, model)
    if not own and domain is None:
        raise click.UsageError("--domain is required (or --env with --labeler and --model)")
    if model is not None and not own:
        raise AsgError("--model: only with --env (a world of your own)")
    check_grid_options(jobs, ray_address)
    plugin = None
    if own:
        from asg.learning.asgrl.trainer import own_world

        with own_world_as_options():
            domain, plugin = own_world(str(env_id), str(labeler), str(model))
    assert domain is not None
    if _family(domain) != ASGRL:
        raise AsgError(f"--domain: asg compare does not support {domain!r}")
    chosen = split_list("--methods", ",".join(methods), list(METHODS), "method") if methods else list(METHODS)
    out = out or Path("runs") / f"compare-{domain}"
    if resume and not out.is_dir():
        raise AsgError(f"--resume: {out} holds no grid to continue")
    if not resume and out.exists() and any(out.iterdir()):
        raise AsgError(f"--out: {out} is not empty (--resume continues the grid in it)")
    overrides = {key: value for key, value in (("final_eval_epsilon", eval_epsilon), ("curve_eval", curve_eval),
                                               ("eval_episodes", eval_episodes)) if value is not None}
    stages, failures = Stages(quiet=quiet), []
    reason = "done"
    try:
        runs = experiments.run_grid(domain, chosen, list(range(seeds)), out, steps=steps, overrides=overrides or None,
                                    model=None if plugin is None else plugin["model"], preset=preset,
                                    reuse=resume, progress=stages, on_failed=failures.append, plugin=plugin,
                                    jobs=jobs, ray_address=ray_address)
        interrupted = any(run.result.status == "interrupted" for run in runs)
        reason = "interrupted, checkpoints saved" if interrupted else reason
    finally:
        stages.close(reason)
    payload = experiments.write_report(domain, runs, out, failures)
    if as_json:
        click.echo(json.dumps(payload["summary"], indent=2, sort_keys=True))
    else:
        click.echo(experiments.format_table(domain, experiments.summarize(runs)), nl=False)
        click.echo(f"report: {out / 'compare.md'}, {out / 'compare.png'}")
    for failure in failures:
        click.echo(f"failed: {failure.line()}", err=True)
    if interrupted:
        click.echo(f"interrupted; continue with the same command and --resume (--out {out})", err=True)
        sys.exit(130)
    if failures:
        sys.exit(1)
