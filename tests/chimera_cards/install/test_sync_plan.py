"""``sync --dry-run`` plans exactly what ``sync`` then does: over a folder holding every kind of
entry (missing, ours and current, ours and outdated, a foreign folder, npx's link, a link we
made, a file, a link leaving the project), the plan is carried out without an error and each
entry ends as its action says; and ``check`` reads what is left."""

from __future__ import annotations

import os

from conftest import make_skill

from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.disk import write_link, write_skill
from chimera_cards._install.policy import load_bundle, stored_skills
from chimera_cards._install.sync import apply_sync, plan_sync
from chimera_cards._install.verify import check

NAMES = ["absent", "current", "outdated", "foreign", "npx", "ours", "afile", "away"]


def _fingerprint(path):
    """What is at ``path``, without following a link: its kind, link text, files."""
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_file():
        return ("file", path.read_bytes())
    if path.is_dir():
        return ("dir", sorted((p.relative_to(path).as_posix(), p.read_bytes())
                              for p in path.rglob("*") if p.is_file()))  # fmt: skip
    return ("absent",)


def test_the_plan_is_what_the_real_run_does(store, tmp_path, monkeypatch):
    project = tmp_path / "project"
    skills = project / ".claude" / "skills"
    canonical = project / ".agents" / "skills"
    src = tmp_path / "src"
    for name in NAMES:
        make_skill(src, name, {"run.sh": (f"echo {name}\n", True)})
    assert all(r.ok for r in import_source(store, str(src)))
    by_name = {s.name: s for s in stored_skills(store)}
    bundle = {name: load_bundle(store, by_name[name]) for name in NAMES}
    write_skill(skills, bundle["current"], name="current", store="s")
    write_skill(skills, bundle["outdated"], name="outdated", store="s")
    (skills / "outdated" / "run.sh").write_text("edited\n")
    (skills / "foreign").mkdir()
    (skills / "foreign" / "SKILL.md").write_text("hand-made")
    write_skill(canonical, bundle["npx"], name="npx", store="s")
    os.symlink("../../.agents/skills/npx", skills / "npx")  # as npx links it: not ours
    write_skill(canonical, bundle["ours"], name="ours", store="s")
    write_link(skills, "ours", canonical / "ours", digest=bundle["ours"].digest)
    (skills / "afile").write_text("a file where a folder would go")
    away = tmp_path / "away" / "away"
    away.mkdir(parents=True)
    (away / "SKILL.md").write_text("outside")
    os.symlink(away, skills / "away")
    monkeypatch.chdir(project)

    before = {name: _fingerprint(skills / name) for name in NAMES}
    plan = plan_sync(store, skills, NAMES)
    actions = {a.name: a.action for a in plan}
    assert actions == {
        "absent": "install",
        "current": "keep",
        "outdated": "replace",
        "foreign": "skip",
        "npx": "keep",  # the bytes through the link are the approved ones
        "ours": "keep",
        "afile": "skip",
        "away": "skip",
    }
    done = apply_sync(store, skills, plan)
    assert [a.to_dict() for a in done] == [a.to_dict() for a in plan]
    after = {name: _fingerprint(skills / name) for name in NAMES}
    for name, action in actions.items():
        if action in ("keep", "skip"):
            assert after[name] == before[name], name
        else:
            assert after[name][0] == "dir" and after[name] != before[name], name
    assert (away / "SKILL.md").read_text() == "outside"  # never written through
    # Now everything sync could make right is right; the rest is reported, not hidden.
    states = {s.name: s for s in check(store, [skills]).states}
    assert {n for n, s in states.items() if s.ok} == {
        "absent",
        "current",
        "outdated",
        "npx",
        "ours",
    }
    assert states["away"].state == "unknown" and "outside" in states["away"].detail
    assert states["npx"].link == ".agents/skills/npx"
    # A second plan has nothing left to do.
    again = {a.name: a.action for a in plan_sync(store, skills, NAMES)}
    assert set(again.values()) <= {"keep", "skip"}
