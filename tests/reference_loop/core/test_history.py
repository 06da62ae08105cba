"""Rendering the history: every attempt, oldest first, repeats collapsed, none ever dropped."""

from __future__ import annotations

import re

import pytest

from reference_loop._core.history import HEADING, NONE_TEXT, records_shown, render
from reference_loop._core.records import AttemptRecord, bound_patch, patch_fingerprint
from reference_loop.errors import LoopError, LoopUsageError


def _rec(
    n: int,
    sig: str,
    ident: str,
    *,
    output_lines: int = 5,
    patch_lines: int = 3,
    verdict: str = "fail",
) -> AttemptRecord:
    patch = f"diff --git a/{ident}.py b/{ident}.py\n" + "".join(
        f"+def {ident}_{i}(): pass\n" for i in range(patch_lines)
    )
    bounded, cut = bound_patch(patch)
    return AttemptRecord(
        number=n,
        verdict=verdict,
        signature=sig,
        files=[f"{ident}.py"],
        verifier_output="\n".join(f"output {ident} line {i}" for i in range(output_lines)),
        patch=bounded,
        patch_truncated=cut,
        patch_chars=len(patch),
        patch_fingerprint=patch_fingerprint(patch),
    )


def test_nothing_is_rendered_before_the_first_attempt():
    for mode in ("accumulate", "last", "none", "accumulate-nopatch"):
        assert render([], mode) == ""


def test_accumulate_shows_every_attempt_oldest_first_under_the_do_not_repeat_heading():
    text = render([_rec(1, "A", "alpha"), _rec(2, "B", "beta")], "accumulate")
    assert text.startswith(HEADING)
    assert "tried" in HEADING and "reverted" in HEADING and "NOT repeat" in HEADING
    assert text.index("### Attempt 1 — fail") < text.index("### Attempt 2 — fail")
    assert "alpha_0" in text and "beta_0" in text


def test_last_mode_shows_only_the_previous_attempt_the_overwrite_bug():
    text = render([_rec(1, "A", "alpha"), _rec(2, "B", "beta")], "last")
    assert "beta_0" in text
    assert "alpha" not in text and "Attempt 1" not in text


def test_none_mode_says_only_that_it_failed():
    text = render([_rec(1, "A", "alpha"), _rec(2, "B", "beta")], "none")
    assert text == NONE_TEXT + "\n"


def test_nopatch_mode_keeps_verdicts_and_output_but_no_patch_or_files():
    text = render([_rec(1, "A", "alpha"), _rec(2, "B", "beta")], "accumulate-nopatch")
    assert "### Attempt 1 — fail" in text and "output alpha line 0" in text
    assert "alpha_0" not in text and "alpha.py" not in text and "```diff" not in text


def test_same_signature_renders_once_with_a_recurrence_note():
    recs = [_rec(1, "A", "alpha"), _rec(2, "B", "beta"), _rec(3, "B", "gamma")]
    text = render(recs, "accumulate")
    assert "failed the same way in attempts 2 and 3" in text.lower()
    # The shared failure output appears once (at attempt 2); attempt 3 keeps its own label + patch.
    assert text.count("output beta line 0") == 1
    assert "output gamma line 0" not in text
    assert "### Attempt 3 — fail" in text and "gamma_0" in text


def test_identical_patch_is_named_not_repeated():
    one, two = _rec(1, "A", "alpha"), _rec(2, "A", "alpha")
    text = render([one, two], "accumulate")
    assert "identical to attempt 1's patch" in text
    assert text.count("+def alpha_0") == 1


def test_budget_shrinks_the_oldest_verbose_fields_first():
    recs = [_rec(n, f"S{n}", f"id{n}", output_lines=40, patch_lines=20) for n in (1, 2, 3)]
    full = render(recs, "accumulate", budget=10**6)
    text = render(recs, "accumulate", budget=len(full) - 200)
    assert len(text) <= len(full) - 200
    first = text[text.index("### Attempt 1") : text.index("### Attempt 2")]
    last = text[text.index("### Attempt 3") :]
    assert "lines omitted" in first
    assert "output id3 line 0" in last  # the newest attempt is still whole


@pytest.mark.parametrize("budget", [50, 300, 800, 2000])
def test_budget_never_drops_an_attempt(budget):
    recs = [_rec(n, f"S{n}", f"id{n}", output_lines=60, patch_lines=60) for n in range(1, 8)]
    text = render(recs, "accumulate", budget=budget)
    for n in range(1, 8):
        assert re.search(rf"Attempt {n} — fail", text), f"attempt {n} vanished at {budget}"
        assert f"id{n}.py" in text  # files touched survive in the one-line summary


def test_budget_is_respected_when_summaries_fit():
    recs = [_rec(n, f"S{n}", f"id{n}", output_lines=60, patch_lines=60) for n in range(1, 8)]
    assert len(render(recs, "accumulate", budget=1500)) <= 1500


def test_patch_truncation_marker_reaches_the_prompt():
    rec = _rec(1, "A", "alpha", patch_lines=400)
    assert rec.patch_truncated
    assert "patch truncated" in render([rec], "accumulate")


def test_reviewer_note_sits_beside_the_verifier_output():
    rec = _rec(1, "A", "alpha")
    rec.reviewer_note = "changed the wrong function"
    text = render([rec], "accumulate")
    assert "output alpha line 0" in text and "changed the wrong function" in text
    assert text.index("output alpha line 0") < text.index("changed the wrong function")


def test_patch_with_backticks_cannot_close_its_fence():
    rec = _rec(1, "A", "alpha")
    rec.patch = "+```\n+text after a fence\n"
    text = render([rec], "accumulate")
    assert "````diff" in text


def test_unknown_mode_and_bad_budget_are_usage_errors():
    with pytest.raises(LoopUsageError) as exc:
        render([_rec(1, "A", "a")], "everything")
    assert exc.value.exit_code == 2
    with pytest.raises(LoopError):
        render([_rec(1, "A", "a")], "accumulate", budget=0)


def test_records_shown_counts_what_each_mode_carries():
    recs = [_rec(1, "A", "a"), _rec(2, "B", "b")]
    assert [
        records_shown(recs, m) for m in ("accumulate", "last", "none", "accumulate-nopatch")
    ] == [2, 1, 0, 2]
    assert records_shown([], "accumulate") == 0


def test_render_fitted_says_how_many_characters_the_budget_cut() -> None:
    from reference_loop._core.history import render_fitted
    from reference_loop._core.records import AttemptRecord

    records = [
        AttemptRecord(number=n, verdict="fail", verifier_output="E assert 1 == 2\n" * 40)
        for n in (1, 2, 3)
    ]
    full, cut = render_fitted(records, "accumulate", 1_000_000)
    assert cut == 0
    small, cut = render_fitted(records, "accumulate", 600)
    assert cut == len(full) - len(small) > 0
    assert "Attempt 1" in small  # shrunk oldest-first, never dropped


@pytest.mark.slow
def test_an_attempt_that_creates_three_thousand_files_keeps_the_history_in_budget(tmp_path):
    from dataclasses import dataclass

    from reference_loop._attempters.base import AttemptOutcome, ToolStep
    from reference_loop._core.history import DEFAULT_BUDGET
    from reference_loop._core.records import MAX_RECORD_FILES
    from reference_loop._run.loop import LoopOptions, run_loop
    from reference_loop._tasks.task import inline_task

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text("raise SystemExit(1)\n")

    @dataclass
    class Flooder:
        name: str = "test:flooder"

        def attempt(self, prompt, workspace, *, attempt):
            for i in range(3000):
                (workspace / f"generated_file_number_{i:05d}.txt").write_text("x")
            return AttemptOutcome([ToolStep("flood", True)])

    task = inline_task("x", "{python} -B check.py", timeout=20)
    result = run_loop(task, Flooder(), workspace=ws, options=LoopOptions(max_attempts=2))
    first = result.attempts[0]
    assert first.files_total == 3000 and len(first.files) == MAX_RECORD_FILES
    history = result.prompts[1][result.prompts[1].index(HEADING) :]
    assert len(history) <= DEFAULT_BUDGET
    assert "and 2,980 more files" in history
    assert sorted(p.name for p in ws.iterdir()) == ["check.py"]


def test_escape_sequences_in_a_file_name_are_shown_not_sent():
    rec = AttemptRecord(number=1, verdict="fail", files=["\x1b]0;owned\x07x.py", "ok.py"])
    text = render([rec])
    assert "\x1b" not in text and "\x07" not in text
    assert "x.py, ok.py" in text
