"""An unmet lockfile: ``sync --lockfile`` installs every pin it can and exits 1 naming each pin
it could not meet, with the reason that is true for it (never "approve it" for a rejected one).

Pins for one approved, one pending, one rejected, one retired, one absent name, one absent
digest and one folder in the way; the agent folder and its index are checked after each run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import card_text, run_cli

run = run_cli


def imported(db, server, name, text=None) -> str:
    url = server.serve(f"/{name}/SKILL.md", text or card_text(name))
    res = json.loads(run("import", url, "--json", "--store", db).stdout)
    return res["digest"]


def index(skills: Path) -> dict:
    return json.loads((skills / ".chimera-installed.json").read_text())["skills"]


@pytest.fixture
def pins(tmp_path, card_server):
    db = tmp_path / "cards.db"
    key = tmp_path / "alice.key"
    run("keys", "generate", "alice", "-o", key, "--store", db)
    shas = {}
    for name in ("good", "waiting", "bad", "old"):
        shas[name] = imported(db, card_server, name)
    run("approve", "good", "--key", key, "--digest", shas["good"], "--store", db)
    run("approve", "old", "--key", key, "--digest", shas["old"], "--store", db)
    run(
        "reject",
        "bad",
        "--key",
        key,
        "--digest",
        shas["bad"],
        "--reason",
        "phones home",
        "--store",
        db,
    )
    newer = imported(db, card_server, "old", card_text("old", description="The newer one."))
    run("approve", "old", "--key", key, "--digest", newer, "--store", db)
    shas["old-newer"] = newer
    lock = tmp_path / "skills.lock"
    lock.write_text(
        f"good digest:{shas['good']}\n"
        f"waiting digest:{shas['waiting']}\n"
        f"bad digest:{shas['bad']}\n"
        f"old digest:{shas['old']}\n"
        f"nowhere digest:{'1' * 64}\n"
    )
    return db, lock, shas, key


def test_unmet_lockfile_installs_what_it_can_and_exits_1_with_a_true_reason_per_pin(pins, tmp_path):
    db, lock, shas, _ = pins
    skills = tmp_path / "skills"
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--json", ok=False)
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    unmet = {u["name"]: u for u in out["unmet"]}
    assert set(unmet) == {"waiting", "bad", "old", "nowhere"}
    assert {n: u["kind"] for n, u in unmet.items()} == {
        "waiting": "pending",
        "bad": "rejected",
        "old": "retired",
        "nowhere": "absent",
    }
    assert (
        "review" in unmet["waiting"]["message"] and shas["waiting"] in unmet["waiting"]["message"]
    )
    assert "phones home" in unmet["bad"]["message"]
    assert "approve it" not in unmet["bad"]["message"] and "never" in unmet["bad"]["message"]
    assert shas["old-newer"][:12] in unmet["old"]["message"]
    assert "import" in unmet["nowhere"]["message"]
    # The one pin that can be met is installed; nothing else is in the folder or its index.
    assert sorted(p.name for p in skills.iterdir() if not p.name.startswith(".")) == ["good"]
    assert list(index(skills)) == ["good"] and index(skills)["good"]["digest"] == shas["good"]

    # The text output says the same, one line per unmet pin, and a second run is no different.
    again = run("sync", "--lockfile", lock, "--to", skills, "--store", db, ok=False)
    assert again.exit_code == 1
    lines = [ln for ln in again.output.splitlines() if ln.startswith("unmet")]
    assert len(lines) == 4 and any(ln.startswith("unmet    bad") for ln in lines)
    assert "keep     good" in again.output


def test_a_met_lockfile_exits_0(pins, tmp_path):
    db, _, shas, _ = pins
    lock = tmp_path / "good.lock"
    lock.write_text(f"good digest:{shas['good']}\nold digest:{shas['old-newer']}\n")
    skills = tmp_path / "skills"
    run("sync", "--lockfile", lock, "--to", skills, "--store", db)
    assert sorted(index(skills)) == ["good", "old"]


def test_a_dry_run_of_an_unmet_lockfile_exits_1_and_writes_nothing(pins, tmp_path):
    db, lock, _, _ = pins
    skills = tmp_path / "skills"
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--dry-run", ok=False)
    assert result.exit_code == 1 and "unmet" in result.output
    assert not skills.exists() or not any(p for p in skills.iterdir() if not p.name.startswith("."))


def test_an_absent_digest_and_a_folder_in_the_way_are_unmet_pins(pins, tmp_path):
    db, _, shas, _ = pins
    skills = tmp_path / "skills"
    (skills / "good").mkdir(parents=True)
    (skills / "good" / "SKILL.md").write_text("mine, not installed by chimera-cards\n")
    lock = tmp_path / "two.lock"
    lock.write_text(f"good digest:{shas['good']}\nold digest:{'2' * 64}\n")
    result = run("sync", "--lockfile", lock, "--to", skills, "--store", db, "--json", ok=False)
    unmet = {u["name"]: u for u in json.loads(result.stdout)["unmet"]}
    assert result.exit_code == 1
    assert (unmet["good"]["kind"], unmet["old"]["kind"]) == ("foreign", "absent")
    assert "no stored version" in unmet["old"]["message"]
    assert (skills / "good" / "SKILL.md").read_text() == "mine, not installed by chimera-cards\n"


def test_install_of_a_rejected_or_retired_skill_says_why_truly(pins, tmp_path):
    db, _, _, _ = pins
    skills = tmp_path / "skills"
    bad = run("install", "bad", "--to", skills, "--store", db, ok=False)
    assert bad.exit_code == 1 and "rejected" in bad.stderr and "approve it" not in bad.stderr
    waiting = run("install", "waiting", "--to", skills, "--store", db, ok=False)
    assert waiting.exit_code == 1 and "review" in waiting.stderr
    assert not skills.exists() or list(skills.iterdir()) == []
