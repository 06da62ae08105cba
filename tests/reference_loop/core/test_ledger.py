"""TaskLedger: facts and deduplicated failure causes, rendered for a planner."""

from __future__ import annotations

from reference_loop._core.ledger import CAUSES_HEADING, FACTS_HEADING, TaskLedger
from reference_loop._core.records import AttemptRecord, FailedStep


def test_empty_ledger_renders_empty_string():
    assert TaskLedger().context() == ""


def test_context_has_both_bullet_blocks():
    ledger = TaskLedger()
    ledger.add_fact("pytest is the check")
    ledger.add_cause("sig-a", "assert 1 == 2 in test_add", 1)
    text = ledger.context()
    assert FACTS_HEADING == "Known facts:"
    assert CAUSES_HEADING == "Why earlier attempts failed (do NOT repeat these):"
    assert text == (
        "Known facts:\n- pytest is the check\n\n"
        "Why earlier attempts failed (do NOT repeat these):\n"
        "- attempt 1: assert 1 == 2 in test_add"
    )


def test_only_causes_renders_only_the_causes_block():
    ledger = TaskLedger()
    ledger.add_cause("s", "boom", 2)
    assert ledger.context().startswith(CAUSES_HEADING)


def test_causes_are_deduped_by_signature_and_collect_attempts_and_files():
    ledger = TaskLedger()
    ledger.add_record(AttemptRecord(1, "fail", signature="S", files=["a.py"]))
    ledger.add_record(AttemptRecord(2, "fail", signature="T", files=["b.py"]))
    ledger.add_record(AttemptRecord(3, "fail", signature="S", files=["c.py"]))
    assert len(ledger.causes) == 2
    text = ledger.context()
    assert "- attempts 1 and 3: S [changed: a.py, c.py]" in text
    assert "- attempt 2: T [changed: b.py]" in text


def test_passing_record_adds_no_cause_and_facts_are_deduped():
    ledger = TaskLedger()
    assert ledger.add_record(AttemptRecord(1, "pass")) is None
    ledger.add_fact("x")
    ledger.add_fact("x ")
    assert ledger.facts == ["x"] and ledger.causes == []


def test_tool_step_failure_is_part_of_the_cause():
    ledger = TaskLedger()
    ledger.add_record(
        AttemptRecord(
            1, "fail", signature="S", first_failing_step=FailedStep("apply", "hunk failed")
        )
    )
    assert "tool step apply failed: hunk failed" in ledger.context()
