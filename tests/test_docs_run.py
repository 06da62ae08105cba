"""Every console example of the README and docs/ runs on a fresh store and prints what it shows.

``docs_console`` executes every ``console`` block of a page in one fresh shell and compares each
command's output with the page, normalising digests, keys, timestamps, the working folder, home
and port only. The harness itself is tested first, so a page cannot pass because the comparison
accepts anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_console import (
    ConsoleSession,
    compare,
    normalise,
    not_run_reason,
    parse_console,
    run_document,
)

REPO = Path(__file__).resolve().parent.parent
# Every page with a console example; a block that cannot run here says why in a
# ``<!-- not run: … -->`` comment above it.
PAGES = sorted(
    str(page.relative_to(REPO))
    for page in [REPO / "README.md", *(REPO / "docs").glob("*.md")]
    if "```console" in page.read_text(encoding="utf-8")
)


def test_a_changed_word_in_the_output_is_a_mismatch():
    assert compare(
        "imported x 88d5bfdd58b8 active (clean)", "imported x 057a359b7c1f active (clean)"
    )
    assert not compare("imported x 88d5bfdd58b8 active (clean)", "imported x 057a359b7c1f pending")
    assert not compare("ok: 2 blobs", "ok: 3 blobs")
    assert not compare("a\nb", "a")
    assert not compare("", "something printed")


def test_a_short_digest_cannot_stand_for_a_full_one():
    full = "9920c3246f508f4997ee47b6813e094fad9bf867a8069964e05019dc5c82025b"
    assert not compare("approved 9920c3246f50", f"approved {full}")
    assert normalise(f"sha256 {full}") == "sha256 <hex:64>"


def test_timestamps_keys_and_sri_are_normalised_and_words_are_not():
    shown = "ed25519 LevmNM6mp8/XdxYFNWPBZJPy10JbHk3oKjJc/j4+prc= alice 2026-11-30T14:12:40.608166Z"
    printed = (
        "ed25519 Z2OqyJ+1kE0m9tYz1d4mDlqv5D1QxwAq7PdOoXwP3vQ= alice 2026-12-01T19:00:01.000001Z"
    )
    assert compare(shown, printed)
    assert not compare(shown, printed.replace("alice", "bob"))
    assert compare(
        "sha256-jTnTp/WfXo7q2JCbX6YFZsz/gl63qgv8Xs6XQbKSkdc=", "sha256-" + "A" * 43 + "="
    )


def test_an_ellipsis_line_stands_for_any_lines_and_nothing_else():
    assert compare("first\n…\nlast", "first\nlast")
    assert compare("first\n…\nlast", "first\n1\n2\n3\nlast")
    assert not compare("first\n…\nlast", "first\n1\n2\n3\nlast but one")


def test_commands_continue_over_backslashes_and_own_their_output():
    source = "$ echo a \\\n    b\na b\n$ true\n$ printf 'x\\n'\nx\n"
    parsed = [command for _, command in parse_console(source, first_line=10)]
    assert [c.command for c in parsed] == ["echo a \\\n    b", "true", "printf 'x\\n'"]
    assert [c.expected for c in parsed] == ["a b", "", "x"]
    assert [c.line for c in parsed] == [10, 13, 14]


def test_output_before_any_command_is_refused():
    with pytest.raises(ValueError, match="line 3: output before"):
        parse_console("orphan output\n$ true\n", first_line=3)


def test_the_session_is_fresh_keeps_state_and_maps_paths_and_port(tmp_path):
    session = ConsoleSession(tmp_path).start()
    try:
        assert session.run("echo $HOME; pwd")[0] == "~\n/tmp/story\n"
        assert session.run("export PICKED=yes; cd skills")[1] == 0
        assert session.run("echo $PICKED; pwd")[0] == "yes\n/tmp/story/skills\n"
        assert session.run("echo oops >&2; exit_code() { return 3; }; exit_code")[0:2] == (
            "oops\n",
            3,
        )
        (session.workdir / "docs" / "examples" / "hello.txt").write_text("hi\n")
        printed, code = session.run(
            'python3 -c "import urllib.request as u; '
            "print(u.urlopen('http://127.0.0.1:8765/hello.txt').read().decode(), end='')\""
        )
        assert (printed, code) == ("hi\n", 0)
        assert session.run("echo http://127.0.0.1:8765/x")[0] == "http://127.0.0.1:8765/x\n"
        assert session.port != 8765
    finally:
        session.stop()


def test_a_page_whose_output_is_stale_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n```console\n$ echo one\none\n$ echo two\nthree\n```\n\n"
        "```sh\nthis block is not run\n```\n"
    )
    failures = run_document(page, tmp_path / "run")
    assert len(failures) == 1
    assert f"{page}:6: $ echo two" in failures[0]
    assert "-three" in failures[0] and "+two" in failures[0]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_the_page_prints_what_it_shows(page, tmp_path):
    failures = run_document(REPO / page, tmp_path)
    assert not failures, "\n\n".join(failures)


def test_the_next_command_sees_the_exit_status_in_dollar_question(tmp_path):
    session = ConsoleSession(tmp_path).start()
    try:
        assert session.run("false")[1] == 1
        assert session.run("echo $?")[0] == "1\n"
    finally:
        session.stop()


def test_a_block_marked_not_run_is_not_run_and_must_say_why(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not run: needs a GPU -->\n\n```console\n$ echo one\ntwo\n```\n\n"
        "```console\n$ echo three\nthree\n```\n"
    )
    assert run_document(page, tmp_path / "run") == []
    assert not_run_reason(page.read_text(), page.read_text().index("```console")) == "needs a GPU"


def test_durations_ports_and_temporary_folders_are_normalised_and_words_are_not():
    assert compare(
        "demo: all 15 expectations met in 8.1 s", "demo: all 15 expectations met in 57 s"
    )
    assert not compare("demo: all 15 expectations met", "demo: all 14 expectations met")
    assert compare("at http://127.0.0.1:33553/x", "at http://127.0.0.1:41639/x")
    assert compare("removed /tmp/chimera-cards-demo-xvhu0qbz", "removed /tmp/chimera-cards-demo-a1")
    assert not compare("kept: /tmp/story/dmdoc", "kept: /tmp/story/other")
