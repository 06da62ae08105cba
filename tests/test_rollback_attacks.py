"""Attacks that move a team backwards: an old approved version replayed through every channel
(update, a plain import of an old export, approvals shipped in an archive, the approvals file
stripped), the origin going back to retired bytes, and the side doors (a key removed and
re-added, a threshold raised and lowered, a version retired). Each test asserts the refusal and
the state that matters: which version is active, what the agent folder holds, its index.

Everything is real: archives served by the HTTP server on 127.0.0.1, stores on disk, the CLI.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from conftest import dump_store, make_skill, run_cli, skill_archive

run = run_cli


def jrun(*args, ok=True):
    result = run(*args, "--json", ok=ok)
    return json.loads(result.stdout)


def versions(db) -> dict[str, str]:
    """sha256 -> status of every stored version."""
    return {v["digest"]: v["status"] for v in jrun("list", "--store", db)}


def active(db, name="demo") -> str | None:
    found = [v["digest"] for v in jrun("list", "--store", db) if v["status"] == "active"]
    return found[0] if found else None


def index(skills: Path) -> dict:
    return json.loads((skills / ".chimera-installed.json").read_text())["skills"]


class Team:
    """Reviewer alice's store A, where demo v1 then v2 were approved, and the exports of both
    (each with the approvals.jsonl that was valid for it)."""

    def __init__(self, tmp_path: Path, server) -> None:
        self.tmp, self.server = tmp_path, server
        self.a = tmp_path / "a.db"
        self.key = tmp_path / "alice.key"
        self.url = "/demo.skill"
        v1 = make_skill(tmp_path / "src1", "demo", {"notes.md": "one\n"})
        v2 = make_skill(tmp_path / "src2", "demo", {"notes.md": "two: the fix for the bug\n"})
        run("keys", "generate", "alice", "-o", self.key, "--store", self.a)
        self.sha1 = self.publish_and_approve(v1)
        self.exp1 = self.export("exp1")
        self.sha2 = self.publish_and_approve(v2, update=True)
        self.exp2 = self.export("exp2")
        assert versions(self.a) == {self.sha1: "retired", self.sha2: "active"}

    def serve(self, folder: Path, path: str | None = None) -> str:
        return self.server.serve(
            path or self.url, skill_archive(folder), content_type="application/zip"
        )

    def publish_and_approve(self, folder: Path, *, update: bool = False) -> str:
        url = self.serve(folder)
        if update:
            (done,) = jrun("update", "--store", self.a)
            sha = done["upstream"]
        else:
            res = jrun("import", url, "--store", self.a)
            sha = res["digest"]
        run("approve", "demo", "--key", self.key, "--digest", sha, "--store", self.a)
        return sha

    def export(self, dirname: str) -> Path:
        run("export", "demo", "-o", self.tmp / dirname, "--store", self.a)
        folder = self.tmp / dirname / "demo"
        assert (folder / "approvals.jsonl").is_file()
        return folder

    def store_trusting_alice(self, name: str) -> Path:
        db = self.tmp / f"{name}.db"
        run("trust", "add", "alice", f"{self.key}.pub", "--store", db)
        return db


@pytest.fixture
def team(tmp_path, card_server):
    return Team(tmp_path, card_server)


@pytest.mark.slow
def test_rollback_by_replay_through_update_is_held_as_a_downgrade(team, tmp_path):
    skills = tmp_path / "skills"
    run("sync", "--to", skills, "--store", team.a)
    assert index(skills)["demo"]["digest"] == team.sha2

    # The channel serves v1 again, inside an archive that carries v1's (valid) approvals.
    team.serve(team.exp1)
    result = run("update", "--store", team.a, "--json", ok=False)
    (done,) = json.loads(result.stdout)
    assert result.exit_code == 1 and done["state"] == "downgrade"
    assert active(team.a) == team.sha2
    assert run("outdated", "--store", team.a, ok=False).stdout.startswith("downgrade demo")

    # A second store that only ever saw v2 (from the same channel) is fed v1 as new bytes.
    b = team.store_trusting_alice("b")
    team.serve(team.exp2, "/b/demo.skill")
    res = jrun("import", team.server.url("/b/demo.skill"), "--store", b)
    assert (res["digest"], res["status"]) == (team.sha2, "active")
    b_skills = tmp_path / "b-skills"
    run("sync", "--to", b_skills, "--store", b)
    before = (b_skills / "demo" / "notes.md").read_bytes(), index(b_skills)

    team.serve(team.exp1, "/b/demo.skill")
    result = run("update", "--store", b, "--json", ok=False)
    (done,) = json.loads(result.stdout)
    assert result.exit_code == 1 and (done["state"], done["status"]) == ("downgrade", "pending")
    assert versions(b) == {team.sha2: "active", team.sha1: "pending"}
    run("sync", "--to", b_skills, "--store", b)
    assert (
        (b_skills / "demo" / "notes.md").read_bytes() == before[0] == b"two: the fix for the bug\n"
    )
    assert index(b_skills) == before[1]
    # The review queue and screen say what it is.
    queue = run("review", "--store", b).stdout
    assert "downgrade" in queue and team.sha1 in queue
    screen = run("review", "demo", "--store", b).stdout
    assert "downgrade" in screen and "--allow-downgrade" in screen


def test_rollback_by_a_plain_import_of_an_old_export_into_another_store(team):
    c = team.store_trusting_alice("c")
    res = jrun("import", team.exp2, "--store", c)
    assert res["status"] == "active"
    res = jrun("import", team.exp1, "--store", c)
    assert res["status"] == "pending" and "downgrade" in res["reason"]
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}
    # And again with --taint: the same answer, whatever the provenance.
    d = team.store_trusting_alice("d")
    run("import", team.exp2, "--taint", "--store", d)
    run("import", team.exp1, "--taint", "--store", d)
    assert versions(d) == {team.sha2: "active", team.sha1: "pending"}


def test_rollback_with_the_approvals_file_stripped_is_caught_by_the_signed_supersedes(team):
    """v1 without its approvals.jsonl is a clean local import with nothing signed: v2's
    approval names v1 as what it superseded, so v1 is known to be older."""
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--store", c)
    bare = team.tmp / "bare" / "demo"
    shutil.copytree(team.exp1, bare)
    (bare / "approvals.jsonl").unlink()
    res = jrun("import", bare, "--store", c)
    assert res["status"] == "pending" and "superseded" in res["reason"]
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}


def test_the_import_order_does_not_matter_newest_signed_wins(team):
    """Old bytes arriving first and new ones after: the new ones supersede as usual; new bytes
    arriving first and old after: the old ones are held. Same end state either way."""
    e = team.store_trusting_alice("e")
    run("import", team.exp1, "--store", e)
    run("import", team.exp2, "--store", e)
    assert versions(e) == {team.sha1: "retired", team.sha2: "active"}


def test_moving_back_takes_an_approval_that_says_so_and_then_forward_is_a_fresh_approval(team):
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--store", c)
    run("import", team.exp1, "--store", c)
    before = dump_store(c)
    refused = run(
        "approve", "demo", "--key", team.key, "--digest", team.sha1, "--store", c, ok=False
    )
    assert refused.exit_code == 1 and "--allow-downgrade" in refused.stderr
    assert dump_store(c) == before
    run(
        "approve",
        "demo",
        "--key",
        team.key,
        "--digest",
        team.sha1,
        "--allow-downgrade",
        "--store",
        c,
    )
    assert versions(c) == {team.sha2: "retired", team.sha1: "active"}
    # The downgrade is itself signed history: replaying v2's (older) approval does not undo it.
    f = team.store_trusting_alice("f")
    run("export", "demo", "-o", team.tmp / "exp3", "--store", c)
    run("import", team.tmp / "exp3" / "demo", "--store", f)
    run("import", team.exp2, "--store", f)
    assert versions(f) == {team.sha1: "active", team.sha2: "pending"}
    envelope = json.loads((team.tmp / "exp3" / "demo" / "approvals.jsonl").read_text())
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    assert predicate["downgrade"] is True and predicate["supersedes"] == team.sha2
    assert predicate["sequence"] == 3  # after v1's 1 and v2's 2


def test_a_key_removed_and_added_again_does_not_let_the_old_version_in(team):
    """Tainted imports (active only on alice's approvals): removing her key sends both back
    to pending; trusting it again must not let the older one win the race to active."""
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--taint", "--store", c)
    run("import", team.exp1, "--taint", "--store", c)
    run("trust", "remove", "alice", "--store", c)
    assert versions(c) == {team.sha2: "pending", team.sha1: "pending"}
    run("trust", "add", "alice", f"{team.key}.pub", "--store", c)
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}
    run("trust", "threshold", "2", "--store", c)
    run("trust", "threshold", "1", "--store", c)
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}


def test_retiring_the_newer_version_does_not_bring_back_the_older(team):
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--taint", "--store", c)
    run("import", team.exp1, "--taint", "--store", c)
    run("retire", "demo", "--store", c)
    run("trust", "threshold", "1", "--store", c)  # re-applies the policy to every version
    run("import", team.exp1, "--store", c)
    assert versions(c) == {team.sha2: "retired", team.sha1: "pending"}
    assert run("match", "demo", "--store", c, ok=False).stdout == ""


def test_an_old_lockfile_cannot_pin_the_team_back(team, tmp_path):
    """A lockfile from before v2 (an old commit of the team repo) names v1: sync refuses it with
    its true reason and leaves the folder on v2."""
    skills = tmp_path / "skills"
    run("sync", "--to", skills, "--store", team.a)
    lock = tmp_path / "old.lock"
    lock.write_text(f"demo digest:{team.sha1}\n")
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", team.a, ok=False)
    assert result.exit_code == 1 and "retired" in result.output
    assert index(skills)["demo"]["digest"] == team.sha2
    assert (skills / "demo" / "notes.md").read_text() == "two: the fix for the bug\n"


def test_statements_made_before_sequences_keep_verifying_and_order_by_signed_time(store, tmp_path):
    """Approvals written by an older release carry no sequence: they still approve, and two of
    them order by the time they signed, so an old one replayed after a newer one is held."""
    from chimera_cards._importer.pipeline import import_source
    from chimera_cards._review import decisions as review
    from chimera_cards._trust.keys import generate_key, load_private_key
    from chimera_cards._trust.policy import Statement, sign_statement

    gen = generate_key("alice", tmp_path / "k" / "alice.key")
    review.add_trust(store, "alice", gen.public)
    private = load_private_key(gen.keyfile)

    def legacy_export(dirname: str, note: str, when: str) -> tuple[Path, str]:
        folder = make_skill(tmp_path / dirname, "old-card", {"notes.md": note})
        from chimera_cards._bundles.bundle import read_bundle_dir

        sha = read_bundle_dir(folder).digest
        st = Statement("old-card", sha, "approve", gen.public.keyid, when, "")
        assert b"sequence" not in st.payload()  # exactly what an older release signed
        envelope = sign_statement(private, st)
        (folder / "approvals.jsonl").write_text(json.dumps(envelope) + "\n")
        return folder, sha

    old, _ = legacy_export("l1", "one\n", "2026-01-01T00:00:00Z")
    new, sha_new = legacy_export("l2", "two\n", "2026-02-01T00:00:00Z")
    (res,) = import_source(store, new, taint=True)
    assert res.status == "active"
    (res,) = import_source(store, old, taint=True)
    assert res.status == "pending"
    assert store.active("old-card").sha256 == sha_new


@pytest.mark.slow
def test_a_git_origin_reset_to_an_old_commit_is_a_downgrade(team, git_server):
    """The remote's branch is forced back to the commit holding v1 and its approvals: update
    says so, exit 1, and a store that only ever saw v2 from that remote stays on v2."""
    from conftest import git

    repo = git_server.root / "skills.git"
    shutil.copytree(team.exp1, repo / "demo")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "v1")
    old_commit = git(repo, "rev-parse", "HEAD").strip()
    shutil.rmtree(repo / "demo")
    shutil.copytree(team.exp2, repo / "demo")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "v2")
    g = team.store_trusting_alice("g")
    res = jrun("import", git_server.url("skills.git"), "--ref", "main", "--store", g)
    res = res[0] if isinstance(res, list) else res
    assert (res["digest"], res["status"]) == (team.sha2, "active")

    git(repo, "reset", "-q", "--hard", old_commit)
    result = run("update", "--store", g, "--json", ok=False)
    (done,) = json.loads(result.stdout)
    assert result.exit_code == 1 and done["state"] == "downgrade"
    assert versions(g) == {team.sha2: "active", team.sha1: "pending"}


def test_an_old_backup_of_the_store_restored_over_it_warns_and_fails_verify(team, tmp_path):
    """The quiet rollback: yesterday's copy of cards.db put back (by a sync tool, a restore).
    The head file beside it still names today's head."""
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--taint", "--store", c)
    backup = tmp_path / "backup.db"
    shutil.copyfile(c, backup)
    run("trust", "remove", "alice", "--store", c)  # today: alice's approvals withdrawn
    assert versions(c) == {team.sha2: "pending"}
    shutil.copyfile(backup, c)
    assert versions(c) == {team.sha2: "active"}  # the old copy says otherwise ...
    listed = run("list", "--store", c)
    assert "warning:" in listed.stderr  # ... and every command says it went back
    result = run("verify", "--store", c, "--json", ok=False)
    kinds = {p["kind"] for p in json.loads(result.stdout)["problems"]}
    assert result.exit_code == 1 and "audit-truncated" in kinds


def test_with_threshold_two_one_reviewer_alone_cannot_move_the_name_back(team, tmp_path):
    """k-of-n holds for going back as for going forward: one downgrade approval is not enough."""
    bob_key = tmp_path / "bob.key"
    h = tmp_path / "h.db"
    run("keys", "generate", "bob", "-o", bob_key, "--store", h)
    run("trust", "add", "alice", f"{team.key}.pub", "--store", h)
    run("trust", "threshold", "2", "--store", h)
    for folder in (team.exp1, team.exp2):
        res = jrun("import", folder, "--taint", "--store", h)
        res = res[0] if isinstance(res, list) else res
        for key in (team.key, bob_key):
            approval = ["approve", "demo", "--key", key, "--digest", res["digest"]]
            run(*approval, "--allow-downgrade", "--store", h)
    assert versions(h) == {team.sha1: "retired", team.sha2: "active"}
    run(
        "approve",
        "demo",
        "--key",
        team.key,
        "--digest",
        team.sha1,
        "--allow-downgrade",
        "--store",
        h,
    )
    assert versions(h) == {team.sha1: "pending", team.sha2: "active"}
    run(
        "approve",
        "demo",
        "--key",
        bob_key,
        "--digest",
        team.sha1,
        "--allow-downgrade",
        "--store",
        h,
    )
    assert versions(h) == {team.sha1: "active", team.sha2: "retired"}


def test_an_untrusted_key_claiming_a_huge_sequence_changes_nothing(team, tmp_path):
    """Mallory (not trusted here) ships v1 with an approval claiming sequence 10**15: it is kept
    for later but counts for nothing, v1 stays held, and the next real sequence is still 3."""
    from chimera_cards._bundles.bundle import read_bundle_dir
    from chimera_cards._store.facade import Store
    from chimera_cards._trust.keys import generate_key, load_private_key
    from chimera_cards._trust.policy import Statement, peek_statement, sign_statement

    mallory = generate_key("mallory", tmp_path / "m" / "mallory.key")
    forged = tmp_path / "forged" / "demo"
    shutil.copytree(team.exp1, forged)
    sha = read_bundle_dir(forged).digest
    st = Statement(
        "demo", sha, "approve", mallory.public.keyid, "2030-01-01T00:00:00Z", "", sequence=10**15
    )
    envelope = sign_statement(load_private_key(mallory.keyfile), st)
    with (forged / "approvals.jsonl").open("a") as out:
        out.write(json.dumps(envelope) + "\n")
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--store", c)
    run("import", forged, "--store", c)
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}
    run(
        "approve",
        "demo",
        "--key",
        team.key,
        "--digest",
        team.sha2,
        "--expires",
        "30d",
        "--store",
        c,
    )
    with Store(c) as store:
        sequences = [peek_statement(e).sequence for e in store.envelopes(team.sha2)]
    assert sequences == [3]


def test_an_import_pinned_by_an_old_lockfile_is_still_held(team, tmp_path):
    """`import --lockfile` with a lockfile from before v2 admits v1's bytes, never its place."""
    c = team.store_trusting_alice("c")
    run("import", team.exp2, "--store", c)
    lock = tmp_path / "old.lock"
    lock.write_text(f"demo digest:{team.sha1}\n")
    res = jrun("import", team.exp1, "--lockfile", lock, "--store", c)
    res = res[0] if isinstance(res, list) else res
    assert res["status"] == "pending"
    assert versions(c) == {team.sha2: "active", team.sha1: "pending"}
