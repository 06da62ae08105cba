"""A lockfile is the whole set, as npm ci has it: after ``sync --lockfile`` the folder holds
exactly the pinned bundles, and ``check --lockfile`` reports a folder the lock does not pin
(``unpinned``) and a pin with no folder (``missing``).

A skill this tool installed and the lock does not pin is removed; a folder it did not install
is never deleted: the sync fails naming it, and the folder is left byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_skill, run_cli

from chimera_cards._bundles.bundle import read_bundle_dir

run = run_cli


@pytest.fixture
def world(tmp_path):
    """Three clean local skills (usable without approvals), all installed; a lockfile pinning
    two of them."""
    db = tmp_path / "cards.db"
    for name in ("alpha", "beta", "gamma"):
        make_skill(tmp_path / "src", name, {"run.sh": (f"echo {name}\n", True)})
    imported = json.loads(run("import", tmp_path / "src", "--json", "--store", db).stdout)
    digests = {r["name"]: r["digest"] for r in imported}
    skills = tmp_path / "skills"
    run("install", "alpha", "beta", "gamma", "--to", skills, "--store", db)
    lock = tmp_path / "cards.lock"
    lock.write_text(f"alpha digest:{digests['alpha']}\nbeta digest:{digests['beta']}\n")
    return db, skills, lock, digests


def folder_bundles(skills: Path) -> dict[str, str]:
    """Each skill folder's name and bundle digest, as the disk holds them now."""
    return {
        p.name: read_bundle_dir(p).digest
        for p in sorted(skills.iterdir())
        if p.is_dir() and not p.name.startswith(".")
    }


def test_sync_lockfile_removes_an_installed_skill_the_lock_does_not_pin(world):
    db, skills, lock, digests = world
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--json")
    actions = {a["name"]: a["action"] for a in json.loads(result.stdout)["actions"]}
    assert actions == {"alpha": "keep", "beta": "keep", "gamma": "remove"}
    assert folder_bundles(skills) == {"alpha": digests["alpha"], "beta": digests["beta"]}
    check = run("check", skills, "--lockfile", lock, "--store", db)
    assert check.stdout.split() == ["ok", "alpha", "ok", "beta"]


def test_sync_lockfile_dry_run_names_the_removal_and_changes_nothing(world):
    db, skills, lock, _ = world
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--dry-run")
    assert "would remove   gamma  not in the lockfile" in result.stdout
    assert set(folder_bundles(skills)) == {"alpha", "beta", "gamma"}


def test_sync_lockfile_refuses_a_hand_made_folder_the_lock_does_not_pin_and_leaves_it(world):
    db, skills, lock, digests = world
    mine = make_skill(skills, "mine", {"notes.md": "my own\n"})
    before = read_bundle_dir(mine).digest
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--json", ok=False)
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert [(u["name"], u["kind"]) for u in out["unmet"]] == [("mine", "unpinned")]
    assert "chimera-cards did not install it" in out["unmet"][0]["message"]
    # The rest of the lock is met: gamma is gone, the hand-made folder stays as it was.
    assert folder_bundles(skills) == {
        "alpha": digests["alpha"],
        "beta": digests["beta"],
        "mine": before,
    }
    text = run("sync", "--lockfile", lock, "--to", skills, "--store", db, ok=False)
    assert text.exit_code == 1
    assert "unmet    mine  unpinned: " in text.stdout


def test_check_lockfile_reports_an_unpinned_skill_and_a_pin_with_no_folder(world):
    db, skills, lock, _ = world
    result = run("check", skills, "--lockfile", lock, "--store", db, "--json", ok=False)
    assert result.exit_code == 1
    states = {s["name"]: (s["state"], s["detail"]) for s in json.loads(result.stdout)["skills"]}
    assert states == {
        "alpha": ("ok", ""),
        "beta": ("ok", ""),
        "gamma": ("unpinned", "not in the lockfile"),
    }
    lock.write_text(lock.read_text() + f"delta digest:{'2' * 64}\n")
    run("sync", "--lockfile", lock, "--to", skills, "--store", db, ok=False)
    result = run("check", skills, "--lockfile", lock, "--store", db, ok=False)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "ok       alpha",
        "ok       beta",
        "missing  delta  in the lockfile; in none of these folders",
    ]


def test_check_lockfile_as_sarif_names_the_unpinned_rule(world):
    db, skills, lock, _ = world
    result = run("check", skills, "--lockfile", lock, "--store", db, "--format", "sarif", ok=False)
    results = json.loads(result.stdout)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["skill-unpinned"]
