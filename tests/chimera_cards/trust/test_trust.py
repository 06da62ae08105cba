"""The trust policy as pure functions: which statements count, k-of-n threshold."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key, sign_envelope
from chimera_cards._trust.policy import (
    PAYLOAD_TYPE,
    Statement,
    TrustedKey,
    evaluate,
    evaluate_remembered,
    make_statement,
    parse_payload,
    sign_statement,
    verdict_key,
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


# --- remembered verdicts (the store's memo) ---------------------------------------------------


def _texts(*envelopes):
    return [json.dumps(e) for e in envelopes]


def _remembered(store, envelopes, trusted, threshold=1, name="demo", sha=SHA):
    (verdict,), fresh = evaluate_remembered(store, [(name, sha, envelopes)], trusted, threshold)
    store.remember_verdicts(fresh)
    return verdict, fresh


def test_a_remembered_verdict_is_read_back_only_for_exactly_the_same_inputs(tmp_path, reviewers):
    alice, bob, _ = reviewers
    envelopes = _texts(_approve(alice))
    with Store(tmp_path / "s.db") as store:
        first, fresh = _remembered(store, envelopes, [alice[0]])
        assert first.approved and len(fresh) == 1
        again, fresh = _remembered(store, envelopes, [alice[0]])
        assert again == first and fresh == {}  # read back: nothing verified, nothing new
        # The attacks the memo must not outlive, each a different key: the reviewer's key
        # removed, the threshold raised, a trusted rejection added, another card's name.
        removed, fresh = _remembered(store, envelopes, [bob[0]])
        assert not removed.approved and fresh
        raised, fresh = _remembered(store, envelopes, [alice[0], bob[0]], threshold=2)
        assert not raised.approved and fresh
        vetoed, fresh = _remembered(
            store, [*envelopes, *_texts(_approve(bob, decision="reject"))], [alice[0], bob[0]]
        )
        assert vetoed.rejected and not vetoed.approved and fresh
        renamed, fresh = _remembered(store, envelopes, [alice[0]], name="other")
        assert not renamed.approved and fresh


def test_a_remembered_verdict_is_what_evaluate_says(tmp_path, reviewers):
    alice, bob, _ = reviewers
    envelopes = _texts(_approve(alice), _approve(bob), "not json")
    trusted = [alice[0], bob[0]]
    with Store(tmp_path / "s.db") as store:
        _remembered(store, envelopes, trusted, threshold=2)
        read_back, fresh = _remembered(store, envelopes, trusted, threshold=2)
    assert fresh == {}
    assert read_back == evaluate(envelopes, trusted, name="demo", sha256=SHA, threshold=2)


def test_a_memo_row_that_is_not_a_verdict_is_evaluated_anew(tmp_path, reviewers):
    alice = reviewers[0]
    envelopes = _texts(_approve(alice))
    key = verdict_key(envelopes, [alice[0]], name="demo", sha256=SHA, threshold=1).hex()
    with Store(tmp_path / "s.db") as store:
        store.remember_verdicts({key: '{"approvers": "everyone"}'})
        verdict, fresh = _remembered(store, envelopes, [alice[0]])
    assert verdict.approved and verdict.approvers == [alice[0].keyid] and key in fresh


def test_remembering_never_waits_for_a_store_another_process_is_writing(tmp_path):
    path = tmp_path / "s.db"
    outcome = []

    def remember():
        # A busy timeout of a minute: were the memo to wait for the lock, this thread would
        # still be waiting when the generous join below gives up.
        with Store(path, timeout=60) as store:
            outcome.append(store.remember_verdicts({"ab" * 32: "{}"}))

    with Store(path) as other:
        with other.transaction():  # another writer holds the lock
            worker = threading.Thread(target=remember)
            worker.start()
            worker.join(20)
            assert not worker.is_alive() and outcome == [False]
        assert other.recall_verdicts(["ab" * 32]) == {}
        remember()
        assert outcome == [False, True]
        assert other.recall_verdicts(["ab" * 32]) == {"ab" * 32: "{}"}
