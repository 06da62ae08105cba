"""A skill folder that is a link is read at its target only inside its boundary (the project, or
the user's home); anything else is reported, never followed."""

from __future__ import annotations

import os
from pathlib import Path

from chimera_cards._bundles.links import boundary_for, link_text, resolve_entry


def _npx_layout(project):
    canonical = project / ".agents" / "skills" / "pdf"
    canonical.mkdir(parents=True)
    (canonical / "SKILL.md").write_text("x")
    claude = project / ".claude" / "skills"
    claude.mkdir(parents=True)
    os.symlink("../../.agents/skills/pdf", claude / "pdf")
    return canonical, claude / "pdf"


def test_a_link_inside_the_project_is_read_at_its_target(tmp_path):
    canonical, link = _npx_layout(tmp_path)
    info = resolve_entry(link, tmp_path)
    assert info.target == canonical.resolve()
    assert info.inside and not info.dangling
    assert info.shown == ".agents/skills/pdf"
    assert info.describe() == ""


def test_a_link_leaving_the_project_is_reported_and_has_no_target(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    (outside / "pdf").mkdir(parents=True)
    skills = project / ".claude" / "skills"
    skills.mkdir(parents=True)
    os.symlink(outside / "pdf", skills / "pdf")
    info = resolve_entry(skills / "pdf", project)
    assert info.target is None and not info.inside
    assert "outside the project" in info.describe()
    assert str((outside / "pdf").resolve()) in info.describe()


def test_a_link_through_a_link_that_leaves_is_judged_by_where_it_ends(tmp_path):
    project = tmp_path / "project"
    (tmp_path / "etc").mkdir()
    _npx_layout(project)
    inner = project / ".agents" / "skills" / "hop"
    os.symlink(tmp_path / "etc", inner)
    os.symlink("../../.agents/skills/hop", project / ".claude" / "skills" / "hop")
    info = resolve_entry(project / ".claude" / "skills" / "hop", project)
    assert info.target is None and not info.inside


def test_a_dangling_link_or_a_link_to_a_file_is_reported(tmp_path):
    skills = tmp_path / ".claude" / "skills"
    skills.mkdir(parents=True)
    os.symlink("nothing-here", skills / "gone")
    (tmp_path / "file.md").write_text("x")
    os.symlink("../../file.md", skills / "file")
    for name in ("gone", "file"):
        info = resolve_entry(skills / name, tmp_path)
        assert info.target is None and info.dangling, name
        assert "link to nothing" in info.describe()


def test_a_folder_that_is_no_link_is_itself(tmp_path):
    (tmp_path / "pdf").mkdir()
    info = resolve_entry(tmp_path / "pdf", tmp_path)
    assert info.target == tmp_path / "pdf" and info.link is None


def test_the_boundary_is_the_project_holding_the_skills_folder(tmp_path, monkeypatch):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    project = tmp_path / "project"
    assert boundary_for(project / ".claude" / "skills", {"HOME": str(tmp_path / "h")}) == project
    monkeypatch.chdir(project.parent)
    assert boundary_for(project / ".claude" / "skills", {}) == project.parent


def test_a_user_folder_may_link_into_the_users_home(tmp_path, monkeypatch):
    monkeypatch.chdir("/")
    home = tmp_path / "home"
    assert boundary_for(home / ".claude" / "skills", {"HOME": str(home)}) == home


def test_link_text_is_relative_as_npx_writes_it(tmp_path):
    target = tmp_path / ".agents" / "skills" / "pdf"
    assert link_text(target, tmp_path / ".claude" / "skills") == "../../.agents/skills/pdf"


def test_a_link_to_a_folder_holding_the_skills_folder_is_not_followed(tmp_path):
    skills = tmp_path / ".claude" / "skills"
    skills.mkdir(parents=True)
    os.symlink("../..", skills / "project")
    info = resolve_entry(skills / "project", tmp_path)
    assert info.target is None and not info.inside


def test_nothing_is_inside_a_boundary_at_the_file_system_root(tmp_path):
    (tmp_path / "pdf").mkdir()
    skills = tmp_path / "skills"
    skills.mkdir()
    os.symlink(tmp_path / "pdf", skills / "pdf")
    assert resolve_entry(skills / "pdf", "/").target is None
    assert str(boundary_for(Path("/proc/self"), {})) != "/"
