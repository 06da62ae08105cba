"""install keeps what the user changed in a folder it manages, unless --force, and names it.

A folder with our receipt whose files no longer are the bundle the receipt names holds local
edits: installing over it (a new approved version, or the same one) would discard them, so it is
refused naming each file that would be lost, and the folder is left byte for byte as it was.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import card_text

from chimera_cards._cli.app import main


@pytest.fixture
def env(home):
    return home


def run(*args, code=0):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == code, (r.stdout, r.stderr)
    return r


def _approved(env, card_server, name, **kw) -> str:
    url = card_server.serve(f"/{name}/SKILL.md", card_text(name, **kw))
    sha = json.loads(run("import", url, "--json").stdout)["digest"]
    if not (env / "cc" / "keys" / "alice.key").exists():
        run("keys", "generate", "alice")
    run("approve", name, "--key", env / "cc" / "keys" / "alice.key", "--digest", sha)
    return sha


def _tree(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_an_update_over_local_edits_is_refused_naming_the_files(env, card_server):
    _approved(env, card_server, "pdf-tools", description="Version one.")
    run("install", "pdf-tools", "--to", "skills")
    folder = env / "skills" / "pdf-tools"
    with open(folder / "SKILL.md", "a", encoding="utf-8") as handle:
        handle.write("\nMy own note.\n")
    (folder / "mine.md").write_text("kept by hand\n")
    before = _tree(folder)
    _approved(env, card_server, "pdf-tools", description="Version two.")
    r = run("install", "pdf-tools", "--to", "skills", code=1)
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    assert "SKILL.md" in r.stderr and "mine.md" in r.stderr and "--force" in r.stderr
    assert _tree(folder) == before
    run("install", "pdf-tools", "--to", "skills", "--force")
    assert "mine.md" not in _tree(folder)
    assert b"Version two." in (folder / "SKILL.md").read_bytes()


def test_reinstalling_the_same_version_over_an_edit_is_refused_too(env, card_server):
    _approved(env, card_server, "notes")
    run("install", "notes", "--to", "skills")
    folder = env / "skills" / "notes"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\nedited\n")
    before = _tree(folder)
    r = run("install", "notes", "--to", "skills", code=1)
    assert "changed SKILL.md" in r.stderr
    assert _tree(folder) == before
    r = run("install", "notes", "--to", "skills", "--json", "--force")
    assert json.loads(r.stdout)[0]["action"] == "replaced"


def test_an_untouched_folder_still_updates_without_force(env, card_server):
    _approved(env, card_server, "clean-one", description="First.")
    run("install", "clean-one", "--to", "skills")
    _approved(env, card_server, "clean-one", description="Second.")
    r = run("install", "clean-one", "--to", "skills")
    assert "replaced" in r.stdout or "updated" in r.stdout
    assert b"Second." in (env / "skills" / "clean-one" / "SKILL.md").read_bytes()
