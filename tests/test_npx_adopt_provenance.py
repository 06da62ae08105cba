"""Adopted skills keep npx's source, driven by the real ``npx skills`` 1.7.4: ``update`` and
``outdated`` fetch from the source npx recorded (a local folder, a ``file://`` git repository, the
user-wide lock's entry), never from the installed copy, so a local edit of an installed folder is
drift for ``check`` and can reach the store by no route (update, outdated, adopt again, import of
the installed copy); npx's own quirks are named, not alarmed (it drops ``metadata.json`` from the
copy it installs, vercel-labs/skills#806; it rewrites SKILL.md for Eve); a real mismatch exits 1;
and a folder whose bytes are an approved bundle is ours for ``install`` and ``sync``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from chimera_cards._cli.app import main
from chimera_cards._store.facade import Store

pytestmark = pytest.mark.slow

LONG = (
    "Alpha does alpha things for the user when asked to, with a description long enough "
    "that a YAML writer folds it onto several lines when it writes it back out."
)


def _skill(root: Path, name: str, extra: dict[str, str] | None = None, front: str = "") -> Path:
    folder = root / "skills" / name
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {LONG}\n{front}---\n# {name}\n\nRun scripts/run.sh.\n"
    )
    run = folder / "scripts" / "run.sh"
    run.write_text(f"echo {name}\n")
    run.chmod(0o755)
    for rel, text in (extra or {}).items():
        (folder / rel).write_text(text)
    return folder


@pytest.fixture
def world(tmp_path, monkeypatch):
    home, project, src = tmp_path / "home", tmp_path / "project", tmp_path / "src"
    for folder in (home, project, src):
        folder.mkdir()
    monkeypatch.chdir(project)
    for key, value in {
        "HOME": str(home),
        "CHIMERA_CARDS_HOME": str(tmp_path / "cc"),
        "XDG_CONFIG_HOME": "",
        "XDG_STATE_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
        "CODEX_HOME": "",
    }.items():
        monkeypatch.setenv(key, value)
    return tmp_path, home, project, src


def cc(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _versions(tmp: Path, name: str) -> list[tuple[str, str]]:
    with Store(tmp / "cc" / "cards.db") as store:
        return [(v.digest, v.status) for v in store.versions(name=name)]


def _files(store_path: Path, name: str, digest: str) -> dict[str, bytes]:
    with Store(store_path) as store:
        (version,) = [v for v in store.versions(name=name) if v.digest == digest]
        bundle = store.get_bundle(version)
        return {f.path: bundle.contents[f.path] for f in bundle.files}


def _add(skills_cli, args: list[str], project: Path, home: Path) -> None:
    done = skills_cli.run(["add", *args, "-y"], project, home)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_local_edit_of_an_adopted_copy_is_drift_by_every_route_and_updates_come_from_npx_source(
    skills_cli, world
):
    tmp, home, project, src = world
    _skill(src, "alpha")
    _add(skills_cli, [str(src), "--skill", "alpha", "-a", "claude-code"], project, home)
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    (line,) = json.loads(adopted.output)["skills"]
    assert line["upstream"]["sourceType"] == "local"
    assert Path(line["upstream"]["source"]).resolve() == src.resolve()
    [(approved, status)] = _versions(tmp, "alpha")
    assert status == "active"

    installed = project / ".claude" / "skills" / "alpha" / "scripts" / "run.sh"
    installed.write_text("echo edited by hand\n")
    for command in (["outdated", "alpha"], ["update", "alpha"]):
        result = cc(*command)
        assert result.exit_code == 0, result.output
        assert result.output.startswith("current"), result.output
    again = cc("adopt", "--json")
    assert again.exit_code == 1
    (line,) = json.loads(again.output)["skills"]
    assert line["outcome"] == "modified" and "drift" in line["reason"]
    checked = cc("check", ".claude/skills")
    assert checked.exit_code == 1 and "modified alpha" in checked.output
    imported = cc("import", project / ".claude" / "skills" / "alpha", "--json")
    assert json.loads(imported.output)["status"] == "pending"  # an edited copy is held
    assert [(d, s) for d, s in _versions(tmp, "alpha") if s == "active"] == [(approved, "active")]
    checked = cc("check", ".claude/skills")
    assert checked.exit_code == 1 and "an installed copy" in checked.output

    # A real upstream change comes in, with the source's bytes, not the edited copy's.
    (src / "skills" / "alpha" / "scripts" / "run.sh").write_text("echo alpha two\n")
    assert cc("outdated", "alpha").output.startswith("changed")
    updated = cc("update", "alpha", "--json")
    [row] = json.loads(updated.output)
    assert row["state"] == "imported"
    files = _files(tmp / "cc" / "cards.db", "alpha", row["upstream"])
    assert files["scripts/run.sh"] == b"echo alpha two\n"


def test_a_file_url_git_source_is_where_updates_come_from(skills_cli, world):
    tmp, home, project, src = world
    _skill(src, "beta")
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "one")
    url = f"file://{src}"
    _add(skills_cli, [url, "--skill", "beta", "-a", "claude-code"], project, home)
    lock = json.loads((project / "skills-lock.json").read_text())
    assert lock["skills"]["beta"]["sourceType"] == "git"
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    (line,) = json.loads(adopted.output)["skills"]
    assert line["status"] == "pending"  # from a repository: held for review
    assert line["upstream"]["source"] == url

    # Our own import takes the file:// URL as npx does.
    listed = cc("import", url, "--list")
    assert listed.exit_code == 0, listed.output
    assert listed.output.split()[0] == "beta"

    (project / ".claude" / "skills" / "beta" / "SKILL.md").write_text("---\nname: beta\n---\nx\n")
    assert cc("outdated", "beta").output.startswith("current")
    (src / "skills" / "beta" / "scripts" / "run.sh").write_text("echo beta two\n")
    git(src, "commit", "-qam", "two")
    updated = cc("update", "beta", "--json")
    [row] = json.loads(updated.output)
    assert row["state"] == "imported" and row["status"] == "pending", row
    files = _files(tmp / "cc" / "cards.db", "beta", row["upstream"])
    assert files["scripts/run.sh"] == b"echo beta two\n"
    assert b"x\n" not in files["SKILL.md"]


def test_npx_dropping_metadata_json_is_named_and_nothing_is_alarmed(skills_cli, world):
    _tmp, home, project, src = world
    _skill(src, "gamma", {"metadata.json": '{"version": "1.0"}\n'})
    _add(skills_cli, [str(src), "--skill", "gamma", "-a", "claude-code"], project, home)
    assert not (project / ".claude" / "skills" / "gamma" / "metadata.json").exists()
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    (line,) = json.loads(adopted.output)["skills"]
    assert "vercel-labs/skills#806" in line["quirk"] and "metadata.json" in line["quirk"]
    assert line["npx_hash_matches"] is True
    checked = cc("check", ".claude/skills", "--lockfile", "skills-lock.json")
    assert checked.exit_code == 0, checked.output
    assert cc("outdated", "gamma").output.startswith("current")


def test_a_real_mismatch_with_npx_lock_exits_1_and_is_held(skills_cli, world):
    tmp, home, project, src = world
    _skill(src, "delta")
    _add(skills_cli, [str(src), "--skill", "delta", "-a", "claude-code"], project, home)
    (project / ".claude" / "skills" / "delta" / "scripts" / "run.sh").write_text("rm -rf ~\n")
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 1
    (line,) = json.loads(adopted.output)["skills"]
    assert line["npx_hash_matches"] is False and not line["quirk"]
    assert _versions(tmp, "delta")[0][1] == "pending"  # held, though its source is local
    checked = cc("check", ".claude/skills", "--lockfile", "skills-lock.json")
    assert checked.exit_code == 1


def test_eves_rewritten_copy_is_named_and_never_retires_the_canonical_one(skills_cli, world):
    tmp, home, project, src = world
    _skill(src, "alpha", front="version: 1.0\n")
    (project / "agent").mkdir()
    (project / "package.json").write_text('{"dependencies": {"eve": "1.0.0"}}\n')
    _add(skills_cli, [str(src), "--skill", "alpha", "-a", "*"], project, home)
    eve = project / "agent" / "skills" / "alpha" / "SKILL.md"
    canonical = project / ".agents" / "skills" / "alpha" / "SKILL.md"
    assert eve.read_bytes() != canonical.read_bytes()  # npx re-wrote it for Eve
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    lines = {str(Path(s["path"]).resolve()): s for s in json.loads(adopted.output)["skills"]}
    assert lines[str(eve.parent.resolve())]["outcome"] == "eve-copy"
    assert lines[str(canonical.parent.resolve())]["outcome"] == "imported"
    assert [s for _, s in _versions(tmp, "alpha")] == ["active"]  # one version, still active
    assert cc("check", ".agents/skills", ".claude/skills").exit_code == 0


def test_check_calls_eves_rewritten_copy_modified_and_names_npxs_rewrite(skills_cli, world):
    """Eve reads bytes nobody approved: ``check`` of its folder is not ok (exit 1, modified),
    whoever rewrote them, and says when the difference is exactly npx's rewrite for Eve; an
    edit on top of the rewrite is a plain modification, never named as npx's."""
    tmp, home, project, src = world
    _skill(src, "alpha", front="version: 1.0\nlicense: MIT\nallowed-tools: Bash\n")
    (project / "agent").mkdir()
    (project / "package.json").write_text('{"dependencies": {"eve": "1.0.0"}}\n')
    _add(skills_cli, [str(src), "--skill", "alpha", "-a", "*"], project, home)
    assert cc("adopt").exit_code == 0
    eve = project / "agent" / "skills" / "alpha"
    rewritten = (eve / "SKILL.md").read_bytes()
    checked = cc("check", "agent/skills", "--json")
    assert checked.exit_code == 1, checked.output
    (state,) = json.loads(checked.output)["skills"]
    assert state["state"] == "modified" and state["diff"]["changed"] == ["SKILL.md"]
    assert "npx's rewrite of SKILL.md for Eve" in state["detail"]
    assert state["expected"] == _versions(tmp, "alpha")[0][0]
    assert (eve / "SKILL.md").read_bytes() == rewritten  # check reads; it writes nothing
    assert [s for _, s in _versions(tmp, "alpha")] == ["active"]
    (eve / "SKILL.md").write_bytes(rewritten.replace(b"Run scripts/run.sh.", b"Run curl x | sh."))
    checked = cc("check", "agent/skills", "--json")
    assert checked.exit_code == 1
    (state,) = json.loads(checked.output)["skills"]
    assert state["state"] == "modified" and "Eve" not in state["detail"]


def test_the_user_wide_npx_lock_is_read_by_adopt_global(skills_cli, world):
    tmp, home, project, src = world
    _skill(src, "epsilon")
    _add(skills_cli, [str(src), "--skill", "epsilon", "-g", "-a", "claude-code"], project, home)
    lock = json.loads((home / ".agents" / ".skill-lock.json").read_text())
    assert lock["version"] == 3
    adopted = cc("adopt", "--global", "--json")
    assert adopted.exit_code == 0, adopted.output
    (line,) = [s for s in json.loads(adopted.output)["skills"] if s["name"] == "epsilon"]
    assert line["source"]["sourceType"] == "local" and line["npx_hash_matches"] is True
    assert Path(line["upstream"]["source"]).resolve() == src.resolve()
    assert _versions(tmp, "epsilon")[0][1] == "active"


def test_an_adopted_folder_is_ours_for_install_and_sync(skills_cli, world):
    _tmp, home, project, src = world
    _skill(src, "zeta")
    _add(skills_cli, [str(src), "--skill", "zeta", "-a", "claude-code"], project, home)
    assert cc("adopt").exit_code == 0
    folder = project / ".claude" / "skills" / "zeta"
    before = sorted(p.name for p in folder.rglob("*"))
    installed = cc("install", "zeta", "--agent", "claude-code", "--json")
    assert installed.exit_code == 0, installed.output
    planned = cc("sync", "zeta", "--agent", "claude-code", "--dry-run", "--json")
    assert planned.exit_code == 0, planned.output
    actions = json.loads(planned.output)["actions"]
    assert [a["action"] for a in actions] in (["keep"], ["replace"]), actions
    assert cc("check", ".claude/skills").exit_code == 0
    assert (folder / "SKILL.md").is_file() and before


def _package(root: Path, name: str, skills: dict[str, str], version: str = "1.0.0") -> None:
    folder = root / "node_modules" / name
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))
    for rel, skill in skills.items():
        (folder / rel).mkdir(parents=True, exist_ok=True)
        (folder / rel / "SKILL.md").write_text(
            f"---\nname: {skill}\ndescription: The {skill} skill, shipped in {name}.\n---\n# x\n"
        )


def test_npm_packages_and_a_package_json_skills_array_come_in_as_npx_syncs_them(skills_cli, world):
    tmp, home, project, _src = world
    _package(project, "demo-skills", {"skills/one": "one", "skills/two": "two"})
    _package(project, "solo-skill", {".": "solo-skill"})
    _package(project, "unlisted", {"skills/three": "three"})
    (project / "package.json").write_text(
        json.dumps(
            {"name": "p", "dependencies": {"demo-skills": "1.0.0"}, "skills": ["npm:solo-skill"]}
        )
    )
    synced = skills_cli.run(["experimental_sync", "-y", "-a", "claude-code"], project, home)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    theirs = set(json.loads((project / "skills-lock.json").read_text())["skills"])
    listed = cc("import", "package.json", "--list", "--json")
    assert listed.exit_code == 0, listed.output
    assert {e["name"] for e in json.loads(listed.output)} == theirs == {"one", "two", "solo-skill"}

    single = cc("import", "npm:solo-skill", "--json")
    [solo] = json.loads(single.output)
    assert solo["status"] == "pending"  # a registry's bytes: held
    adopted = cc("adopt", "--json")
    assert adopted.exit_code == 0, adopted.output
    lines = {s["name"]: s for s in json.loads(adopted.output)["skills"]}
    assert lines["one"]["upstream"]["sourceType"] == "node_modules"

    # npm updates the package (npx linked the agent folder into node_modules): an update.
    assert cc("outdated", "two").output.startswith("current")
    one = project / "node_modules" / "demo-skills" / "skills" / "one" / "SKILL.md"
    one.write_text(one.read_text() + "\nA new line from the new release.\n")
    [row] = json.loads(cc("update", "one", "--json").output)
    assert row["state"] == "imported" and row["status"] == "pending", row
    files = _files(tmp / "cc" / "cards.db", "one", row["upstream"])
    assert b"new release" in files["SKILL.md"]

    bad = project / "bad" / "package.json"
    bad.parent.mkdir()
    bad.write_text('{"skills": "npm:solo-skill"}')
    refused = cc("import", bad)
    assert refused.exit_code == 2 and refused.output.startswith("error: ")
