"""The trust policy as pure functions: which statements count, k-of-n threshold."""

from __future__ import annotations

import hashlib

import pytest

from chimera_cards.keys import generate_key, load_private_key, sign_envelope
from chimera_cards.trust import (
    PAYLOAD_TYPE,
    Statement,
    TrustedKey,
    evaluate,
    make_statement,
    parse_payload,
    sign_statement,
)

SHA = hashlib.sha256(b"card bytes").hexdigest()
OTHER = hashlib.sha256(b"other bytes").hexdigest()


@pytest.fixture
def reviewers(tmp_path):
    out = []
    for n in ("alice", "bob", "carol"):
        gen = generate_key(n, tmp_path / f"{n}.key")
        out.append((TrustedKey(n, gen.public), load_private_key(gen.keyfile)))
    return out


def _approve(key, name="demo", sha=SHA, decision="approve"):
    priv = key[1]
    return sign_statement(priv, make_statement(name, sha, decision, key[0].keyid, "ok"))


def test_statement_payload_round_trips():
    st = make_statement("demo", SHA, "approve", "0123456789abcdef", "looked fine")
    assert parse_payload(st.payload()) == st


def test_one_trusted_approval_meets_default_threshold(reviewers):
    alice = reviewers[0]
    v = evaluate([_approve(alice)], [alice[0]], name="demo", sha256=SHA, threshold=1)
    assert v.approved and v.approvers == [alice[0].keyid] and not v.problems


def test_threshold_two_with_one_approval_is_not_approved(reviewers):
    alice, bob, _ = reviewers
    trusted = [alice[0], bob[0]]
    v = evaluate([_approve(alice)], trusted, name="demo", sha256=SHA, threshold=2)
    assert not v.approved
    v2 = evaluate([_approve(alice), _approve(bob)], trusted, name="demo", sha256=SHA, threshold=2)
    assert v2.approved


def test_the_same_reviewer_approving_twice_counts_once(reviewers):
    alice, bob, _ = reviewers
    v = evaluate(
        [_approve(alice), _approve(alice)], [alice[0], bob[0]], name="demo", sha256=SHA, threshold=2
    )
    assert v.approvers == [alice[0].keyid] and not v.approved


def test_untrusted_key_approval_does_not_count(reviewers):
    alice, bob, _ = reviewers
    v = evaluate([_approve(bob)], [alice[0]], name="demo", sha256=SHA, threshold=1)
    assert not v.approved and "no valid signature from a trusted key" in v.problems[0]


def test_approval_for_other_bytes_or_other_name_does_not_count(reviewers):
    alice = reviewers[0]
    v = evaluate([_approve(alice, sha=OTHER)], [alice[0]], name="demo", sha256=SHA, threshold=1)
    assert not v.approved and "not these bytes" in v.problems[0]
    v = evaluate([_approve(alice, name="other")], [alice[0]], name="demo", sha256=SHA, threshold=1)
    assert not v.approved and "for card 'other'" in v.problems[0]


def test_signing_a_statement_in_another_reviewers_name_does_not_count(reviewers):
    alice, bob, _ = reviewers
    forged = sign_statement(alice[1], make_statement("demo", SHA, "approve", bob[0].keyid))
    v = evaluate([forged], [alice[0], bob[0]], name="demo", sha256=SHA, threshold=1)
    assert not v.approved and "signed by" in v.problems[0]


def test_any_trusted_rejection_blocks_approval(reviewers):
    alice, bob, _ = reviewers
    v = evaluate(
        [_approve(alice), _approve(bob, decision="reject")],
        [alice[0], bob[0]],
        name="demo",
        sha256=SHA,
        threshold=1,
    )
    assert v.rejected and not v.approved


def test_a_payload_of_another_type_is_not_a_review(reviewers):
    alice = reviewers[0]
    st = make_statement("demo", SHA, "approve", alice[0].keyid)
    env = sign_envelope(alice[1], "text/plain", st.payload())
    v = evaluate([env], [alice[0]], name="demo", sha256=SHA, threshold=1)
    assert not v.approved and "payloadType" in v.problems[0]
    assert PAYLOAD_TYPE == "application/vnd.in-toto+json"


def test_garbage_envelopes_are_problems_not_crashes(reviewers):
    alice = reviewers[0]
    v = evaluate(
        ["not json", {"payload": 1}, "[]"], [alice[0]], name="demo", sha256=SHA, threshold=1
    )
    assert not v.approved and len(v.problems) == 3


def test_statement_dataclass_is_plain_data():
    st = Statement("n", SHA, "reject", "k", "t", "why")
    assert st.to_dict()["decision"] == "reject"
