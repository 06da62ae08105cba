"""Symlinks below a folder the user named are never followed out of it: not on export, not on a
folder import. Each attack leaves the files outside untouched and the store without new rows."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from conftest import dump_store, make_card

from chimera_cards._cli.app import main
from chimera_cards._importer.pipeline import import_source
from chimera_cards._retrieve.export import export_card
from chimera_cards._store.facade import Store
from chimera_cards._util.atomic import WriteError
from chimera_cards._util.paths import LinkEscapeError, check_link_inside, write_atomic_inside


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store" / "cards.db") as opened:
        yield opened


@pytest.fixture
def exported_card(store, tmp_path):
    """An active card named ``victim-card`` in the store."""
    (result,) = import_source(store, make_card(tmp_path / "src", "victim-card"))
    assert result.status == "active"
    return result


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_export_does_not_write_through_a_symlinked_card_folder_to_outside_the_output(
    store, exported_card, tmp_path
):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "SKILL.md").write_text("the attacker's target, unchanged\n")
    (out / "victim-card").symlink_to(outside)
    with pytest.raises(LinkEscapeError, match="is a symlink"):
        export_card(store, "victim-card", out)
    assert (outside / "SKILL.md").read_text() == "the attacker's target, unchanged\n"
    assert sorted(os.listdir(outside)) == ["SKILL.md"]  # no temp file, no approvals.jsonl


def test_export_cli_refuses_a_symlinked_card_folder_with_one_error_line(
    store, exported_card, tmp_path
):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "victim-card").symlink_to(outside)
    before = dump_store(store.path)
    result = _cli("export", "victim-card", "-o", out, "--store", store.path)
    assert result.exit_code == 1
    assert "refusing to write through it" in _one_error_line(result)
    assert os.listdir(outside) == []
    assert dump_store(store.path)["versions"] == before["versions"]


def test_export_does_not_replace_a_symlinked_skill_md_pointing_outside(
    store, exported_card, tmp_path
):
    out, secret = tmp_path / "out", tmp_path / "secret.txt"
    secret.write_text("keep me\n")
    (out / "victim-card").mkdir(parents=True)
    (out / "victim-card" / "SKILL.md").symlink_to(secret)
    with pytest.raises(LinkEscapeError, match="not a regular file"):
        export_card(store, "victim-card", out)
    assert secret.read_text() == "keep me\n"
    assert (out / "victim-card" / "SKILL.md").is_symlink()


def test_write_inside_refuses_a_symlink_at_any_depth_below_the_root(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b").symlink_to(outside)
    with pytest.raises(LinkEscapeError):
        write_atomic_inside(root, ["a", "b", "c"], "f", b"x")
    assert os.listdir(outside) == []


def test_write_inside_follows_a_symlinked_root_the_user_named(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    written = write_atomic_inside(tmp_path / "link", ["card"], "SKILL.md", b"bytes")
    assert written == tmp_path / "link" / "card" / "SKILL.md"
    assert (real / "card" / "SKILL.md").read_bytes() == b"bytes"


@pytest.mark.parametrize("make_root", ["file", "missing-parent-file"])
def test_write_inside_an_output_that_cannot_be_a_folder_is_a_write_error(tmp_path, make_root):
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    root = blocker / "x" if make_root == "file" else blocker
    with pytest.raises(WriteError, match="cannot write"):
        write_atomic_inside(root, ["card"], "SKILL.md", b"bytes")
    assert blocker.read_text() == "x"


def test_folder_import_refuses_a_card_folder_symlinked_to_outside_the_folder(store, tmp_path):
    outside = make_card(tmp_path / "elsewhere", "smuggled-card")
    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / "smuggled-card").symlink_to(outside)
    before = dump_store(store.path)
    (result,) = import_source(store, folder)
    assert result.outcome == "refused"
    assert "outside" in result.error and "not followed" in result.error
    assert dump_store(store.path) == before


def test_folder_import_cli_refuses_the_symlinked_card_and_imports_the_rest(store, tmp_path):
    outside = make_card(tmp_path / "elsewhere", "smuggled-card")
    folder = tmp_path / "imported"
    make_card(folder, "honest-card")
    (folder / "smuggled-card").symlink_to(outside)
    result = _cli("import", folder, "--store", store.path)
    assert result.exit_code == 1
    assert "smuggled-card is a symlink to" in _one_error_line(result)
    assert [v.name for v in store.versions()] == ["honest-card"]


def test_a_symlinked_card_folder_that_stays_inside_the_folder_is_allowed(tmp_path):
    folder = tmp_path / "imported"
    make_card(folder, "real-card")
    (folder / "alias").symlink_to(folder / "real-card")
    check_link_inside(folder, folder / "alias")  # no error
    with pytest.raises(LinkEscapeError, match="broken or looping"):
        (folder / "dangling").symlink_to(tmp_path / "nowhere")
        check_link_inside(folder, folder / "dangling")
