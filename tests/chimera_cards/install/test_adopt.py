"""``adopt``: a project as npx left it becomes versions with their recorded source, a remote one
held for review, and what cannot be taken (a link out of the project, a lock entry with no
folder) is reported with exit 1; nothing outside the store is written."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from conftest import make_skill

from chimera_cards._cli.app import main
from chimera_cards._store.facade import Store


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    canonical = root / ".agents" / "skills"
    make_skill(canonical, "remote-one", {"run.sh": ("echo hi\n", True)})
    make_skill(canonical, "local-one", {})
    claude = root / ".claude" / "skills"
    claude.mkdir(parents=True)
    os.symlink("../../.agents/skills/remote-one", claude / "remote-one")
    lock = {
        "version": 1,
        "skills": {
            "remote-one": {
                "source": "octo/skills",
                "sourceType": "github",
                "ref": "main",
                "skillPath": "skills/remote-one/SKILL.md",
                "computedHash": "0" * 64,
            },
            "local-one": {"source": "../src", "sourceType": "local"},
        },
    }
    (root / "skills-lock.json").write_text(json.dumps(lock))
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "cc"))
    return root


def _run(*args):
    return CliRunner().invoke(main, list(args))


def _files(root):
    return sorted(
        (p.relative_to(root).as_posix(), p.is_symlink())
        for p in root.rglob("*")
        if p.is_file() or p.is_symlink()
    )


def test_adopt_imports_each_folder_once_with_its_source_and_holds_a_remote_one(project, tmp_path):
    before = _files(project)
    result = _run("adopt", str(project), "--json")
    report = json.loads(result.output)
    assert _files(project) == before  # nothing in the project was written
    by_name = {s["name"]: s for s in report["skills"]}
    assert set(by_name) == {"remote-one", "local-one"}  # the link and its target: one version
    remote = by_name["remote-one"]
    assert remote["status"] == "pending" and remote["needs_review"]
    assert remote["source"]["source"] == "octo/skills"
    assert remote["linked_from"] == [str(project / ".claude" / "skills" / "remote-one")]
    assert remote["npx_hash_matches"] is False  # the lock's hash is not these files'
    assert "differ from what npx recorded" in remote["reason"]
    assert by_name["local-one"]["status"] == "active"
    assert result.exit_code == 1  # files npx did not record: exit 1, as docs/install.md says
    with Store(tmp_path / "cc" / "cards.db") as store:
        (version,) = store.versions(name="remote-one")
        assert version.provenance == "tainted"
        assert version.source["recorded"]["lock"]["sourceType"] == "github"


def test_adopt_prints_what_a_reviewer_must_approve(project):
    result = _run("adopt", str(project))
    assert "1 to review and approve" in result.output
    assert "chimera-cards approve remote-one --digest " in result.output


def test_a_link_out_of_the_project_and_a_lock_entry_without_a_folder_are_reported(
    project, tmp_path
):
    outside = make_skill(tmp_path / "elsewhere", "stray", {})
    os.symlink(outside, project / ".claude" / "skills" / "stray")
    lock = json.loads((project / "skills-lock.json").read_text())
    lock["skills"]["gone"] = {"source": "octo/skills", "sourceType": "github"}
    (project / "skills-lock.json").write_text(json.dumps(lock))
    result = _run("adopt", str(project), "--json")
    assert result.exit_code == 1
    outcomes = {s["name"]: s["outcome"] for s in json.loads(result.output)["skills"]}
    assert outcomes["stray"] == "outside" and outcomes["gone"] == "missing"
    with Store(tmp_path / "cc" / "cards.db") as store:
        assert "stray" not in {v.name for v in store.versions()}


def test_a_lock_file_that_is_not_npx_s_is_a_usage_error(project):
    (project / "skills-lock.json").write_text('{"version": 7, "skills": {}}')
    result = _run("adopt", str(project))
    assert result.exit_code == 2 and "version 7" in result.output


def test_a_project_without_skills_is_an_error_and_makes_no_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "cc"))
    (tmp_path / "empty").mkdir()
    result = _run("adopt", str(tmp_path / "empty"))
    assert result.exit_code == 1 and "no skill in any agent folder" in result.output
    assert not (tmp_path / "cc").exists()
