"""Nothing in an agent's folder goes unreported: files under names every bundle leaves out make
an installed skill ``modified``, a dot-folder or lone ``skill.md`` folder is listed, ``check``
without a store reports every folder ``unknown``; links are removed as links, never through them;
``--agent`` may be repeated and ``'*'`` is every detected agent."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from conftest import make_skill

from chimera_cards._cli.app import main
from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.disk import remove_skill, write_link, write_skill
from chimera_cards._install.policy import load_bundle, stored_skills
from chimera_cards._install.receipt import NotInstalledError
from chimera_cards._install.verify import check


@pytest.fixture
def installed(store, tmp_path):
    src = tmp_path / "src"
    make_skill(src, "pdf-tools", {"run.sh": ("echo hi\n", True)})
    assert all(r.ok for r in import_source(store, str(src)))
    (skill,) = stored_skills(store)
    skills = tmp_path / "project" / ".claude" / "skills"
    write_skill(skills, load_bundle(store, skill), name="pdf-tools", store="s")
    return skills


@pytest.mark.parametrize(
    "planted", [".DS_Store", "__MACOSX/._run.sh", ".git/hooks/post-checkout", "sub/Thumbs.db"]
)
def test_a_file_under_an_ignored_name_makes_the_skill_modified(store, installed, planted):
    assert [s.state for s in check(store, [installed]).states] == ["ok"]
    path = installed / "pdf-tools" / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"planted")
    (state,) = check(store, [installed]).states
    assert state.state == "modified"
    assert "not part of the reviewed bundle" in state.detail
    assert planted.split("/")[0] in state.detail


def test_a_dot_folder_or_a_lone_skill_md_folder_holding_a_skill_is_listed(store, installed):
    hidden = installed / ".hidden"
    hidden.mkdir()
    (hidden / "SKILL.md").write_text("---\nname: hidden\ndescription: x\n---\nrun me\n")
    lower = installed / "lower"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower\ndescription: x\n---\nrun me\n")
    (installed / ".empty-temp").mkdir()  # holds no skill: not listed
    states = {s.name: s.state for s in check(store, [installed]).states}
    assert states == {"pdf-tools": "ok", ".hidden": "unknown", "lower": "unknown"}


def test_check_without_a_store_reports_every_folder_unknown(installed, tmp_path):
    missing = tmp_path / "no-store" / "cards.db"
    result = CliRunner().invoke(main, ["check", str(installed), "--store", str(missing)])
    assert result.exit_code == 1
    assert result.output.startswith("unknown  pdf-tools  no store yet")
    assert not missing.exists()


def test_uninstall_removes_our_link_but_not_npx_s_without_force_and_never_the_target(
    store, installed, tmp_path
):
    canonical = installed / "pdf-tools"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_link(ours, "pdf-tools", canonical, digest="0" * 64)
    theirs.mkdir()
    os.symlink(canonical, theirs / "pdf-tools")
    remove_skill(ours, "pdf-tools")
    assert not (ours / "pdf-tools").is_symlink()
    with pytest.raises(NotInstalledError, match="--force"):
        remove_skill(theirs, "pdf-tools")
    remove_skill(theirs, "pdf-tools", force=True)
    assert not (theirs / "pdf-tools").is_symlink()
    assert (canonical / "SKILL.md").is_file()  # what the links led to is untouched


def test_agent_star_is_every_detected_agent_and_a_repeat_is_written_once(
    store, tmp_path, monkeypatch
):
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    (home / ".cursor").mkdir()
    project.mkdir()
    monkeypatch.chdir(project)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": "", "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    make_skill(tmp_path / "src", "pdf-tools", {})
    db = tmp_path / "store" / "cards.db"
    run = CliRunner().invoke
    assert run(main, ["import", str(tmp_path / "src"), "--store", str(db)], env=env).exit_code == 0
    star = run(main, ["install", "pdf-tools", "--agent", "*", "--store", str(db)], env=env)
    assert star.exit_code == 0, star.output
    assert sorted(p.parent.parent.name for p in project.glob("*/skills/pdf-tools")) == [
        ".agents",
        ".claude",
    ]
    twice = run(
        main,
        ["install", "pdf-tools", "--agent", "claude", "--agent", "claude-code", "--store", str(db)],
        env=env,
    )
    assert twice.exit_code == 0 and len(twice.output.splitlines()) == 1
