"""Task folders: manifests read strictly, sample tasks shipped, projects copied, {python} expanded."""

from __future__ import annotations

import shlex
import sys

import pytest

from reference_loop.errors import LoopError
from reference_loop.tasks import (copy_project, inline_task, load_task_dir, resolve_task,
                                  sample_tasks, three_failure_task)


def _task_dir(tmp_path, manifest: str):
    root = tmp_path / "t"
    (root / "project").mkdir(parents=True)
    (root / "project" / "m.py").write_text("X = 1\n")
    (root / "candidates" / "one").mkdir(parents=True)
    (root / "candidates" / "one" / "m.py").write_text("X = 2\n")
    (root / "task.toml").write_text(manifest)
    return root


GOOD = '''name = "demo"
description = "d"
task = "fix it"
verify = "{python} -m pytest -q"
timeout = 5
[[candidates]]
dir = "candidates/one"
weight = 2
'''


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


@pytest.mark.parametrize("manifest, needle", [
    ('task = "x"\n', "'verify'"),
    ('verify = "v"\n', "'task'"),
    ('task = "x"\nverify = "v"\ntimeout = -1\n', "timeout"),
    ('task = "x"\nverify = "v"\n[[candidates]]\ndir = "../../etc"\n', "not a folder inside"),
    ('task = [\n', "unreadable manifest"),
])
def test_bad_manifest_is_one_clear_usage_error(tmp_path, manifest, needle):
    with pytest.raises(LoopError) as exc:
        load_task_dir(_task_dir(tmp_path, manifest))
    assert exc.value.exit_code == 2 and needle in str(exc.value)


def test_resolve_by_sample_name_or_folder_and_unknown_name_lists_the_samples(tmp_path):
    assert resolve_task("stats-median").known_three_failures
    assert resolve_task(str(_task_dir(tmp_path, GOOD))).name == "demo"
    with pytest.raises(LoopError) as exc:
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
