"""The review CLI (keys, trust, review, approve, reject, retire, match) through click's CliRunner,
and the used-by story end to end: import by path and by URL, review, approve, match, tamper,
verify."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest
from click.testing import CliRunner
from conftest import card_text, make_card

from chimera_cards._cli.app import main


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "home"))
    return tmp_path


def run(*args, ok=True):
    r = CliRunner().invoke(main, [str(a) for a in args])
    if ok:
        assert r.exit_code == 0, (r.output, r.stderr)
    return r


def imported(r) -> dict:
    """The import result of a single-card import (``import --json`` gives one object)."""
    data = json.loads(r.stdout)
    return data[0] if isinstance(data, list) else data


def one_line_error(r, code=1):
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.output


def test_keys_generate_writes_0600_key_prints_pub_and_trusts_it(env):
    r = run("keys", "generate", "alice")
    keyfile = env / "home" / "keys" / "alice.key"
    assert stat.S_IMODE(os.stat(keyfile).st_mode) == 0o600
    pub = (env / "home" / "keys" / "alice.key.pub").read_text()
    assert r.stdout == pub and pub.startswith("ed25519 ")
    listed = json.loads(run("trust", "list", "--json").stdout)
    assert listed["threshold"] == 1 and [k["name"] for k in listed["keys"]] == ["alice"]


def test_keys_generate_with_output_and_passphrase_file(env):
    pw = env / "pw"
    pw.write_text("correct horse\n")
    r = run("keys", "generate", "bob", "-o", env / "b.key", "--passphrase-file", pw, "--json")
    info = json.loads(r.stdout)
    assert info["keyfile"] == str(env / "b.key") and len(info["keyid"]) == 16
    assert b"ENCRYPTED" in (env / "b.key").read_bytes()


def test_keys_generate_refuses_to_overwrite(env):
    run("keys", "generate", "alice")
    keys = env / "home" / "keys"
    before = {p.name: p.read_bytes() for p in keys.iterdir()}
    assert set(before) == {"alice.key", "alice.key.pub"}
    one_line_error(run("keys", "generate", "alice", ok=False))
    assert {p.name: p.read_bytes() for p in keys.iterdir()} == before


def test_trust_add_list_remove_and_threshold(env):
    run("keys", "generate", "alice", "-o", env / "a.key", "--store", env / "one.db")
    store = env / "two.db"
    r = run("trust", "add", "alice", env / "a.key.pub", "--store", store)
    assert r.stdout.startswith("trusted alice (")
    keytext = (env / "a.key.pub").read_text().split()
    one_line_error(run("trust", "add", "other", " ".join(keytext[:2]), "--store", store, ok=False))
    assert "alice" in run("trust", "list", "--store", store).stdout
    assert run("trust", "threshold", "2", "--store", store).stdout.startswith("threshold: 2")
    assert (
        json.loads(run("trust", "threshold", "--store", store, "--json").stdout)["threshold"] == 2
    )
    assert (
        run("trust", "threshold", "0", "--store", store, ok=False).exit_code == 2
    )  # click usage error
    run("trust", "remove", "alice", "--store", store)
    one_line_error(run("trust", "remove", "alice", "--store", store, ok=False))
    one_line_error(run("trust", "add", "x", "ed25519 bm90LWEta2V5", "--store", store, ok=False))


def test_approve_needs_the_key_and_hash_options(env):
    r = run("approve", "demo", ok=False)
    assert r.exit_code == 2


def test_approve_with_an_unreadable_key_is_one_line(env):
    run("keys", "generate", "alice")
    one_line_error(
        run("approve", "demo", "--key", env / "missing.key", "--digest", "0" * 64, ok=False), 2
    )


def test_review_approve_reject_retire_match_through_the_cli(env, card_server):
    run("keys", "generate", "alice")
    key = env / "home" / "keys" / "alice.key"
    url = card_server.serve(
        "/flaky/SKILL.md", card_text("flaky-tests", description="Tame flaky tests.")
    )
    sha = imported(run("import", url, "--json"))["digest"]
    queue = json.loads(run("review", "--json").stdout)
    assert [(q["name"], q["digest"]) for q in queue] == [("flaky-tests", sha)]
    screen = run("review", "flaky-tests").stdout
    assert (
        '<skill-card name="flaky-tests"' in screen and url in screen and f"--digest {sha}" in screen
    )
    pending = run("match", "flaky", ok=False)  # nothing approved matches: exit 1, like grep
    assert (pending.exit_code, pending.stdout) == (1, "")
    assert pending.stderr == "no approved card matches; pending review, not shown: flaky-tests\n"
    one_line_error(run("approve", "flaky-tests", "--key", key, "--digest", "1" * 64, ok=False))
    out = run("approve", "flaky-tests", "--key", key, "--digest", sha, "--note", "read it").stdout
    assert out.startswith(f"approved flaky-tests {sha[:12]} as alice (") and "status active" in out
    m = json.loads(run("match", "flaky", "--json").stdout)
    assert [x["name"] for x in m["matches"]] == ["flaky-tests"] and m["matches"][0][
        "approved_after_taint"
    ]
    assert m["prompt"].startswith('<skill-card name="flaky-tests"')
    assert run("match", "flaky", "--level", "1").stdout.count("## Do") == 0
    assert 'name="flaky-tests"' in run("match", "tame", "flaky", "-k", "1").stdout  # several words
    retired = json.loads(run("retire", "flaky-tests", "--reason", "not needed", "--json").stdout)
    assert (retired["from"], retired["to"]) == ("active", "retired")
    assert run("match", "flaky", ok=False).stdout == ""
    rejected = json.loads(
        run(
            "reject",
            "flaky-tests",
            "--key",
            key,
            "--digest",
            sha,
            "--reason",
            "on second thought",
            "--json",
        ).stdout
    )
    assert rejected["status"] == "rejected"
    one_line_error(run("retire", "flaky-tests", "--digest", sha, ok=False))


def test_the_used_by_story(env, card_server):
    """Import by path, import by URL (pending, invisible), review, approve, match; then edit one
    byte in the store: the card vanishes and verify fails."""
    local = make_card(env / "cards", "local-card", description="A card from my own disk.")
    run("import", local)
    assert "local-card" in run("match", "local-card").stdout
    url = card_server.serve(
        "/remote/SKILL.md", card_text("remote-card", description="A remote card.")
    )
    run("import", url)
    assert 'name="remote-card"' not in run("match", "remote-card", ok=False).stdout
    pub = run("keys", "generate", "me").stdout
    assert pub.startswith("ed25519 ")
    queue = run("review").stdout
    name, sha = queue.split("\t")[:2]
    assert name == "remote-card"
    run("review", "remote-card")
    run("approve", "remote-card", "--key", env / "home" / "keys" / "me.key", "--digest", sha)
    assert '<skill-card name="remote-card"' in run("match", "remote-card").stdout
    assert run("verify").exit_code == 0
    db = env / "home" / "cards.db"
    conn = sqlite3.connect(db)
    # The SKILL.md bytes (the version's sha is its bundle digest, the manifest's key).
    (skill,) = conn.execute("SELECT skill_sha256 FROM versions WHERE sha256 = ?", (sha,)).fetchone()
    data = conn.execute("SELECT data FROM blobs WHERE sha256 = ?", (skill,)).fetchone()[0]
    i = data.index(b"A remote card.")
    edited = data[:i] + b"a" + data[i + 1 :]
    conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (edited, skill))
    conn.commit()
    conn.close()
    assert 'name="remote-card"' not in run("match", "remote-card", ok=False).stdout
    r = run("verify", ok=False)
    assert r.exit_code == 1 and "signature" in r.output


def test_exported_approvals_make_the_card_active_in_a_teammates_store(env, card_server):
    mine, theirs = env / "mine.db", env / "theirs.db"
    run("keys", "generate", "alice", "-o", env / "alice.key", "--store", mine)
    url = card_server.serve("/c/SKILL.md", card_text("shared-card"))
    sha = imported(run("import", url, "--store", mine, "--json"))["digest"]
    run("approve", "shared-card", "--key", env / "alice.key", "--digest", sha, "--store", mine)
    run("export", "shared-card", "-o", env / "repo", "--store", mine)
    folder = env / "repo" / "shared-card"
    assert (folder / "approvals.jsonl").is_file()
    # Without alice in their trust list, the card is pending there, even from the same folder.
    r = imported(run("import", folder, "--taint", "--store", theirs, "--json"))
    assert r["status"] == "pending"
    # Trusting alice counts the statement that came with the card.
    out = run("trust", "add", "alice", env / "alice.key.pub", "--store", theirs).stdout
    assert "shared-card" in out and "-> active" in out
    assert 'name="shared-card"' in run("match", "shared-card", "--store", theirs).stdout
    # A third store that trusts alice from the start: a --taint import with her approval is active.
    third = env / "third.db"
    run("trust", "add", "alice", env / "alice.key.pub", "--store", third)
    r = imported(run("import", folder, "--taint", "--store", third, "--json"))
    assert (r["provenance"], r["status"]) == ("tainted", "active")
    assert run("verify", "--store", third).exit_code == 0
