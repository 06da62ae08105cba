"""write_atomic: readers see the old bytes or the new, and a failed write leaves no debris."""

import pytest

from chimera_cards._util.atomic import write_atomic


def test_write_replaces_the_whole_file(tmp_path):
    target = tmp_path / "cards.lock"
    target.write_bytes(b"old\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cards.lock"]


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp_file(tmp_path):
    target = tmp_path / "SKILL.md"
    target.write_bytes(b"approved bytes")
    with pytest.raises(TypeError):
        write_atomic(target, "not bytes")  # type: ignore[arg-type]  # fails inside the write
    assert target.read_bytes() == b"approved bytes"
    assert [p.name for p in tmp_path.iterdir()] == ["SKILL.md"]
