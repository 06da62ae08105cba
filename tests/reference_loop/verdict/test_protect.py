"""Protected paths: which changed paths count as editing the check."""

from __future__ import annotations

import pytest

from reference_loop._verdict.protect import (
    DEFAULT_PROTECT,
    check_patterns,
    is_protected,
    protected_changes,
    verify_paths,
)
from reference_loop.errors import LoopUsageError


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("test_stats.py", "test_*.py"),
        ("pkg/test_stats.py", "test_*.py"),
        ("stats_test.py", "*_test.py"),
        ("tests/unit/helpers.py", "tests/"),
        ("pkg/tests/data.json", "tests/"),
        ("conftest.py", "conftest.py"),
        ("sub/conftest.py", "conftest.py"),
    ],
)
def test_default_patterns_cover_the_tests_at_any_depth(path, pattern):
    assert is_protected(path, DEFAULT_PROTECT) == pattern


@pytest.mark.parametrize("path", ["stats.py", "testing.py", "contest.py", "tests.py", "src/x.py"])
def test_default_patterns_leave_the_code_editable(path):
    assert is_protected(path, DEFAULT_PROTECT) is None


def test_anchored_patterns_match_from_the_root_only():
    assert is_protected("check.py", ["/check.py"]) == "/check.py"
    assert is_protected("sub/check.py", ["/check.py"]) is None
    assert is_protected("ci/run.sh", ["ci/*.sh"]) == "ci/*.sh"
    assert is_protected("x/ci/run.sh", ["ci/*.sh"]) is None
    assert is_protected("ci/deep/run.sh", ["ci/"]) == "ci/"


def test_protected_changes_lists_each_covered_path_with_its_pattern():
    hits = protected_changes(["stats.py", "test_stats.py", "tests/new.py"], DEFAULT_PROTECT)
    assert [(h.path, h.pattern) for h in hits] == [
        ("test_stats.py", "test_*.py"),
        ("tests/new.py", "tests/"),
    ]


@pytest.mark.parametrize(
    ("verify", "expected"),
    [
        ("{python} -B -m pytest -q -p no:cacheprovider", ()),
        ("{python} -B check.py", ("/check.py",)),
        # Variables set for the command do not hide the file it runs.
        (
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -B -m pytest -q tests/test_a.py",
            ("tests/test_a.py",),
        ),
        ("A=1 B=./x.py {python} check.py", ("/check.py",)),
        ("CI=1 ./check.sh && X=y bash ci/run.sh", ("/check.sh", "ci/run.sh")),
        ("./check.sh", ("/check.sh",)),
        ("bash ci/run.sh && pytest tests/test_a.py::test_x -q", ("ci/run.sh", "tests/test_a.py")),
        ("python -m pytest -q tests/test_x.py", ("tests/test_x.py",)),
        # grep reads value.py; it does not run it, and value.py may be the file to fix.
        ("grep -qx 'VALUE = 4' value.py || { echo no; exit 1; }", ()),
    ],
)
def test_verify_paths_are_the_files_the_command_runs(verify, expected):
    assert verify_paths(verify) == expected


@pytest.mark.parametrize("bad", ["", "  ", "../x", "a/../../b", "/"])
def test_patterns_leaving_the_workspace_are_usage_errors(bad):
    with pytest.raises(LoopUsageError):
        check_patterns([bad])


def test_check_patterns_cleans_and_deduplicates():
    assert check_patterns(["./tests/", "tests/", " *.bin "]) == ("tests/", "*.bin")
