"""One hash story: the number a reviewer types names one version, or is refused saying why.

approve/reject take ``--digest`` (``--sha256`` fails naming it): the bundle digest, whole or a
unique prefix of at least 12 hex digits; a one-file bundle also answers to its SKILL.md's SHA-256
(the number a card page publishes) while the signed statement binds the bundle digest; a larger
bundle's SKILL.md hash is refused naming the digest to pass; ``--key NAME`` finds the store's key.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import card_text, make_card, make_skill

from chimera_cards._cli.app import main
from chimera_cards._review.refs import (
    AmbiguousDigestError,
    FileHashNotBundleError,
    resolve_version,
)
from chimera_cards._store.facade import Store
from chimera_cards.errors import UnknownVersionError, UsageError


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "home"))
    return tmp_path


def run(*args, code=0):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == code, (r.stdout, r.stderr)
    return r


def _tainted_import(env, folder) -> dict:
    """Import a folder as tainted (pending), as a URL import would leave it."""
    data = json.loads(run("import", folder, "--taint", "--json").stdout)
    return data[0] if isinstance(data, list) else data


def _statements(env) -> list[dict]:
    db = env / "home" / "cards.db"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name, sha256 FROM statements").fetchall()
    return [{"name": n, "sha256": s} for n, s in rows]


def test_the_published_skill_md_sha256_approves_a_one_file_card(env):
    folder = make_card(env / "src", "flaky-tests")
    skill_sha = hashlib.sha256((folder / "SKILL.md").read_bytes()).hexdigest()
    version = _tainted_import(env, folder)
    digest = version["digest"]
    assert digest != skill_sha  # the bundle digest is not the file's hash
    run("keys", "generate", "alice")
    r = run("approve", "flaky-tests", "--key", "alice", "--digest", skill_sha)
    assert r.stdout.startswith(f"approved flaky-tests {digest[:12]} as alice")
    # The statement binds the bundle digest, not the number typed.
    assert _statements(env) == [{"name": "flaky-tests", "sha256": digest}]
    assert "status active" in r.stdout


def test_a_larger_bundles_skill_md_hash_is_refused_saying_what_to_pass(env):
    folder = make_skill(
        env / "src",
        "pdf-tools",
        {"SKILL.md": card_text("pdf-tools"), "scripts/run.py": "print(1)\n", "notes.txt": "n\n"},
    )
    skill_sha = hashlib.sha256((folder / "SKILL.md").read_bytes()).hexdigest()
    digest = _tainted_import(env, folder)["digest"]
    run("keys", "generate", "alice")
    r = run("approve", "pdf-tools", "--key", "alice", "--digest", skill_sha, code=1)
    assert r.stderr == (
        f"error: {skill_sha[:8]}… is the SHA-256 of SKILL.md in version {digest[:8]}… "
        f"(3 files); approve the bundle with --digest {digest}\n"
    )
    assert _statements(env) == []
    r = run("reject", "pdf-tools", "--key", "alice", "--digest", skill_sha, "--reason", "x", code=1)
    assert f"reject the bundle with --digest {digest}" in r.stderr
    run("approve", "pdf-tools", "--key", "alice", "--digest", digest)
    assert _statements(env) == [{"name": "pdf-tools", "sha256": digest}]


def test_the_twelve_digits_list_prints_approve_and_fewer_are_refused(env):
    digest = _tainted_import(env, make_card(env / "src", "flaky-tests"))["digest"]
    listed = run("list").stdout
    assert digest[:12] in listed and digest not in listed
    run("keys", "generate", "alice")
    short = run("approve", "flaky-tests", "--key", "alice", "--digest", digest[:11], code=2)
    assert short.stderr.startswith("error: --digest ") and "at least 12 hex digits" in short.stderr
    assert _statements(env) == []
    r = run("approve", "flaky-tests", "--key", "alice", "--digest", digest[:12])
    assert _statements(env) == [{"name": "flaky-tests", "sha256": digest}]
    assert r.stdout.startswith(f"approved flaky-tests {digest[:12]}")


def test_review_and_reject_take_a_prefix_too(env):
    digest = _tainted_import(env, make_card(env / "src", "flaky-tests"))["digest"]
    screen = run("review", "flaky-tests", "--digest", digest[:14]).stdout
    assert f"digest:     {digest}" in screen
    run("keys", "generate", "alice")
    run("reject", "flaky-tests", "--key", "alice", "--digest", digest[:12], "--reason", "no")
    with Store(env / "home" / "cards.db") as store:
        assert [v.status for v in store.versions(name="flaky-tests")] == ["rejected"]


def _plant(db, name, sha, skill_sha):
    """Two versions sharing a prefix, as a store edited by hand (or a true collision) has."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT * FROM versions LIMIT 1").fetchone()
        columns = [c[1] for c in conn.execute("PRAGMA table_info(versions)")]
        values = dict(zip(columns, row, strict=True))
        values.update(id=None, name=name, sha256=sha, digest=sha, skill_sha256=skill_sha)
        marks = ", ".join("?" for _ in columns)
        conn.execute(
            f"INSERT INTO versions ({', '.join(columns)}) VALUES ({marks})", list(values.values())
        )


def test_an_ambiguous_prefix_is_refused_listing_every_candidate(env):
    run("import", make_card(env / "src", "flaky-tests"), "--taint")
    db = env / "home" / "cards.db"
    a, b = "abcdef012345" + "1" * 52, "abcdef012345" + "2" * 52
    _plant(db, "flaky-tests", a, "3" * 64)
    _plant(db, "flaky-tests", b, "4" * 64)
    with Store(db) as store:
        with pytest.raises(AmbiguousDigestError) as caught:
            resolve_version(store, "flaky-tests", "abcdef012345")
        assert a[:16] in str(caught.value) and b[:16] in str(caught.value)
        assert resolve_version(store, "flaky-tests", a[:13]).sha256 == a
        assert resolve_version(store, "flaky-tests", "sha256:" + b).sha256 == b
        with pytest.raises(UsageError):
            resolve_version(store, "flaky-tests", "abcdef01234")
        with pytest.raises(UsageError):
            resolve_version(store, "flaky-tests", "not-hex-at-all-here")
        with pytest.raises(UnknownVersionError) as missing:
            resolve_version(store, "flaky-tests", "f" * 64)
        assert not isinstance(missing.value, FileHashNotBundleError)
    r = run("approve", "flaky-tests", "--key", env / "nokey", "--digest", "abcdef012345", code=2)
    assert "cannot read key" in r.stderr or "no key" in r.stderr


def test_key_name_finds_the_stores_own_key_and_a_missing_one_says_where_it_looked(env):
    digest = _tainted_import(env, make_card(env / "src", "flaky-tests"))["digest"]
    run("keys", "generate", "alice")
    r = run("approve", "flaky-tests", "--key", "bob", "--digest", digest, code=2)
    assert r.stderr.startswith("error: ") and "bob" in r.stderr and "keys" in r.stderr
    assert r.stderr.count("\n") == 1
    run("approve", "flaky-tests", "--key", "alice", "--digest", digest)
    assert _statements(env) == [{"name": "flaky-tests", "sha256": digest}]
