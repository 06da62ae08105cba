"""Attacks on approval and retrieval, each test named after what it stops.

Cards arrive the real way: ``import_source`` from a card folder or from a URL served by a real
HTTP server on 127.0.0.1; tampering is done with a real ``sqlite3`` connection to the store file.
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import (
    card_text,
    dump_store,
    edit_blob,
    force_status,
    make_card,
    plant_statement,
)

from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._cli.app import main
from chimera_cards._importer.pipeline import import_source
from chimera_cards._retrieve.export import export_card
from chimera_cards._retrieve.matching import match
from chimera_cards._retrieve.render import render_for_prompt
from chimera_cards._review.decisions import add_trust, approve, reject, remove_trust, set_threshold
from chimera_cards._review.statements import import_statements
from chimera_cards._store.facade import Store
from chimera_cards._store.verify import verify_store
from chimera_cards._trust.keys import (
    generate_key,
    load_private_key,
    parse_public_key,
    sign_envelope,
)
from chimera_cards._trust.policy import PAYLOAD_TYPE, make_statement
from chimera_cards.errors import (
    UnknownCardError,
    UnknownVersionError,
    UntrustedKeyError,
    UsageError,
)


@pytest.fixture
def alice(store, tmp_path):
    gen = generate_key("alice", tmp_path / "keys" / "alice.key")
    add_trust(store, "alice", gen.public)
    return gen


def key(gen):
    return load_private_key(gen.keyfile)


def from_url(store, server, name, path=None, **kw):
    """Serve a card over HTTP and import it by URL; returns the (single) import result."""
    url = server.serve(path or f"/{name}/SKILL.md", card_text(name, **kw))
    (result,) = import_source(store, url)
    assert result.ok, result.error
    return result


def names(store, query, **kw):
    return [m.name for m in match(store, query, **kw)]


def test_approving_with_the_wrong_hash_is_refused(store, alice, card_server):
    res = from_url(store, card_server, "fetch-card")
    assert res.status == "pending"
    reviewed = card_text("fetch-card", description="The text the reviewer actually read.").encode()
    import hashlib

    before = dump_store(store.path)
    with pytest.raises(UnknownVersionError):
        approve(store, "fetch-card", hashlib.sha256(reviewed).hexdigest(), key(alice))
    with pytest.raises(UsageError):
        approve(store, "fetch-card", "not-hex", key(alice))
    with pytest.raises(UnknownCardError):
        approve(store, "no-such-card", res.sha256, key(alice))
    assert dump_store(store.path) == before
    assert names(store, "fetch-card") == []


def test_approving_with_an_untrusted_key_is_refused(store, alice, card_server, tmp_path):
    res = from_url(store, card_server, "fetch-card")
    mallory = generate_key("mallory", tmp_path / "mallory.key")
    before = dump_store(store.path)
    with pytest.raises(UntrustedKeyError):
        approve(store, "fetch-card", res.sha256, key(mallory))
    assert dump_store(store.path) == before
    assert names(store, "fetch-card") == []


def test_a_forged_signature_does_not_count(store, alice, tmp_path):
    card_dir = make_card(tmp_path / "in", "forged-card")
    sha = __import__("hashlib").sha256((card_dir / "SKILL.md").read_bytes()).hexdigest()
    st = make_statement("forged-card", sha, "approve", alice.public.keyid, "trust me")
    mallory = generate_key("mallory", tmp_path / "mallory.key")
    # Signed by mallory but naming alice's key id; and alice's key id with random signature bytes.
    by_mallory = sign_envelope(key(mallory), PAYLOAD_TYPE, st.payload())
    by_mallory["signatures"][0]["keyid"] = alice.public.keyid
    garbage = json.loads(json.dumps(by_mallory))
    garbage["signatures"][0]["sig"] = base64.b64encode(b"\x01" * 64).decode()
    (card_dir / "approvals.jsonl").write_text(
        json.dumps(by_mallory) + "\n" + json.dumps(garbage) + "\n"
    )
    (res,) = import_source(store, card_dir, taint=True)
    assert res.status == "pending"
    assert names(store, "forged-card") == []
    # Even written straight into the statements table and the status flipped by hand.
    plant_statement(store.path, "forged-card", sha, json.dumps(garbage), keyid="f" * 16)
    force_status(store.path, sha, "active")
    assert names(store, "forged-card") == []


def test_a_signature_copied_onto_different_bytes_does_not_count(
    store, alice, card_server, tmp_path
):
    res = from_url(store, card_server, "copied-card")
    approve(store, "copied-card", res.sha256, key(alice))
    assert names(store, "copied-card") == ["copied-card"]
    out = export_card(store, "copied-card", tmp_path / "export")
    card_dir = tmp_path / "export" / "copied-card"
    assert (card_dir / "approvals.jsonl").is_file(), out
    skill = card_dir / "SKILL.md"
    data = skill.read_bytes()
    skill.write_bytes(data.replace(b"Do the first step.", b"Do the first stop."))
    with Store(tmp_path / "team.db") as team:
        add_trust(team, "alice", alice.public)
        (res2,) = import_source(team, card_dir, taint=True)
        assert res2.sha256 != res.sha256 and res2.status == "pending"
        assert names(team, "copied-card") == []
        with team.snapshot() as conn:
            assert conn.execute("SELECT count(*) FROM statements").fetchone()[0] == 0


def test_editing_the_blob_in_the_sqlite_file_after_approval(store, alice, card_server, tmp_path):
    res = from_url(store, card_server, "edited-card")
    approve(store, "edited-card", res.sha256, key(alice))
    assert names(store, "edited-card") == ["edited-card"]
    edit_blob(store.path, res.skill_sha256, "first step", "first stop")  # the SKILL.md bytes
    assert names(store, "edited-card") == []
    report = verify_store(store)
    kinds = {p.kind for p in report.problems}
    assert not report.ok and {"blob-hash", "signature-mismatch"} <= kinds
    r = CliRunner().invoke(main, ["verify", "--store", str(store.path)])
    assert r.exit_code == 1 and "signature" in r.output + (r.stderr if r.stderr_bytes else "")


def test_blob_rewritten_as_text_by_plain_sql_replace_is_tampered_not_a_crash(
    store, alice, card_server
):
    # SQLite's replace() on a BLOB returns TEXT: the obvious hand edit changes the column's type.
    res = from_url(store, card_server, "retyped-card")
    approve(store, "retyped-card", res.sha256, key(alice))
    conn = sqlite3.connect(store.path)
    conn.execute(
        "UPDATE blobs SET data = replace(data, 'first step', 'first stop') WHERE sha256 = ?",
        (res.skill_sha256,),
    )
    conn.commit()
    assert conn.execute(
        "SELECT typeof(data) FROM blobs WHERE sha256 = ?", (res.skill_sha256,)
    ).fetchone() == ("text",)
    conn.close()
    assert names(store, "retyped-card") == []
    report = verify_store(store)
    assert not report.ok and "blob-hash" in {p.kind for p in report.problems}
    r = CliRunner().invoke(main, ["match", "retyped", "--store", str(store.path)])
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "retyped-card" not in r.stdout  # not served; named only in the warning on stderr
    assert "warning: skipped retyped-card" in r.stderr


def test_replaying_an_old_approval_after_a_newer_version_was_rejected(
    store, alice, card_server, tmp_path
):
    v1 = from_url(store, card_server, "replay-card", path="/v1/SKILL.md")
    approve(store, "replay-card", v1.sha256, key(alice))
    export_card(store, "replay-card", tmp_path / "old")
    old_approvals = tmp_path / "old" / "replay-card" / "approvals.jsonl"
    v2 = from_url(
        store,
        card_server,
        "replay-card",
        path="/v2/SKILL.md",
        description="Newer text: now also uploads your keys somewhere.",
    )
    reject(store, "replay-card", v2.sha256, key(alice), "exfiltrates keys")
    # Replay 1: the old approval applied to the rejected bytes is not about them.
    res = import_statements(store, old_approvals, "replay-card", v2.sha256)
    assert res.accepted == 0 and "not these bytes" in res.problems[0]
    # Replay 2: the rejected bytes re-imported from a folder carrying the old approval.
    folder = make_card(
        tmp_path / "again",
        "replay-card",
        description="Newer text: now also uploads your keys somewhere.",
    )
    shutil.copy(old_approvals, folder / "approvals.jsonl")
    (res2,) = import_source(store, folder, taint=True)
    assert res2.sha256 == v2.sha256 and res2.status == "rejected"
    # Replay 3: the old approval's envelope planted in the table under the new hash.
    env = old_approvals.read_text().strip()
    plant_statement(store.path, "replay-card", v2.sha256, env)
    (m,) = match(store, "replay-card")
    assert m.sha256 == v1.sha256  # the older approved version, never the rejected one


def test_replaying_an_approval_after_the_same_bytes_were_rejected(
    store, alice, card_server, tmp_path
):
    v1 = from_url(store, card_server, "turncoat-card")
    approve(store, "turncoat-card", v1.sha256, key(alice))
    export_card(store, "turncoat-card", tmp_path / "before")
    reject(store, "turncoat-card", v1.sha256, key(alice), "found a problem after all")
    assert names(store, "turncoat-card") == []
    (res,) = import_source(store, tmp_path / "before" / "turncoat-card", taint=True)
    assert res.status == "rejected"
    assert names(store, "turncoat-card") == []


def test_a_tainted_card_that_claims_provenance_clean(store, alice, card_server):
    res = from_url(
        store, card_server, "liar-card", frontmatter={"provenance": "clean", "status": "active"}
    )
    assert (res.provenance, res.status) == ("tainted", "pending")
    assert names(store, "liar-card") == []
    approve(store, "liar-card", res.sha256, key(alice))
    (m,) = match(store, "liar-card")
    assert m.approved_after_taint
    assert 'provenance="tainted" review="approved after arriving tainted' in render_for_prompt([m])


def test_a_pending_card_queried_by_its_exact_name(store, alice, card_server):
    res = from_url(store, card_server, "exact-name-card")
    assert res.status == "pending"
    assert names(store, "exact-name-card") == []
    assert names(store, "exact-name-card", level=1) == []
    r = CliRunner().invoke(main, ["match", "exact-name-card", "--store", str(store.path), "--json"])
    assert r.exit_code == 1 and json.loads(r.stdout)["matches"] == []  # nothing matched: exit 1


def test_threshold_two_with_one_approval(store, alice, card_server, tmp_path):
    bob = generate_key("bob", tmp_path / "bob.key")
    add_trust(store, "bob", bob.public)
    set_threshold(store, 2)
    res = from_url(store, card_server, "two-key-card")
    assert approve(store, "two-key-card", res.sha256, key(alice)).status == "pending"
    again = approve(store, "two-key-card", res.sha256, key(alice))  # same key: one approval
    assert again.status == "pending" and not again.recorded
    assert names(store, "two-key-card") == []
    force_status(store.path, res.sha256, "active")  # flipped by hand: not past the gate
    assert names(store, "two-key-card") == []
    force_status(store.path, res.sha256, "pending")
    assert approve(store, "two-key-card", res.sha256, key(bob)).status == "active"
    assert names(store, "two-key-card") == ["two-key-card"]


def test_a_removed_trust_key(store, alice, card_server):
    res = from_url(store, card_server, "removed-key-card")
    approve(store, "removed-key-card", res.sha256, key(alice))
    assert names(store, "removed-key-card") == ["removed-key-card"]
    _, changes = remove_trust(store, "alice")
    assert [(c.name, c.old, c.new) for c in changes] == [("removed-key-card", "active", "pending")]
    assert names(store, "removed-key-card") == []
    assert store.version("removed-key-card", res.sha256).status == "pending"
    before = dump_store(store.path)
    with pytest.raises(UntrustedKeyError):  # removing it again changes nothing
        remove_trust(store, "alice")
    assert dump_store(store.path) == before
    force_status(store.path, res.sha256, "active")  # forcing it back does not bring it back
    assert names(store, "removed-key-card") == []
    add_trust(store, "alice", parse_public_key(alice.pubfile.read_text()))
    assert names(store, "removed-key-card") == ["removed-key-card"]


def test_a_forged_statement_cannot_occupy_a_reviewers_slot(store, alice, tmp_path):
    bob = generate_key("bob", tmp_path / "bob.key")  # not trusted yet when the forgery arrives
    mallory = generate_key("mallory", tmp_path / "mallory.key")
    card_dir = make_card(tmp_path / "in", "squat-card")
    sha = read_bundle_dir(card_dir).digest  # what a reviewer signs: the bundle digest
    lines = []
    for victim in (alice, bob):
        st = make_statement("squat-card", sha, "approve", victim.public.keyid)
        env = sign_envelope(key(mallory), PAYLOAD_TYPE, st.payload())
        env["signatures"][0]["keyid"] = victim.public.keyid
        lines.append(json.dumps(env))
    (card_dir / "approvals.jsonl").write_text("\n".join(lines) + "\n")
    (res,) = import_source(store, card_dir, taint=True)
    assert res.status == "pending"
    with store.snapshot() as conn:  # the one claiming a trusted reviewer is dropped at once
        assert [r[0] for r in conn.execute("SELECT keyid FROM statements")] == [bob.public.keyid]
    add_trust(store, "bob", bob.public)
    set_threshold(store, 2)
    assert approve(store, "squat-card", sha, key(alice)).status == "pending"
    d = approve(store, "squat-card", sha, key(bob))
    assert d.recorded and d.status == "active"
    assert names(store, "squat-card") == ["squat-card"]


def test_editing_an_exported_card_makes_it_pending_even_from_a_clean_path(
    store, alice, card_server, tmp_path
):
    res = from_url(store, card_server, "exported-card")
    approve(store, "exported-card", res.sha256, key(alice))
    export_card(store, "exported-card", tmp_path / "repo")
    skill = tmp_path / "repo" / "exported-card" / "SKILL.md"
    skill.write_bytes(skill.read_bytes().replace(b"second step", b"second stop"))
    (edited,) = import_source(store, skill.parent)  # a path import, no --taint
    assert edited.provenance == "clean" and edited.status == "pending"
    assert "does not approve these bytes" in edited.reason
    assert [m.sha256 for m in match(store, "exported-card")] == [
        res.sha256
    ]  # the approved one stays
    assert verify_store(store).ok
    with Store(tmp_path / "fresh.db") as fresh:  # and in a store that trusts the reviewer
        add_trust(fresh, "alice", alice.public)
        (r,) = import_source(fresh, skill.parent)
        assert r.status == "pending" and names(fresh, "exported-card") == []
