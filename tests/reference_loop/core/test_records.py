"""AttemptRecord and History: evidence is bounded honestly and never overwritten."""

from __future__ import annotations

import pytest

from reference_loop._core.records import (
    AttemptRecord,
    FailedStep,
    History,
    bound_patch,
    normalise_patch,
    patch_fingerprint,
)
from reference_loop.errors import LoopError


def _patch(lines: int) -> str:
    return "".join(f"+line number {i} of the patch\n" for i in range(lines))


def test_short_patch_is_kept_whole():
    text = _patch(3)
    assert bound_patch(text, 2000) == (text, False)


def test_long_patch_is_cut_at_a_line_boundary_and_says_so():
    text = _patch(200)
    bounded, truncated = bound_patch(text, 2000)
    assert truncated
    body, marker = bounded.rsplit("\n", 1)[0], bounded.splitlines()[-1]
    assert len(body) <= 2000
    assert all(
        line.startswith("+line number ") and line.endswith("of the patch")
        for line in body.splitlines()
    )
    assert "patch truncated" in marker and f"of {len(text)} chars" in marker


def test_single_overlong_line_is_cut_inside_it_with_a_marker():
    bounded, truncated = bound_patch("x" * 5000, 100)
    assert truncated
    assert bounded.startswith("x" * 100 + "\n")
    assert "patch truncated" in bounded


def test_normalised_patch_ignores_blob_ids_and_hunk_line_numbers():
    a = "diff --git a/f b/f\nindex 1234567..89abcde 100644\n@@ -10,2 +10,2 @@ def f():\n-x\n+y\n"
    b = "diff --git a/f b/f\nindex fedcba9..7654321 100644\n@@ -12,2 +12,2 @@ def f():\n-x\n+y  \n"
    assert normalise_patch(a) == normalise_patch(b)
    assert patch_fingerprint(a) == patch_fingerprint(b) != patch_fingerprint(a.replace("+y", "+z"))
    assert patch_fingerprint("") == ""


def test_history_append_never_overwrites_an_earlier_attempt():
    history = History()
    history.append(AttemptRecord(1, "fail", signature="A"))
    history.append(AttemptRecord(2, "fail", signature="B"))
    with pytest.raises(LoopError):
        history.append(AttemptRecord(2, "fail", signature="C"))
    with pytest.raises(LoopError):
        history.append(AttemptRecord(1, "fail", signature="D"))
    assert [r.signature for r in history] == ["A", "B"]


def test_history_records_view_cannot_be_mutated_into_the_history():
    history = History([AttemptRecord(1, "fail")])
    assert isinstance(history.records, tuple)
    assert len(history) == 1 and history.last().number == 1


def test_unknown_verdict_is_refused():
    with pytest.raises(LoopError):
        AttemptRecord(1, "maybe")


def test_record_round_trips_through_dict_with_reviewer_note_beside_output():
    rec = AttemptRecord(
        3,
        "fail",
        verifier_output="E assert 1 == 2",
        patch="+x\n",
        first_failing_step=FailedStep("edit", "no such file"),
        reviewer_note="the fix is in the wrong function",
    )
    again = AttemptRecord.from_dict(rec.to_dict())
    assert again == rec
    assert again.verifier_output == "E assert 1 == 2" and again.reviewer_note


def test_summary_names_number_verdict_signature_step_and_files():
    rec = AttemptRecord(
        2,
        "fail",
        signature="FAILED t.py::x",
        files=["a.py", "new.py"],
        first_failing_step=FailedStep("write", "denied"),
    )
    line = rec.summary()
    assert line.startswith("Attempt 2 — fail")
    assert "FAILED t.py::x" in line and "write" in line and "new.py" in line
    assert "new.py" not in rec.summary(with_files=False)
