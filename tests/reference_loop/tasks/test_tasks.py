"""Task folders: strict manifests, sample tasks shipped, projects copied, {python} expanded."""

from __future__ import annotations

import re
import shlex
import sys

import pytest

from reference_loop._attempters.factory import make_attempter
from reference_loop._attempters.scripted import distinguishing_text, seeded_order
from reference_loop._core.events import EventLog
from reference_loop._core.ledger import CAUSES_HEADING
from reference_loop._core.planner import ScriptedPlanner
from reference_loop._run.loop import LoopOptions, run_task
from reference_loop._tasks.task import (
    copy_project,
    inline_task,
    load_task_dir,
    resolve_task,
    sample_tasks,
    three_failure_task,
)
from reference_loop._verdict.protect import DEFAULT_PROTECT
from reference_loop.errors import LoopError, LoopUsageError


def _task_dir(tmp_path, manifest: str):
    root = tmp_path / "t"
    (root / "project").mkdir(parents=True)
    (root / "project" / "m.py").write_text("X = 1\n")
    (root / "candidates" / "one").mkdir(parents=True)
    (root / "candidates" / "one" / "m.py").write_text("X = 2\n")
    (root / "task.toml").write_text(manifest)
    return root


GOOD = """name = "demo"
description = "d"
task = "fix it"
verify = "{python} -m pytest -q"
timeout = 5
[[candidates]]
dir = "candidates/one"
weight = 2
"""


def test_sample_tasks_ship_with_one_known_three_failure_task():
    tasks = sample_tasks()
    assert len(tasks) >= 4
    flagged = [t for t in tasks if t.known_three_failures]
    assert len(flagged) == 1 and three_failure_task().name == flagged[0].name
    for task in tasks:
        assert task.text and task.verify and task.description and task.candidates
        assert any(name.startswith("test_") for name in task.project_files())


def test_task_folder_is_read_with_its_candidates(tmp_path):
    task = load_task_dir(_task_dir(tmp_path, GOOD))
    assert (task.name, task.text, task.timeout) == ("demo", "fix it", 5.0)
    assert [c.name for c in task.candidates] == ["one"] and task.candidates[0].weight == 2.0
    assert task.verify_command() == f"{shlex.quote(sys.executable)} -m pytest -q"


@pytest.mark.parametrize(
    "manifest, needle",
    [
        ('task = "x"\n', "'verify'"),
        ('verify = "v"\n', "'task'"),
        ('task = "x"\nverify = "v"\ntimeout = -1\n', "timeout"),
        ('task = "x"\nverify = "v"\n[[candidates]]\ndir = "../../etc"\n', "not a folder inside"),
        ("task = [\n", "unreadable manifest"),
        ('task = "x"\nverify = "v"\nprotect = "tests/"\n', "'protect' must be a list"),
        ('task = "x"\nverify = "v"\nprotect = ["../up"]\n', "inside the workspace"),
    ],
)
def test_bad_manifest_is_one_clear_usage_error(tmp_path, manifest, needle):
    with pytest.raises(LoopUsageError, match=re.escape(needle)) as exc:
        load_task_dir(_task_dir(tmp_path, manifest))
    assert exc.value.exit_code == 2


def test_protected_paths_default_to_the_tests_and_the_verify_scripts(tmp_path):
    task = load_task_dir(_task_dir(tmp_path, GOOD.replace("-m pytest -q", "-B ci/check.py")))
    assert task.protect == DEFAULT_PROTECT
    assert task.protected() == (*DEFAULT_PROTECT, "ci/check.py")
    assert task.to_dict()["protected"] == list(task.protected())


def test_a_manifest_names_its_own_protected_paths(tmp_path):
    task = load_task_dir(
        _task_dir(
            tmp_path,
            GOOD.replace("[[candidates]]", 'protect = ["spec/", "./golden.txt"]\n[[candidates]]'),
        )
    )
    assert task.protect == ("spec/", "golden.txt")


def test_resolve_by_sample_name_or_folder_and_unknown_name_lists_the_samples(tmp_path):
    assert resolve_task("stats-median").known_three_failures
    assert resolve_task(str(_task_dir(tmp_path, GOOD))).name == "demo"
    with pytest.raises(LoopUsageError) as exc:
        resolve_task("no-such-task")
    assert exc.value.exit_code == 2 and "stats-median" in str(exc.value)


def test_copy_project_copies_only_the_project_files(tmp_path):
    task = load_task_dir(_task_dir(tmp_path, GOOD))
    dest = copy_project(task, tmp_path / "ws")
    assert sorted(p.name for p in dest.iterdir()) == ["m.py"]
    assert (dest / "m.py").read_text() == "X = 1\n"


def test_candidate_overlay_writes_its_files(tmp_path):
    task = load_task_dir(_task_dir(tmp_path, GOOD))
    ws = copy_project(task, tmp_path / "ws")
    assert task.candidates[0].apply(ws) == ["m.py"]
    assert (ws / "m.py").read_text() == "X = 2\n"


def test_inline_task_needs_text_and_verify_and_reads_a_candidates_folder(tmp_path):
    with pytest.raises(LoopError):
        inline_task("", "pytest")
    (tmp_path / "c" / "first").mkdir(parents=True)
    task = inline_task("fix", "pytest -q", candidates_dir=tmp_path / "c")
    assert [c.name for c in task.candidates] == ["first"] and task.project is None


# -- money-format: the sample task where two different wrong fixes fail the same way -----------


def test_money_format_tries_both_wrong_fixes_before_the_right_one_on_every_seed():
    task = resolve_task("money-format")
    assert [c.name for c in task.candidates if c.fixes] == ["sign-first"]
    for seed in range(10):
        assert seeded_order(task.candidates, seed, task.name)[-1].name == "sign-first"
    # Each wrong fix touches an identifier of its own, so the rederive attempter can tell them
    # apart once a patch is in the prompt.
    markers = distinguishing_text(task)
    assert "as_dollars" in markers["float-format"] and "whole_dollars" in markers["divmod-split"]


@pytest.mark.slow
def test_money_format_repeats_a_signature_under_accumulate_and_replans_exactly_once(monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the sample needs no plugin
    task = resolve_task("money-format")
    planner = ScriptedPlanner()
    log = EventLog()
    rederive = make_attempter("scripted:rederive", task=task)
    result = run_task(
        task,
        rederive,
        events=log,
        options=LoopOptions(history_mode="accumulate", on_repeat="replan", planner=planner),
    )
    first, second, third = result.attempts
    # Two different patches (not one patch repeated), one normalised failure signature.
    assert first.patch_fingerprint != second.patch_fingerprint
    assert first.signature == second.signature != ""
    assert "test_negative" in first.signature and "'$-<n>' == '-$<n>" in first.signature
    assert sorted(rederive.chosen[:2]) == ["divmod-split", "float-format"]
    assert log.count("signature_repeated") == 1 and log.count("replanned") == 1
    assert log.events("signature_repeated")[0].data["same_as"] == 1
    assert [e.data["attempt"] for e in log.events("replanned")] == [3]
    # The re-plan saw the accumulated cause (both attempts, one signature) under the heading.
    ((task_text, context),) = planner.calls
    assert task_text == task.text
    causes = context.split(CAUSES_HEADING, 1)[1]
    assert "attempts 1 and 2" in causes and "test_negative" in causes
    assert third.verdict == "pass" and result.solved_at == 3 and result.replans == 1


@pytest.mark.slow
def test_money_format_escalates_once_to_the_strong_attempter(monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    task = resolve_task("money-format")
    log = EventLog()
    result = run_task(
        task,
        make_attempter("scripted:rederive", task=task),
        events=log,
        options=LoopOptions(
            on_repeat="escalate", escalate_to=make_attempter("scripted:strong", task=task)
        ),
    )
    assert [a.attempter for a in result.attempts] == ["scripted:rederive"] * 2 + ["scripted:strong"]
    assert log.count("escalated") == 1 and result.escalations == 1 and result.solved_at == 3
