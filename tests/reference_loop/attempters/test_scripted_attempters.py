"""Scripted attempters: deterministic, seeded, re-deriving like a model unless shown its patch."""

from __future__ import annotations

import pytest

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._attempters.factory import make_attempter
from reference_loop._attempters.scripted import distinguishing_text, seeded_order
from reference_loop._tasks.task import copy_project, three_failure_task
from reference_loop.errors import LoopUsageError


@pytest.fixture
def task():
    return three_failure_task()


def test_distinguishing_text_is_unique_to_each_wrong_candidate(task):
    marks = distinguishing_text(task)
    wrong = [c.name for c in task.candidates if not c.fixes]
    assert len(wrong) == 3
    for name in wrong:
        assert marks[name], f"{name} has nothing that identifies its patch"
        for other in task.candidates:
            if other.name != name:
                blob = b"".join(other.files().values()).decode()
                assert not any(m in blob for m in marks[name])


def test_seeded_order_is_reproducible_varies_with_seed_and_keeps_weight_zero_last(task):
    orders = {tuple(c.name for c in seeded_order(task.candidates, s, task.name)) for s in range(8)}
    assert len(orders) > 1
    for order in orders:
        assert order[-1] == "sorted-copy"
    assert seeded_order(task.candidates, 3, "x") == seeded_order(task.candidates, 3, "x")


def test_rederive_repeats_its_first_idea_until_that_idea_is_shown(task, tmp_path):
    att = make_attempter("scripted:rederive", seed=0, task=task)
    first, second = att.order[0].name, att.order[1].name
    marks = distinguishing_text(task)
    for n in (1, 2):
        ws = copy_project(task, tmp_path / f"ws{n}")
        att.attempt("# Task\nfix median", ws, attempt=n)
    assert att.chosen == [first, first]
    ws = copy_project(task, tmp_path / "ws3")
    att.attempt(f"earlier patch added {marks[first][0]}", ws, attempt=3)
    assert att.chosen[-1] == second


def test_rederive_does_not_rule_out_an_idea_on_a_substring(task, tmp_path):
    att = make_attempter("scripted:rederive", seed=0, task=task)
    mark = distinguishing_text(task)[att.order[0].name][0]
    att.attempt(f"x{mark}y", copy_project(task, tmp_path / "ws"), attempt=1)
    assert att.chosen == [att.order[0].name]


def test_walk_ignores_the_prompt_and_walks_its_list(task, tmp_path):
    att = make_attempter("scripted:walk", seed=1, task=task)
    for n in range(1, 6):
        att.attempt("anything", copy_project(task, tmp_path / f"w{n}"), attempt=n)
    names = [c.name for c in att.order]
    assert att.chosen == names + names[:1]


def test_strong_applies_the_manifest_fix_and_reports_steps(task, tmp_path):
    att = make_attempter("scripted:strong", task=task)
    ws = copy_project(task, tmp_path / "ws")
    outcome = att.attempt("p", ws, attempt=1)
    assert isinstance(outcome, AttemptOutcome) and all(
        isinstance(s, ToolStep) for s in outcome.steps
    )
    assert outcome.first_failure() is None and att.chosen == ["sorted-copy"]
    assert "sorted(values)" in (ws / "stats.py").read_text()


def test_bad_specs_are_usage_errors(task):
    for spec, kwargs in [
        ("scripted:nope", {"task": task}),
        ("scripted:walk", {}),
        ("walk", {"task": task}),
        ("magic:x", {}),
    ]:
        with pytest.raises(LoopUsageError) as exc:
            make_attempter(spec, **kwargs)
        assert exc.value.exit_code == 2
