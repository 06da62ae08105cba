"""The ``reference-loop`` command: a thin click skin over loop.run_task, tasks and check."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path

import click

from chimera_cards._cli.common import SECONDS, echo_json, reports_errors
from chimera_cards._cli.group import AdvancedOption, ChimeraGroup, SectionedCommand
from reference_loop import __version__
from reference_loop._attempters.factory import agent_settings, fit_to_task, make_attempter
from reference_loop._cli.options import agent_options, model_options
from reference_loop._core.cards import CARDS_IN, DEFAULT_CARDS_IN, DEFAULT_K, cards_from_options
from reference_loop._core.cards import describe as describe_cards
from reference_loop._core.events import Event, EventLog
from reference_loop._core.history import DEFAULT_BUDGET, MODES
from reference_loop._core.planner import make_planner
from reference_loop._core.records import describe_files
from reference_loop._process.run import Terminated, exits_cleanly_on_sigterm
from reference_loop._process.sandbox import make_sandbox, sandbox_attempters
from reference_loop._process.textsafe import visible
from reference_loop._run.check import run_check
from reference_loop._run.loop import (
    DEFAULT_MAX_ATTEMPTS,
    ON_REPEAT,
    LoopOptions,
    RunResult,
    run_task,
)
from reference_loop._tasks.task import inline_task, resolve_task, sample_tasks, three_failure_task
from reference_loop._workspace.engines import DEFAULT_ENGINE, ENGINE_ENV, ENGINES
from reference_loop.errors import LoopUsageError


def progress_line(event: Event, max_attempts: int) -> str | None:
    """One stderr line per event worth showing while a run is in progress."""
    d = event.data
    if event.kind == "attempt_started":
        return f"attempt {d['attempt']}/{max_attempts}: running {d['attempter']} …"
    if event.kind == "cards_injected":
        return (
            f"attempt {d['attempt']}/{max_attempts}: {d['cards']} approved card(s) in the "
            f"prompt ({d['chars']} chars)"
        )
    if event.kind == "history_injected":
        return (
            f"attempt {d['attempt']}/{max_attempts}: history of {d['records']} earlier "
            f"attempt(s) injected ({d['chars']} chars)"
        )
    if event.kind == "attempt_finished":
        line = f"attempt {d['attempt']}/{max_attempts}: {d['verdict']}"
        if d.get("files"):
            line += f" (touched {describe_files(d['files'], d.get('files_total'), limit=5)})"
        # The failing tool step (a model call, an edit that did not apply) before the tests'
        # output: when the attempter failed, the tests failing is only its consequence.
        shown = d.get("step") or d.get("signature")
        if shown:
            line += f" — {shown if len(shown) <= 200 else shown[:199] + '…'}"
        return line
    if event.kind == "protected_violation":
        return (
            f"attempt {d['attempt']}/{max_attempts}: changed protected path(s) "
            f"{', '.join(d['paths'])} — reverted before verifying"
        )
    if event.kind == "integrity_violation":
        if d.get("stage") == "patch-review":
            marks = d.get("marks") or []
            shown = "; ".join(f"{m['rule']} {m['path']}:{m['line']}" for m in marks[:4])
            more = f" and {len(marks) - 4} more" if len(marks) > 4 else ""
            return f"attempt {d['attempt']}/{max_attempts}: patch review marked {shown}{more}"
        return (
            f"attempt {d['attempt']}/{max_attempts}: integrity violation "
            f"({', '.join(d['classes'])}) — "
            + ("reverted before verifying" if d.get("stage") == "before-verify" else "not kept")
        )
    if event.kind == "verdict_baseline" and d.get("evidence") == "exit-status":
        return "verdict: judged by the verify command's exit status alone (no test report)"
    if event.kind == "signature_repeated":
        return f"attempt {d['attempt']}: failed the same way as attempt {d['same_as']}"
    if event.kind == "replanned":
        return f"re-planned with {d['planner']} for attempt {d['attempt']}"
    if event.kind == "escalated":
        return f"escalated to {d['to_attempter']} for attempt {d['attempt']}"
    return None


def _stderr_sink(max_attempts: int) -> Callable[[Event], None]:
    def sink(event: Event) -> None:
        line = progress_line(event, max_attempts)
        if line is not None:
            click.echo(visible(line), err=True)

    return sink


def summary_lines(result: RunResult, max_attempts: int) -> list[str]:
    verdicts = ", ".join(f"{r.number}:{r.verdict}" for r in result.attempts)
    status = (
        f"solved at attempt {result.solved_at} of {max_attempts}"
        if result.solved
        else f"not solved after {len(result.attempts)} attempts"
    )
    signatures = {r.signature for r in result.attempts if r.signature}
    lines = [
        f"{result.task}: {status} (history {result.history_mode})",
        f"verdicts: {verdicts}",
        f"history injections: {result.injections}"
        + (f"; re-plans: {result.replans}" if result.replans else "")
        + (f"; escalations: {result.escalations}" if result.escalations else ""),
        f"distinct failure signatures: {len(signatures)}",
    ]
    violations = [str(r.number) for r in result.attempts if r.protected_violation]
    if violations:
        lines.insert(3, f"protected-path violations (reverted): attempts {', '.join(violations)}")
    gamed = [
        f"{r.number} ({', '.join(c for c in r.integrity if c != 'protected-path')})"
        for r in result.attempts
        if any(c != "protected-path" for c in r.integrity)
    ]
    if gamed:
        lines.insert(3, f"integrity violations (failed): attempts {', '.join(gamed)}")
    if result.evidence == "exit-status":
        lines.insert(1, "verdict: judged by the verify command's exit status alone")
    elif result.pinned:
        pinned = result.pinned
        grade = (
            "; exit-status grade: the JUnit file carries no per-run nonce, so anything in the "
            "run could have written it"
            if result.evidence_grade == "exit-status"
            else ""
        )
        unguarded = (result.witnesses or {}).get("unguarded") or []
        if unguarded:
            grade += f"; the kernel lacks {' and '.join(unguarded)}: the run was not guarded by it"
        lines.insert(
            1,
            f"verdict: {result.evidence}, {pinned['tests']} pinned tests "
            f"({pinned['fail_to_pass']} fail-to-pass, {pinned['pass_to_pass']} pass-to-pass)"
            + grade,
        )
    lines += [f"  - {sig}" for sig in sorted(signatures)]
    return lines


def set_edit_format(edit_format: str, *attempters: object) -> None:
    """Teach ``edit_format`` to every attempter that answers in text (``llm:``); asking for a
    format from attempters that edit files themselves is a usage error."""
    takers = [a for a in attempters if a is not None and hasattr(a, "edit_format")]
    if edit_format != "auto" and not takers:
        raise LoopUsageError("--edit-format goes with an llm: attempter (others edit files)")
    for attempter in takers:
        attempter.edit_format = edit_format


@click.group(cls=ChimeraGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reference-loop")
def main() -> None:
    """The reference carry-the-failure-forward retry loop."""


@main.command("run", cls=SectionedCommand)
@click.option(
    "--task",
    "task_ref",
    metavar="NAME|DIR",
    help="A sample task name or a task folder (worked on in a temporary copy).",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False),
    help="Work in place on this folder (needs --verify and --task-text).",
)
@click.option("--verify", help="Verify command for --workspace ({python} = this interpreter).")
@click.option("--task-text", help="Task text for --workspace.")
@click.option(
    "--timeout",
    type=SECONDS,
    default=60.0,
    show_default=True,
    help="Verify timeout in seconds for --workspace.",
)
@click.option(
    "--candidates",
    type=click.Path(file_okay=False),
    help="Folder of candidate-fix overlays for scripted attempters with --workspace.",
    cls=AdvancedOption,
)
@click.option(
    "--attempter",
    default="scripted:rederive",
    show_default=True,
    help="scripted:NAME, cmd:COMMAND, llm:MODEL, or an agent CLI: claude, codex, gemini "
    "(claude:MODEL names the model).",
)
@click.option("--seed", type=int, default=0, show_default=True, cls=AdvancedOption)
@click.option(
    "--history", "history_mode", type=click.Choice(MODES), default="accumulate", show_default=True
)
@click.option(
    "--max-attempts", type=click.IntRange(min=1), default=DEFAULT_MAX_ATTEMPTS, show_default=True
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Character budget for the rendered history.",
    cls=AdvancedOption,
)
@click.option(
    "--on-repeat",
    type=click.Choice(ON_REPEAT),
    default="none",
    show_default=True,
    help="What to change when a failure signature repeats.",
)
@click.option(
    "--planner",
    "planner_spec",
    default="scripted",
    show_default=True,
    help="Planner used by --on-repeat replan (and escalate, once escalated).",
    cls=AdvancedOption,
)
@click.option("--escalate-to", help="Attempter spec used by --on-repeat escalate.")
@click.option(
    "--events",
    "events_path",
    type=click.Path(dir_okay=False),
    help="Write every event as a JSON line to FILE.",
    cls=AdvancedOption,
)
@click.option(
    "--prompts-dir",
    type=click.Path(file_okay=False),
    help="Write the exact prompt of attempt N to DIR/attempt-N.txt.",
)
@click.option(
    "--cards",
    "cards_query",
    metavar="QUERY",
    help="Put the approved skill cards "
    "matching QUERY in the prompt (through chimera-cards' retrieval gate).",
)
@click.option(
    "--store",
    "cards_store",
    type=click.Path(dir_okay=False),
    help="Card store for --cards (default: chimera-cards' store).",
)
@click.option(
    "-k",
    "cards_k",
    type=click.IntRange(1, 100),
    default=DEFAULT_K,
    show_default=True,
    help="At most this many cards with --cards.",
)
@click.option(
    "--cards-in",
    type=click.Choice(CARDS_IN),
    default=DEFAULT_CARDS_IN,
    show_default=True,
    help="Cards in every prompt (each attempt is a fresh call) or only the first.",
    cls=AdvancedOption,
)
@model_options
@agent_options
@click.option(
    "--protect",
    "protect",
    metavar="GLOB",
    multiple=True,
    help="Also protect paths matching GLOB (repeatable; the tests and the files the verify "
    "command names are protected already). An attempt that changes one is reverted and fails.",
)
@click.option(
    "--sandbox",
    "use_sandbox",
    is_flag=True,
    help="Run the verifier and a cmd: attempter under bubblewrap: private PID namespace, "
    "the workspace the only writable path, no network.",
)
@click.option(
    "--sandbox-net", is_flag=True, help="With --sandbox, keep the network.", cls=AdvancedOption
)
@click.option(
    "--must-pass",
    "must_pass",
    metavar="TEST_ID",
    multiple=True,
    help="A test that must pass (repeatable; with the task's must_pass). Default: every test "
    "collected on the untouched tree.",
)
@click.option(
    "--verify-format",
    type=click.Choice(["auto", "pytest", "exit-status"]),
    default="auto",
    show_default=True,
    help="How the verdict is read: auto (a pytest command is judged by its test report), "
    "pytest, or exit-status (the exit status alone, labelled so).",
    cls=AdvancedOption,
)
@click.option(
    "--result-file",
    type=click.Choice(["junit"]),
    default=None,
    help="The verify command writes JUnit XML to {result_file} (node --test, jest, cargo "
    "nextest, gotestsum): judge by it.",
    cls=AdvancedOption,
)
@click.option(
    "--workspace-engine",
    type=click.Choice(ENGINES),
    default=None,
    help="How the workspace stores and compares files: git (git's own add, diff-files, "
    "cat-file) or fast (a hand-written index and pack path in front of it). "
    f"Default: ${ENGINE_ENV}, else {DEFAULT_ENGINE}.",
    cls=AdvancedOption,
)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@reports_errors
@exits_cleanly_on_sigterm
def run_cmd(
    task_ref: str | None,
    workspace: str | None,
    verify: str | None,
    task_text: str | None,
    timeout: float,
    candidates: str | None,
    attempter: str,
    seed: int,
    history_mode: str,
    max_attempts: int,
    budget: int,
    on_repeat: str,
    planner_spec: str,
    escalate_to: str | None,
    events_path: str | None,
    prompts_dir: str | None,
    cards_query: str | None,
    cards_store: str | None,
    cards_k: int,
    cards_in: str,
    model_options: tuple[tuple[str, str], ...],
    context_tokens: int | None,
    edit_format: str,
    model: str | None,
    agent_args: tuple[str, ...],
    protect: tuple[str, ...],
    use_sandbox: bool,
    sandbox_net: bool,
    must_pass: tuple[str, ...],
    verify_format: str,
    result_file: str | None,
    workspace_engine: str | None,
    as_json: bool,
) -> None:
    """Run the loop on a task (exit 0 solved, 1 not solved, 2 usage)."""
    if result_file is not None and verify_format != "auto":
        raise LoopUsageError("give --result-file or --verify-format, not both")
    sandbox = make_sandbox(net=sandbox_net) if use_sandbox or sandbox_net else None
    if bool(task_ref) == bool(workspace):
        raise LoopUsageError("give exactly one of --task NAME|DIR or --workspace PATH")
    if workspace:
        if not Path(workspace).is_dir():
            raise LoopUsageError(f"workspace is not a directory: {workspace}")
        task = inline_task(
            task_text or "", verify or "", timeout=timeout, candidates_dir=candidates
        )
    else:
        if verify or task_text or candidates:
            raise LoopUsageError("--verify, --task-text and --candidates go with --workspace")
        task = resolve_task(task_ref or "")
    options_given = dict(model_options)
    agents = agent_settings([attempter, escalate_to], model, agent_args)
    main_attempter = make_attempter(
        attempter,
        seed=seed,
        task=task,
        options=options_given,
        context_tokens=context_tokens,
        **agents[attempter],
    )
    stronger = (
        make_attempter(
            escalate_to,
            seed=seed,
            task=task,
            options=options_given,
            context_tokens=context_tokens,
            **agents[escalate_to],
        )
        if escalate_to
        else None
    )
    set_edit_format(edit_format, main_attempter, stronger)
    sandbox_attempters(sandbox, main_attempter, stronger)
    budget = fit_to_task(task, budget, main_attempter, stronger, transcripts=prompts_dir)
    planner = make_planner(planner_spec) if on_repeat != "none" else None
    cards = cards_from_options(cards_query, cards_store, cards_k)
    options = LoopOptions(
        history_mode=history_mode,
        max_attempts=max_attempts,
        budget=budget,
        prompts_dir=prompts_dir,
        planner=planner,
        on_repeat=on_repeat,
        escalate_to=stronger,
        cards=cards,
        cards_in=cards_in,
        protect=protect,
        sandbox=sandbox,
        verify_format=result_file or verify_format,
        must_pass=must_pass,
        workspace_engine=workspace_engine,
    )
    options.check()
    if cards is not None:
        for line in cards.skipped:  # as `chimera-cards match` reports them: one line per card
            click.echo(f"warning: {line}", err=True)
        click.echo(describe_cards(cards), err=True)
    with EventLog(sink=_stderr_sink(max_attempts), jsonl_path=events_path) as log:
        try:
            result = run_task(
                task, main_attempter, workspace=workspace, options=options, events=log
            )
        except Terminated:
            raise  # exits_cleanly_on_sigterm says it (exit 143)
        except KeyboardInterrupt:  # Ctrl-C: the loop has put the workspace back already
            restored = [
                e.data.get("paths", 0)
                for e in log.events()
                if e.kind == "workspace_restored" and e.data.get("reason") == "interrupted"
            ]
            what = (
                f"workspace restored ({restored[-1]} files)" if restored else "nothing to restore"
            )
            click.echo(f"interrupted — {what}", err=True)
            sys.exit(128 + signal.SIGINT)
    if as_json:
        echo_json({**result.to_dict(), "cards": cards.to_dict() if cards else None})
    else:
        for line in summary_lines(result, max_attempts):
            click.echo(visible(line))
    sys.exit(0 if result.solved else 1)


@main.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print the tasks as JSON.")
@reports_errors
def tasks_cmd(as_json: bool) -> None:
    """List the sample tasks."""
    tasks = sample_tasks()
    if as_json:
        echo_json([t.to_dict() for t in tasks])
        return
    width = max(len(t.name) for t in tasks)
    for t in tasks:
        flag = "  [fails three times]" if t.known_three_failures else ""
        click.echo(f"{t.name:<{width}}  {t.description}{flag}")


@main.command("check")
@click.option(
    "--task",
    "task_ref",
    metavar="NAME|DIR",
    help="Task that fails three times (default: the sample task flagged so).",
)
@click.option("--attempter", default="scripted:rederive", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--history",
    "history_mode",
    type=click.Choice(MODES),
    default="accumulate",
    show_default=True,
    help="Check another history mode (last and none must fail).",
)
@click.option(
    "--prompts-dir", type=click.Path(file_okay=False), help="Keep the prompts the check looked at."
)
@click.option("--json", "as_json", is_flag=True, help="Print the check result as JSON.")
@reports_errors
def check_cmd(
    task_ref: str | None,
    attempter: str,
    seed: int,
    history_mode: str,
    prompts_dir: str | None,
    as_json: bool,
) -> None:
    """The card's Check: attempt 3's prompt must show attempt 1's patch (exit 0 pass, 1 fail)."""
    task = resolve_task(task_ref) if task_ref else three_failure_task()
    result = run_check(
        task, attempter=attempter, history_mode=history_mode, seed=seed, prompts_dir=prompts_dir
    )
    if as_json:
        echo_json(result.to_dict())
    else:
        click.echo(result.message)
    sys.exit(0 if result.passed else 1)


# `reference-loop bench` is defined in its own module; registered here.
from reference_loop._cli.bench import bench_cmd  # noqa: E402

main.add_command(bench_cmd)
