"""Freeze: a channel that keeps serving old bytes, with the approval that was valid for them,
keeps a team on them forever unless approvals expire. An approval may carry a signed expiry
(``approve --expires``, or the trust file's store-wide default); once past it the version stops
``match``, ``check`` and the gate exactly as a pending one does, and ``review`` lists what is
about to expire.
"""

from __future__ import annotations

import base64
import json
import time

import pytest
from conftest import card_text, make_card, run_cli

from chimera_cards._importer.pipeline import import_source
from chimera_cards._retrieve.gate import gate_version
from chimera_cards._retrieve.matching import match
from chimera_cards._review import decisions as review
from chimera_cards._store.facade import Store
from chimera_cards._trust.freshness import expiry_after, parse_duration
from chimera_cards._trust.keys import generate_key, load_private_key
from chimera_cards._trust.policy import Statement, sign_statement

run = run_cli


def predicate(db, sha) -> dict:
    """The predicate of the one approval stored for these bytes."""
    with Store(db) as store:
        (envelope,) = store.envelopes(sha)
    return json.loads(base64.b64decode(json.loads(envelope)["payload"]))["predicate"]


def served(db, server, name) -> str:
    url = server.serve(f"/{name}/SKILL.md", card_text(name))
    res = json.loads(run("import", url, "--json", "--store", db).stdout)
    return res["digest"]


@pytest.mark.slow
def test_a_frozen_channel_stops_at_the_approvals_expiry(tmp_path, card_server):
    db = tmp_path / "cards.db"
    key = tmp_path / "alice.key"
    run("keys", "generate", "alice", "-o", key, "--store", db)
    sha = served(db, card_server, "frozen")
    run("approve", "frozen", "--key", key, "--digest", sha, "--expires", "2s", "--store", db)
    skills = tmp_path / "skills"
    run("install", "frozen", "--to", skills, "--store", db)
    assert "frozen" in run("match", "frozen", "--store", db).stdout
    assert run("check", skills, "--store", db).exit_code == 0  # also remembers the verdict
    soon = run("review", "--store", db).stdout
    assert "expires" in soon and "frozen" in soon

    time.sleep(2.2)
    assert run("match", "frozen", "--store", db, ok=False).stdout == ""
    checked = run("check", skills, "--store", db, ok=False)
    assert checked.exit_code == 1 and "expired" in checked.stdout
    with Store(db) as store:
        decision = gate_version(store, store.version("frozen", sha))
    assert not decision.ok and "expired" in decision.reason
    assert "expired" in run("review", "--store", db).stdout
    refused = run("install", "frozen", "--to", tmp_path / "other", "--store", db, ok=False)
    assert refused.exit_code == 1 and "expired" in refused.stderr
    # The origin still serves exactly these bytes: outdated says the channel is frozen.
    frozen = run("outdated", "--store", db, ok=False)
    assert frozen.exit_code == 1 and frozen.stdout.startswith("expired  frozen")
    # A fresh approval (no expiry this time) brings it back.
    run("approve", "frozen", "--key", key, "--digest", sha, "--expires", "never", "--store", db)
    assert "frozen" in run("match", "frozen", "--store", db).stdout
    assert "expires" not in predicate(db, sha)


def test_the_trust_files_default_expiry_goes_into_each_new_approval(tmp_path, card_server):
    db = tmp_path / "cards.db"
    key = tmp_path / "alice.key"
    run("keys", "generate", "alice", "-o", key, "--store", db)
    trust_file = tmp_path / "team.trust"
    run("trust", "export", trust_file, "--store", db)
    trust_file.write_text(trust_file.read_text() + "expires 90d\n")
    run("trust", "sync", trust_file, "--store", db)
    sha = served(db, card_server, "defaulted")
    run("approve", "defaulted", "--key", key, "--digest", sha, "--store", db)
    expires = predicate(db, sha)["expires"]
    assert expires[:10] == expiry_after(parse_duration("90d"))[:10]
    assert "defaulted" not in run("review", "--store", db).stdout  # 90 days away: not soon
    assert "defaulted" in run("review", "--expiring", "100d", "--store", db).stdout
    run("trust", "export", tmp_path / "again.trust", "--store", db)
    assert "expires 90d" in (tmp_path / "again.trust").read_text()
    assert run("verify", "--store", db).exit_code == 0  # the setting was recorded in the log


def test_an_expired_approval_shipped_beside_a_card_does_not_count(store, tmp_path):
    gen = generate_key("alice", tmp_path / "k" / "alice.key")
    review.add_trust(store, "alice", gen.public)
    private = load_private_key(gen.keyfile)
    folder = make_card(tmp_path / "cards", "stale")
    from chimera_cards._bundles.bundle import read_bundle_dir

    sha = read_bundle_dir(folder).digest
    st = Statement(
        "stale",
        sha,
        "approve",
        gen.public.keyid,
        "2026-01-01T00:00:00Z",
        "",
        sequence=1,
        expires="2026-02-01T00:00:00Z",
    )
    (folder / "approvals.jsonl").write_text(json.dumps(sign_statement(private, st)) + "\n")
    (res,) = import_source(store, folder, taint=True)
    assert res.status == "pending"
    assert match(store, "stale") == []


def test_an_expiry_that_is_not_a_time_makes_the_approval_count_for_nothing(store, tmp_path):
    gen = generate_key("alice", tmp_path / "k" / "alice.key")
    review.add_trust(store, "alice", gen.public)
    private = load_private_key(gen.keyfile)
    folder = make_card(tmp_path / "cards", "odd")
    from chimera_cards._bundles.bundle import read_bundle_dir

    sha = read_bundle_dir(folder).digest
    for bad in ("soon", "2026-13-01T00:00:00Z", "9999-01-01T00:00:00+01:00"):
        st = Statement(
            "odd",
            sha,
            "approve",
            gen.public.keyid,
            "2026-01-01T00:00:00Z",
            "",
            sequence=1,
            expires=bad,
        )
        (folder / "approvals.jsonl").write_text(json.dumps(sign_statement(private, st)) + "\n")
        (res,) = import_source(store, folder, taint=True)
        assert res.status == "pending", bad


def test_a_bad_duration_is_a_usage_error(tmp_path, card_server):
    db = tmp_path / "cards.db"
    key = tmp_path / "alice.key"
    run("keys", "generate", "alice", "-o", key, "--store", db)
    sha = served(db, card_server, "dur")
    for bad in ("90", "-1d", "0d", "1y"):
        result = run(
            "approve",
            "dur",
            "--key",
            key,
            "--digest",
            sha,
            "--expires",
            bad,
            "--store",
            db,
            ok=False,
        )
        assert result.exit_code == 2 and result.stderr.startswith("error:"), bad


@pytest.mark.slow
def test_an_expired_approval_stops_the_run_time_gate_too(tmp_path):
    """`prompt` (what an agent's system prompt is built from) and `check` use the same gate: an
    installed skill whose approval expired is no longer offered, and `check` says why."""
    from conftest import SkillWorld

    world = SkillWorld(tmp_path)
    digest = world.add("lapsing", {"notes.md": "n\n"}, approve=False)
    world.cli("approve", "lapsing", "--key", world.key, "--digest", digest, "--expires", "2s")
    skills = world.install("lapsing")
    assert "<name>\nlapsing\n</name>" in world.cli("prompt", skills).stdout
    time.sleep(2.2)
    offered = world.cli("prompt", skills, ok=False)
    assert "lapsing" not in offered.stdout
    assert "lapsing" in offered.stderr  # left out, and named
    checked = world.cli("check", skills, "--json", ok=False)
    (state,) = json.loads(checked.stdout)["skills"]
    assert state["state"] == "revoked" and "expired" in state["detail"]
