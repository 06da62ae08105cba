"""``chimera-cards demo``: the main job end to end in a throwaway folder (a skin over ``demo``).

Registered on the ``chimera-cards`` group by ``reference_loop.plugin`` (an entry point), since
``chimera_cards`` never imports ``reference_loop``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import click

from chimera_cards._cli.common import echo_json, folder_option, json_option, reports_errors
from chimera_cards.errors import UsageError
from reference_loop._core.history import MODES as HISTORY_MODES
from reference_loop._demo.steps import MAX_ATTEMPTS, TOTAL_STEPS, DemoResult, Step, demo_steps


def _print_step(step: Step) -> None:
    click.echo(f"\n[{step.number}/{TOTAL_STEPS}] {step.title}")
    for line in step.lines:
        click.echo(f"    {line}" if line else "")
    for e in step.expectations:
        mark = "ok  " if e.ok else "FAIL"
        detail = f" ({e.detail})" if e.detail and not e.ok else ""
        click.echo(f"  {mark} {e.what}{detail}")


def _workdir(keep: Path | None) -> Path:
    if keep is None:
        return Path(tempfile.mkdtemp(prefix="chimera-cards-demo-"))
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise UsageError(
            f"--keep {keep}: must be a new or empty folder (the demo writes a "
            "store, keys and a workspace there)"
        )
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--keep {keep}: cannot create it ({exc.strerror or exc})") from None
    return keep


@click.command("demo")
@folder_option(
    "--keep",
    help="Run in this new or empty folder and keep it (store, key, prompts, workspace); "
    "default: a temporary folder, removed at the end.",
)
@click.option(
    "--history",
    "history_mode",
    type=click.Choice(HISTORY_MODES),
    default="accumulate",
    show_default=True,
    help="The loop's history mode; 'last' is the overwrite bug, and the demo's own "
    "check then fails (exit 1).",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=3),
    default=MAX_ATTEMPTS,
    show_default=True,
    help="Attempts for the loop step (at least 3).",
)
@json_option
@reports_errors
def demo(keep: Path | None, history_mode: str, max_attempts: int, as_json: bool) -> None:
    """Run the main job end to end in a throwaway folder, checking every step.

    Lint, import by path and by URL, review, approve, match, and run the loop with the cards
    (exit 0 all expectations met, 1 any failed).
    """
    work = _workdir(keep)
    result = DemoResult(workdir=str(work), kept=keep is not None)
    started = time.monotonic()
    try:
        if not as_json:
            click.echo(
                f"chimera-cards demo in {work}"
                + ("" if keep else " (a temporary folder, removed at the end)")
            )
        for step in demo_steps(work, history_mode=history_mode, max_attempts=max_attempts):
            result.steps.append(step)
            if not as_json:
                _print_step(step)
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    result.seconds = time.monotonic() - started
    if as_json:
        echo_json(result.to_dict())
    else:
        total = sum(len(s.expectations) for s in result.steps)
        click.echo("")
        if result.ok:
            click.echo(f"demo: all {total} expectations met in {result.seconds:.1f} s")
        else:
            failed = result.failed
            click.echo(
                f"demo: {len(failed)} of {total} expectations FAILED "
                f"({len(result.steps)} of {TOTAL_STEPS} steps ran):"
            )
            for number, e in failed:
                click.echo(f"  step {number}: {e.what}" + (f" ({e.detail})" if e.detail else ""))
        click.echo(f"kept: {work}" if keep else f"removed {work}")
    sys.exit(0 if result.ok else 1)
