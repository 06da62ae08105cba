"""Code from outside the workspace, looked at with stat: each loaded module file resolved to the
file it really is (a folder reached through a link, a file that is a link), whichever path the
run loaded it by."""

from __future__ import annotations

import os
import time
from pathlib import Path

from reference_loop._verdict.outside import outside_changes


def _layout(tmp_path: Path) -> tuple[Path, Path, int]:
    workspace = tmp_path / "workspace"
    site = tmp_path / "site"
    workspace.mkdir()
    site.mkdir()
    (site / "installed.py").write_text("x = 1\n")
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    os.utime(site / "installed.py")
    return workspace, site, time.time_ns()


def _changed(path: Path) -> None:
    """Rewrite a file so that its inode time moves (what an attempt that writes it does)."""
    path.write_text(path.read_text() + "# changed\n")


def test_a_module_rewritten_outside_and_loaded_through_a_linked_folder_is_outside_code(tmp_path):
    workspace, site, since = _layout(tmp_path)
    (tmp_path / "linked").symlink_to(site, target_is_directory=True)
    _changed(site / "installed.py")
    found = outside_changes(
        [str(tmp_path / "linked" / "installed.py")],
        [],
        since_ns=since,
        until_ns=time.time_ns() + 1,
        inside=[workspace],
    )
    assert [(v.kind, v.path) for v in found] == [
        ("outside-code", os.path.realpath(site / "installed.py"))
    ]


def test_a_link_outside_that_points_at_a_rewritten_module_outside_is_outside_code(tmp_path):
    workspace, site, since = _layout(tmp_path)
    (site / "alias.py").symlink_to(site / "installed.py")
    _changed(site / "installed.py")
    found = outside_changes(
        [str(site / "alias.py")],
        [],
        since_ns=since,
        until_ns=time.time_ns() + 1,
        inside=[workspace],
    )
    assert [v.path for v in found] == [os.path.realpath(site / "installed.py")]


def test_a_link_outside_that_points_into_the_workspace_is_the_patchs_not_outside_code(tmp_path):
    # The attempt's own file, loaded by another name: the patch shows it, the review reads it.
    workspace, site, since = _layout(tmp_path)
    (site / "calc_alias.py").symlink_to(workspace / "calc.py")
    _changed(workspace / "calc.py")
    found = outside_changes(
        [str(site / "calc_alias.py"), str(workspace / "calc.py")],
        [],
        since_ns=since,
        until_ns=time.time_ns() + 1,
        inside=[workspace],
    )
    assert found == []


def test_modules_unchanged_since_the_start_or_changed_during_the_run_are_not_reported(tmp_path):
    workspace, site, since = _layout(tmp_path)
    (site / "other.py").write_text("y = 2\n")  # after the start, before this run
    until = time.time_ns() + 1
    time.sleep(0.01)
    _changed(site / "installed.py")  # while this run ran: the run's own doing
    found = outside_changes(
        [str(site / "installed.py"), str(site / "other.py"), str(site / "gone.py")],
        [],
        since_ns=since,
        until_ns=until,
        inside=[workspace],
    )
    assert [v.path for v in found] == [os.path.realpath(site / "other.py")]
