"""The loop pins the card's rules: every attempt carried forward, real diffs, byte-exact reverts.

Tasks here are tiny real projects in tmp_path whose verifier is a real subprocess (a Python
script printing pytest-style FAILED lines), so each attempt costs milliseconds, not a pytest run.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import LOOP_CHECK, TESTS_DIR, make_task_dir

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._attempters.edits import apply_edit, editable_files, parse_edit
from reference_loop._attempters.factory import make_attempter
from reference_loop._attempters.scripted import distinguishing_text
from reference_loop._core.events import EventLog
from reference_loop._core.history import HEADING
from reference_loop._core.ledger import CAUSES_HEADING
from reference_loop._core.planner import ScriptedPlanner
from reference_loop._run.loop import PROTECTED_STEP, LoopOptions, run_loop, run_task
from reference_loop._tasks.task import inline_task, load_task_dir, resolve_task
from reference_loop._verdict.verifier import run_verifier
from reference_loop.errors import LoopUsageError


@pytest.fixture
def task(tmp_path):
    return load_task_dir(make_task_dir(tmp_path / "task"))


@dataclass
class ListAttempter:
    """A test attempter that applies a fixed edit per attempt (path -> text, None deletes)."""

    edits: list[dict[str, str | None]]
    name: str = "test:list"
    description: str = "did what it was told"
    steps: list[ToolStep] = field(default_factory=lambda: [ToolStep("edit", True)])
    prompts: list[str] = field(default_factory=list)

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        self.prompts.append(prompt)
        for rel, text in self.edits[min(attempt, len(self.edits)) - 1].items():
            path = workspace / rel
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        return AttemptOutcome(list(self.steps), self.description)


def mode(name: str, extra: str = "") -> dict[str, str | None]:
    return {"m.py": f'MODE = "{name}"\n{extra}'}


def tree_state(root: Path) -> dict[str, tuple]:
    """Every path under root with its kind, permission bits and bytes (or link target)."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                state[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                state[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return state


def in_place_project(root: Path) -> Path:
    root.mkdir()
    (root / "m.py").write_text('MODE = "broken"\n')
    (root / "check.py").write_text(LOOP_CHECK)
    (root / "data.bin").write_bytes(bytes(range(256)) * 4)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "empty").mkdir()
    os.symlink("m.py", root / "link_to_m")
    return root


def inline(tmp_path: Path):
    return inline_task("Set MODE to fixed.", "{python} -B check.py", timeout=20)


# -- the card's central rule ------------------------------------------------------------------


@pytest.mark.slow
def test_attempt_three_prompt_shows_attempt_one_patch(task, tmp_path):
    att = make_attempter("scripted:rederive", task=task)
    result = run_task(task, att, options=LoopOptions(history_mode="accumulate", max_attempts=5))
    assert result.solved and result.solved_at == 4
    first_only = distinguishing_text(task)[att.chosen[0]]
    assert first_only and any(m in result.attempts[0].patch for m in first_only)
    assert all(m not in result.attempts[1].patch + result.attempts[2].patch for m in first_only)
    assert any(m in result.prompts[2] for m in first_only)
    assert "Attempt 1 — fail" in result.prompts[2] and HEADING in result.prompts[2]
    assert result.injections == 3


def test_last_mode_hides_attempt_one_from_attempt_three_which_rederives_it(task):
    att = make_attempter("scripted:rederive", task=task)
    result = run_task(task, att, options=LoopOptions(history_mode="last", max_attempts=5))
    first_only = distinguishing_text(task)[att.chosen[0]]
    assert not any(m in result.prompts[2] for m in first_only)
    assert "Attempt 1 —" not in result.prompts[2]
    # The overwrite bug, reproduced: attempt 3 makes attempt 1's patch again.
    assert result.attempts[2].patch_fingerprint == result.attempts[0].patch_fingerprint
    assert not result.solved


def test_none_mode_retries_with_only_it_failed(task):
    result = run_task(
        task,
        make_attempter("scripted:rederive", task=task),
        options=LoopOptions(history_mode="none", max_attempts=3),
    )
    assert result.injections == 0
    assert len({r.patch_fingerprint for r in result.attempts}) == 1
    assert "failed and was reverted" in result.prompts[1] and "Attempt 1" not in result.prompts[1]


def test_no_injection_event_before_attempt_two(task):
    log = EventLog()
    result = run_task(
        task,
        make_attempter("scripted:walk", task=task),
        events=log,
        options=LoopOptions(max_attempts=4),
    )
    injected = log.events("history_injected")
    assert [e.data["attempt"] for e in injected] == list(range(2, len(result.attempts) + 1))
    assert HEADING not in result.prompts[0]
    assert all(e.data["chars"] > 0 and e.data["records"] == e.data["attempt"] - 1 for e in injected)


# -- the evidence is real ---------------------------------------------------------------------


def test_patch_comes_from_the_workspace_not_the_attempters_description(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    att = ListAttempter(
        [{"m.py": 'MODE = "quiet_change_zeta"\n', "new_zeta.py": "Z = 1\n"}],
        description="I edited README.md only",
    )
    result = run_loop(inline(tmp_path), att, workspace=ws, options=LoopOptions(max_attempts=1))
    rec = result.attempts[0]
    assert "quiet_change_zeta" in rec.patch and "new_zeta.py" in rec.patch
    assert sorted(rec.files) == ["m.py", "new_zeta.py"]
    assert "README" not in rec.patch and rec.description == "I edited README.md only"


def test_first_failing_tool_step_is_recorded(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    att = ListAttempter(
        [mode("alpha")],
        steps=[
            ToolStep("read", True),
            ToolStep("apply", False, "hunk 2 did not match"),
            ToolStep("lint", False, "later"),
        ],
    )
    rec = run_loop(
        inline(tmp_path), att, workspace=ws, options=LoopOptions(max_attempts=1)
    ).attempts[0]
    assert (rec.first_failing_step.name, rec.first_failing_step.error) == (
        "apply",
        "hunk 2 did not match",
    )
    assert "test_mode_alpha" in rec.signature  # the test failure wins over the tool error


def test_long_patch_is_truncated_in_the_record_and_says_so(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    big = "".join(f"LINE_{i} = {i}\n" for i in range(400))
    result = run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha", big)] * 2),
        workspace=ws,
        options=LoopOptions(max_attempts=2, patch_limit=500),
    )
    rec = result.attempts[0]
    assert rec.patch_truncated and rec.patch_chars > 500 and "patch truncated" in rec.patch
    assert "patch truncated" in result.prompts[1]


# -- the workspace is put back ----------------------------------------------------------------


def test_unsolved_run_leaves_the_workspace_byte_identical(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    before = tree_state(ws)

    @dataclass
    class Vandal:
        name: str = "test:vandal"

        def attempt(self, prompt, workspace, *, attempt):
            (workspace / "data.bin").write_bytes(b"\x00\xff" * 10)
            (workspace / "run.sh").chmod(0o644)
            (workspace / "link_to_m").unlink()
            os.symlink("check.py", workspace / "link_to_m")
            (workspace / "check.py").unlink()
            (workspace / "empty").rmdir()
            (workspace / "new_dir" / "deep").mkdir(parents=True)
            (workspace / "new_dir" / "deep" / "f.txt").write_text("new")
            return AttemptOutcome([ToolStep("vandalise", True)])

    result = run_loop(inline(tmp_path), Vandal(), workspace=ws, options=LoopOptions(max_attempts=2))
    assert not result.solved and result.attempts[0].verdict in ("fail", "error")
    assert tree_state(ws) == before


def test_solved_run_leaves_the_passing_change_in_place(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    result = run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha"), mode("fixed")]),
        workspace=ws,
        options=LoopOptions(max_attempts=3),
    )
    assert result.solved_at == 2
    assert (ws / "m.py").read_text() == 'MODE = "fixed"\n'


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_exception_mid_attempt_leaves_the_workspace_byte_identical(tmp_path, exc_type):
    ws = in_place_project(tmp_path / "ws")
    before = tree_state(ws)

    @dataclass
    class Crasher:
        name: str = "test:crasher"

        def attempt(self, prompt, workspace, *, attempt):
            if attempt == 1:
                (workspace / "m.py").write_text('MODE = "alpha"\n')
                return AttemptOutcome([ToolStep("edit", True)])
            (workspace / "data.bin").write_bytes(b"half-written")
            (workspace / "check.py").unlink()
            (workspace / "stray.txt").write_text("x")
            raise exc_type("crashed mid-attempt")

    log = EventLog()
    with pytest.raises(exc_type):
        run_loop(
            inline(tmp_path),
            Crasher(),
            workspace=ws,
            events=log,
            options=LoopOptions(max_attempts=3),
        )
    assert tree_state(ws) == before
    assert log.events("workspace_restored")[-1].data.get("reason") == "interrupted"


# -- repeats change something structural ------------------------------------------------------


def test_repeated_signature_triggers_exactly_one_replan_with_the_ledger_causes(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    planner = ScriptedPlanner()
    log = EventLog()
    att = ListAttempter([mode("alpha"), mode("beta"), mode("alpha", "X_ONE = 1\n"), mode("fixed")])
    result = run_loop(
        inline(tmp_path),
        att,
        workspace=ws,
        events=log,
        options=LoopOptions(max_attempts=5, planner=planner, on_repeat="replan"),
    )
    assert result.solved_at == 4
    assert log.count("signature_repeated") == 1 and log.count("replanned") == 1
    assert [e.data["attempt"] for e in log.events("replanned")] == [4]
    assert len(planner.calls) == 1
    task_text, context = planner.calls[0]
    assert task_text == "Set MODE to fixed."
    causes = context.split(CAUSES_HEADING, 1)[1]
    assert "attempts 1 and 3" in causes and "test_mode_alpha" in causes
    assert "attempt 2" in causes and "test_mode_beta" in causes
    assert "## Plan" in result.prompts[3] and "## Plan" not in result.prompts[2]
    # The repeat renders once with a recurrence note rather than a second copy of the failure.
    assert "failed the same way in attempts 1 and 3" in result.prompts[3].lower()
    history = result.prompts[3].split(HEADING, 1)[1]
    assert history.count("mode is 'alpha'") == 2  # attempt 1's signature line and output only


def test_repeat_on_the_final_attempt_changes_nothing(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    planner = ScriptedPlanner()
    log = EventLog()
    run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha"), mode("beta"), mode("alpha")]),
        workspace=ws,
        events=log,
        options=LoopOptions(max_attempts=3, planner=planner, on_repeat="replan"),
    )
    assert log.count("signature_repeated") == 1
    assert log.count("replanned") == 0 and planner.calls == []


def test_repeat_escalates_once_to_the_stronger_attempter(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    log = EventLog()
    weak = ListAttempter([mode("alpha"), mode("beta")], name="test:weak")
    strong = ListAttempter([mode("fixed")], name="test:strong")
    result = run_loop(
        inline(tmp_path),
        weak,
        workspace=ws,
        events=log,
        options=LoopOptions(max_attempts=5, on_repeat="escalate", escalate_to=strong),
    )
    # weak: alpha, beta, beta (repeat) -> escalate -> strong fixes at attempt 4
    assert [r.attempter for r in result.attempts] == ["test:weak"] * 3 + ["test:strong"]
    assert result.solved_at == 4
    assert log.count("escalated") == 1 and log.count("replanned") == 0
    assert log.events("escalated")[0].data["to_attempter"] == "test:strong"


def test_a_run_without_repeats_never_replans(task):
    planner = ScriptedPlanner()
    log = EventLog()
    run_task(
        task,
        make_attempter("scripted:rederive", task=task),
        events=log,
        options=LoopOptions(planner=planner, on_repeat="replan"),
    )
    assert log.count("signature_repeated") == 0 and planner.calls == []


# -- outputs and settings ---------------------------------------------------------------------


def test_prompts_dir_holds_the_exact_prompt_of_each_attempt_and_events_go_to_jsonl(task, tmp_path):
    prompts = tmp_path / "p"
    events = tmp_path / "events.jsonl"
    with EventLog(jsonl_path=events) as log:
        result = run_task(
            task,
            make_attempter("scripted:walk", task=task),
            events=log,
            options=LoopOptions(max_attempts=2, prompts_dir=prompts),
        )
    for n, prompt in enumerate(result.prompts, 1):
        assert (prompts / f"attempt-{n}.txt").read_text() == prompt
    kinds = [line.split('"kind": "')[1].split('"')[0] for line in events.read_text().splitlines()]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("attempt_started") == kinds.count("attempt_finished") == 2
    assert kinds.count("workspace_restored") == sum(not r.solved for r in result.attempts)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"max_attempts": 0}, "at least 1"),
        ({"on_repeat": "replan"}, "needs a planner"),
        ({"on_repeat": "escalate"}, "needs an attempter"),
        ({"on_repeat": "pray"}, "unknown on-repeat"),
        ({"history_mode": "all"}, "unknown history mode"),
        ({"protect": ["../outside"]}, "inside the workspace"),
    ],
)
def test_bad_settings_are_usage_errors(task, fields, match):
    att = make_attempter("scripted:walk", task=task)
    with pytest.raises(LoopUsageError, match=match) as exc:
        run_task(task, att, options=LoopOptions(**fields))
    assert exc.value.exit_code == 2


def test_reviewer_note_reaches_the_next_prompt_beside_the_verifier_output(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    result = run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha"), mode("fixed")]),
        workspace=ws,
        options=LoopOptions(
            max_attempts=2, reviewer=lambda rec: f"critic: attempt {rec.number} set the wrong mode"
        ),
    )
    assert result.attempts[0].reviewer_note == "critic: attempt 1 set the wrong mode"
    assert result.attempts[1].reviewer_note is None  # a pass is not reviewed
    prompt = result.prompts[1]
    assert prompt.index("mode is 'alpha'") < prompt.index("critic: attempt 1 set the wrong mode")


def test_each_repeat_event_gets_one_replan_and_the_plan_follows_the_latest_ledger(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    planner = ScriptedPlanner()
    log = EventLog()
    att = ListAttempter([mode("alpha"), mode("beta"), mode("alpha"), mode("beta"), mode("fixed")])
    result = run_loop(
        inline(tmp_path),
        att,
        workspace=ws,
        events=log,
        options=LoopOptions(max_attempts=5, planner=planner, on_repeat="replan"),
    )
    assert result.solved_at == 5
    assert log.count("signature_repeated") == 2 and log.count("replanned") == 2
    assert [e.data["attempt"] for e in log.events("replanned")] == [4, 5]
    assert "attempts 2 and 4" in planner.calls[1][1] and "attempts 2 and 4" in result.prompts[4]


# -- protected paths: an attempt cannot pass by editing the check -----------------------------

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
TEST_OTHER = "def test_other():\n    assert True\n"
PYTEST = "{python} -B -m pytest -q -p no:cacheprovider"

# Each edit makes pytest pass without fixing calc.py: the attacks a weak model stumbles into.
CHEATS = {
    "deletes the failing test": {"test_calc.py": None},
    "rewrites the failing test": {"test_calc.py": "def test_add():\n    assert True\n"},
    "moves the failing test away": {"test_calc.py": None, "calc_checks.py": TEST_CALC},
    "adds a conftest that skips it": {"conftest.py": 'collect_ignore = ["test_calc.py"]\n'},
    "adds a tests/ folder conftest": {
        "tests/conftest.py": "",
        "test_calc.py": "import pytest\npytestmark = pytest.mark.skip\n" + TEST_CALC,
    },
}


def calc_project(root: Path) -> Path:
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    (root / "test_other.py").write_text(TEST_OTHER)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_attempt_that_edits_the_tests_cannot_solve_the_task(tmp_path, cheat):
    task = inline_task("Fix add() in calc.py.", PYTEST, timeout=60)
    # Control: judged by its exit status, this very edit "solves" the task, so the test below
    # can fail.
    open_ws = calc_project(tmp_path / "open")
    ListAttempter([CHEATS[cheat]]).attempt("", open_ws, attempt=1)
    assert run_verifier(task.verify_command(), open_ws, timeout=60).verdict == "pass"

    ws = calc_project(tmp_path / "ws")
    before = tree_state(ws)
    log = EventLog()
    result = run_loop(
        task,
        ListAttempter([CHEATS[cheat]]),
        workspace=ws,
        options=LoopOptions(max_attempts=2),
        events=log,
    )
    assert not result.solved
    # A protected-path edit alone fails the attempt; one that is also another integrity class
    # (a conftest is runner config too) gives the verdict `integrity`.
    assert all(
        r.protected_violation
        and r.verdict == ("integrity" if set(r.integrity) - {"protected-path"} else "fail")
        for r in result.attempts
    )
    step = result.attempts[0].first_failing_step
    assert step is not None and step.name == PROTECTED_STEP
    assert "protected path" in step.error and "reverted before the verifier ran" in step.error
    # The verifier judged the original code: its output is the real failure of add().
    assert "test_add" in result.attempts[0].verifier_output
    assert tree_state(ws) == before
    assert log.count("protected_violation") == 2
    assert log.events("run_finished")[0].data["protected_violations"] == 2
    assert result.to_dict()["attempts"][0]["protected_violation"] is True


@pytest.mark.slow
def test_violation_is_shown_to_the_next_attempt_which_can_still_solve(tmp_path):
    ws = calc_project(tmp_path / "ws")
    fixed = {"calc.py": "def add(a, b):\n    return a + b\n"}
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        ListAttempter([CHEATS["rewrites the failing test"], fixed]),
        workspace=ws,
        options=LoopOptions(max_attempts=3),
    )
    assert result.solved_at == 2
    assert [r.protected_violation for r in result.attempts] == [True, False]
    assert result.attempts[0].files == ["test_calc.py"]  # the reverted change is kept as evidence
    assert "protected-paths" in result.prompts[1] and "test_calc.py" in result.prompts[1]
    assert (ws / "test_calc.py").read_text() == TEST_CALC
    assert "a + b" in (ws / "calc.py").read_text()


def test_file_the_verify_command_runs_is_protected_and_extra_globs_add_to_it(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    before = tree_state(ws)
    # check.py is what `{python} -B check.py` runs: rewriting it to pass is refused.
    cheat = {"check.py": 'print("1 passed")\n', "m.py": 'MODE = "alpha"\n'}
    result = run_loop(
        inline(tmp_path), ListAttempter([cheat]), workspace=ws, options=LoopOptions(max_attempts=1)
    )
    assert result.attempts[0].protected_violation and not result.solved
    assert "check.py" in result.attempts[0].first_failing_step.error
    assert tree_state(ws) == before
    # --protect adds globs: a data file becomes off limits, and a plain fix still works.
    run = run_loop(
        inline(tmp_path),
        ListAttempter([{"data.bin": "x", **mode("fixed")}, mode("fixed")]),
        workspace=ws,
        options=LoopOptions(max_attempts=2, protect=["*.bin"]),
    )
    assert [r.protected_violation for r in run.attempts] == [True, False] and run.solved_at == 2
    assert "data.bin (matches *.bin)" in run.attempts[0].first_failing_step.error


@dataclass
class ReplayAttempter:
    """Replays a captured model reply through the edit parser, as the llm: attempter would."""

    reply: str
    name: str = "test:replay"

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        edit = parse_edit(self.reply, editable_files(workspace))
        changed = apply_edit(edit, workspace)
        return AttemptOutcome([ToolStep("apply-edit", True)], f"changed {changed}")


@pytest.mark.slow
def test_real_small_model_reply_that_rewrites_the_test_is_reverted_and_fails(tmp_path):
    """SmolLM2-135M's reply to money-format wrote a new test_money.py (a real captured reply)."""
    captured = TESTS_DIR / "fixtures" / "replies" / "smollm2-135m-money-format-1.txt"
    task = resolve_task("money-format")
    ws = tmp_path / "ws"
    shutil.copytree(task.project, ws)
    before = tree_state(ws)
    result = run_loop(
        task,
        ReplayAttempter(captured.read_text()),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    rec = result.attempts[0]
    assert rec.protected_violation and not result.solved
    assert rec.files == ["test_money.py"] and "test_money.py (matches test_*.py)" in (
        rec.first_failing_step.error
    )
    assert tree_state(ws) == before
