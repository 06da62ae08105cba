"""The text lockfile: strict parsing, atomic writing, and pin checks that fail closed."""

from __future__ import annotations

import pytest

from chimera_cards._importer.lockfile import (
    LockfileError,
    check_pin,
    format_lockfile,
    parse_lockfile,
    read_lockfile,
    write_lockfile,
)
from chimera_cards.errors import UsageError

A = "a" * 64
B = "B" * 64


def test_round_trip_is_sorted_and_lowercase(tmp_path):
    path = tmp_path / "cards.lock"
    write_lockfile(path, {"zeta": A, "alpha": B.lower()})
    text = path.read_text()
    pins = [line for line in text.splitlines() if not line.startswith("#")]
    assert pins == [f"alpha digest:{'b' * 64}", f"zeta digest:{A}"]
    read = read_lockfile(path)
    assert read == {"alpha": "b" * 64, "zeta": A} and read.bare == frozenset()


def test_bare_hashes_of_older_lockfiles_still_read_and_are_marked_bare():
    pins = parse_lockfile(f"old {A}\nnew digest:{B}\n")
    assert pins == {"old": A, "new": "b" * 64}
    assert pins.bare == {"old"}


@pytest.mark.parametrize("line", [f"alpha sha256:{A}", f"alpha digest: {A}", f"alpha Digest:{A}"])
def test_only_the_digest_prefix_is_accepted(line):
    with pytest.raises(UsageError, match="line 1"):
        parse_lockfile(line + "\n")


def test_a_legacy_skill_md_hash_matches_only_a_bare_pin():
    skill_md = "c" * 64
    check_pin(parse_lockfile(f"one {skill_md}\n"), "one", A, legacy=skill_md)
    with pytest.raises(LockfileError, match="does not match"):
        check_pin(parse_lockfile(f"one digest:{skill_md}\n"), "one", A, legacy=skill_md)
    check_pin({"one": skill_md}, "one", A, legacy=skill_md)  # a plain mapping: bare pins


def test_comments_blank_lines_and_uppercase_hex_are_accepted():
    assert parse_lockfile(f"# pins\n\n  alpha   {B}  \n") == {"alpha": "b" * 64}


@pytest.mark.parametrize("line", ["alpha", f"alpha {A} extra", "alpha deadbeef", f"{A}"])
def test_malformed_lines_are_a_usage_error_naming_the_line(line):
    with pytest.raises(UsageError, match="line 2"):
        parse_lockfile(f"# header\n{line}\n")


def test_a_name_pinned_twice_is_refused():
    with pytest.raises(UsageError, match="listed twice"):
        parse_lockfile(f"alpha {A}\nalpha {'c' * 64}\n")


def test_missing_lockfile_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such lockfile"):
        read_lockfile(tmp_path / "nope.lock")


def test_a_pin_mismatch_is_refused():
    with pytest.raises(LockfileError, match="does not match"):
        check_pin({"alpha": A}, "alpha", "c" * 64)


def test_a_name_missing_from_the_lockfile_is_refused_fail_closed():
    with pytest.raises(LockfileError, match="not in"):
        check_pin({"alpha": A}, "beta", A)


def test_matching_pin_passes():
    check_pin({"alpha": A}, "alpha", A)


def test_names_with_whitespace_cannot_be_written(tmp_path):
    with pytest.raises(Exception, match="cannot be written"):
        write_lockfile(tmp_path / "x.lock", {"two words": A})
    assert list(tmp_path.iterdir()) == []


def test_format_has_a_header_comment():
    assert format_lockfile({}).startswith("# ")
