"""The loop pins the card's rules: every attempt carried forward, real diffs, byte-exact reverts.

Tasks here are tiny real projects in tmp_path whose verifier is a real subprocess (a Python
script printing pytest-style FAILED lines), so each attempt costs milliseconds, not a pytest run.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reference_loop.attempters import AttemptOutcome, ToolStep, make_attempter
from reference_loop.attempters.scripted import distinguishing_text
from reference_loop.errors import LoopError
from reference_loop.events import EventLog
from reference_loop.history import HEADING
from reference_loop.ledger import CAUSES_HEADING
from reference_loop.loop import run_loop, run_task
from reference_loop.planner import ScriptedPlanner
from reference_loop.tasks import inline_task, load_task_dir

CHECK = """import sys
import m
if m.MODE != "fixed":
    print(f"FAILED check.py::test_mode_{m.MODE} - mode is {m.MODE!r}")
    sys.exit(1)
print("1 passed")
"""

MANIFEST = """name = "modes"
description = "MODE must be fixed"
task = "Set MODE in m.py so that check.py passes."
verify = "{python} -B check.py"
timeout = 20
[[candidates]]
dir = "candidates/alpha"
weight = 3
[[candidates]]
dir = "candidates/beta"
weight = 2
[[candidates]]
dir = "candidates/gamma"
weight = 1
[[candidates]]
dir = "candidates/fix"
weight = 0
fixes = true
"""


def make_task_dir(root: Path) -> Path:
    """Three wrong candidates, each touching a file or identifier only it has, then the fix."""
    files = {
        "task.toml": MANIFEST,
        "project/m.py": 'MODE = "broken"\n',
        "project/check.py": CHECK,
        "candidates/alpha/m.py": 'MODE = "alpha"\n\n\ndef helper_alpha_only():\n    return 1\n',
        "candidates/beta/m.py": "from beta_shim import beta_value\n\nMODE = beta_value()\n",
        "candidates/beta/beta_shim.py": 'def beta_value():\n    return "beta"\n',
        "candidates/gamma/m.py": 'gamma_table = {"x": "gamma"}\nMODE = gamma_table["x"]\n',
        "candidates/fix/m.py": 'MODE = "fixed"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


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
    (root / "check.py").write_text(CHECK)
    (root / "data.bin").write_bytes(bytes(range(256)) * 4)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "empty").mkdir()
    os.symlink("m.py", root / "link_to_m")
    return root


def inline(tmp_path: Path):
    return inline_task("Set MODE to fixed.", "{python} -B check.py", timeout=20)


# -- the card's central rule ------------------------------------------------------------------


def test_attempt_three_prompt_shows_attempt_one_patch(task, tmp_path):
    att = make_attempter("scripted:rederive", task=task)
    result = run_task(task, att, history_mode="accumulate", max_attempts=5)
    assert result.solved and result.solved_at == 4
    first_only = distinguishing_text(task)[att.chosen[0]]
    assert first_only and any(m in result.attempts[0].patch for m in first_only)
    assert all(m not in result.attempts[1].patch + result.attempts[2].patch for m in first_only)
    assert any(m in result.prompts[2] for m in first_only)
    assert "Attempt 1 — fail" in result.prompts[2] and HEADING in result.prompts[2]
    assert result.injections == 3


def test_last_mode_hides_attempt_one_from_attempt_three_which_rederives_it(task):
    att = make_attempter("scripted:rederive", task=task)
    result = run_task(task, att, history_mode="last", max_attempts=5)
    first_only = distinguishing_text(task)[att.chosen[0]]
    assert not any(m in result.prompts[2] for m in first_only)
    assert "Attempt 1 —" not in result.prompts[2]
    # The overwrite bug, reproduced: attempt 3 makes attempt 1's patch again.
    assert result.attempts[2].patch_fingerprint == result.attempts[0].patch_fingerprint
    assert not result.solved


def test_none_mode_retries_with_only_it_failed(task):
    result = run_task(
        task, make_attempter("scripted:rederive", task=task), history_mode="none", max_attempts=3
    )
    assert result.injections == 0
    assert len({r.patch_fingerprint for r in result.attempts}) == 1
    assert "failed and was reverted" in result.prompts[1] and "Attempt 1" not in result.prompts[1]


def test_no_injection_event_before_attempt_two(task):
    log = EventLog()
    result = run_task(task, make_attempter("scripted:walk", task=task), max_attempts=4, events=log)
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
    result = run_loop(inline(tmp_path), att, workspace=ws, max_attempts=1)
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
    rec = run_loop(inline(tmp_path), att, workspace=ws, max_attempts=1).attempts[0]
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
        max_attempts=2,
        patch_limit=500,
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

    result = run_loop(inline(tmp_path), Vandal(), workspace=ws, max_attempts=2)
    assert not result.solved and result.attempts[0].verdict in ("fail", "error")
    assert tree_state(ws) == before


def test_solved_run_leaves_the_passing_change_in_place(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    result = run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha"), mode("fixed")]),
        workspace=ws,
        max_attempts=3,
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
        run_loop(inline(tmp_path), Crasher(), workspace=ws, max_attempts=3, events=log)
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
        max_attempts=5,
        events=log,
        planner=planner,
        on_repeat="replan",
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
        max_attempts=3,
        events=log,
        planner=planner,
        on_repeat="replan",
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
        max_attempts=5,
        events=log,
        on_repeat="escalate",
        escalate_to=strong,
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
        planner=planner,
        on_repeat="replan",
        events=log,
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
            max_attempts=2,
            prompts_dir=prompts,
            events=log,
        )
    for n, prompt in enumerate(result.prompts, 1):
        assert (prompts / f"attempt-{n}.txt").read_text() == prompt
    kinds = [line.split('"kind": "')[1].split('"')[0] for line in events.read_text().splitlines()]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("attempt_started") == kinds.count("attempt_finished") == 2
    assert kinds.count("workspace_restored") == sum(not r.solved for r in result.attempts)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_attempts": 0}, "max attempts must be at least 1"),
        ({"on_repeat": "replan"}, "needs a planner"),
        ({"on_repeat": "escalate"}, "needs an attempter to escalate to"),
        ({"on_repeat": "pray"}, "unknown on-repeat action 'pray'"),
        ({"history_mode": "all"}, "unknown history mode 'all'"),
    ],
)
def test_bad_settings_are_usage_errors(task, kwargs, message):
    att = make_attempter("scripted:walk", task=task)
    with pytest.raises(LoopError, match=message) as exc:
        run_task(task, att, **kwargs)
    assert exc.value.exit_code == 2


def test_reviewer_note_reaches_the_next_prompt_beside_the_verifier_output(tmp_path):
    ws = in_place_project(tmp_path / "ws")
    result = run_loop(
        inline(tmp_path),
        ListAttempter([mode("alpha"), mode("fixed")]),
        workspace=ws,
        max_attempts=2,
        reviewer=lambda rec: f"critic: attempt {rec.number} set the wrong mode",
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
        max_attempts=5,
        events=log,
        planner=planner,
        on_repeat="replan",
    )
    assert result.solved_at == 5
    assert log.count("signature_repeated") == 2 and log.count("replanned") == 2
    assert [e.data["attempt"] for e in log.events("replanned")] == [4, 5]
    assert "attempts 2 and 4" in planner.calls[1][1] and "attempts 2 and 4" in result.prompts[4]
