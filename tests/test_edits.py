"""Parsing a model's reply for an edit and applying it inside the workspace only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference_loop.edits import EditError, apply_edit, parse_edit

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text(CALC)
    return root


def test_search_replace_block_fixes_the_file(ws: Path) -> None:
    reply = """I'll fix the sign.

pkg/calc.py
```python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
```
"""
    edit = parse_edit(reply)
    assert edit.format == "search-replace"
    assert apply_edit(edit, ws) == ["pkg/calc.py"]
    assert (ws / "pkg" / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_search_replace_path_in_fence_info_string(ws: Path) -> None:
    reply = "```python pkg/calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return b * a\n>>>>>>> REPLACE\n```\n"
    apply_edit(parse_edit(reply), ws)
    assert "return b * a" in (ws / "pkg" / "calc.py").read_text()


def test_search_replace_tolerates_trailing_whitespace_mistakes(ws: Path) -> None:
    reply = "pkg/calc.py\n<<<<<<< SEARCH\n    return a - b   \n=======\n    return a + b\n>>>>>>> REPLACE\n"
    apply_edit(parse_edit(reply), ws)
    assert (ws / "pkg" / "calc.py").read_text() == CALC.replace("a - b", "a + b")


@pytest.mark.parametrize(
    "label",
    [
        "pkg/calc.py",
        "`pkg/calc.py`:",
        "**pkg/calc.py**",
        "### pkg/calc.py",
        "File: `pkg/calc.py`",
        "pkg/calc.py:",
    ],
)
def test_path_labels_as_models_write_them(ws: Path, label: str) -> None:
    reply = (
        f"{label}\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    )
    assert parse_edit(reply).paths == ["pkg/calc.py"]


def test_search_text_not_in_file_is_a_clear_error_and_writes_nothing(ws: Path) -> None:
    reply = (
        "pkg/new.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n\n"
        "pkg/calc.py\n<<<<<<< SEARCH\n    return a / b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    )
    with pytest.raises(EditError, match="block 1 was not found"):
        apply_edit(parse_edit(reply), ws)
    # All or nothing: the first file's creation did not happen either.
    assert not (ws / "pkg" / "new.py").exists()
    assert (ws / "pkg" / "calc.py").read_text() == CALC


def test_ambiguous_search_text_is_refused(ws: Path) -> None:
    (ws / "dup.py").write_text("x = 1\nx = 1\n")
    reply = "dup.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
    with pytest.raises(EditError, match="matches 2 places"):
        apply_edit(parse_edit(reply), ws)


def test_unclosed_search_block_is_a_parse_error() -> None:
    with pytest.raises(EditError, match="not closed"):
        parse_edit("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n")


def test_unified_diff_applies_even_with_wrong_line_numbers(ws: Path) -> None:
    reply = """Here is the patch:

```diff
--- a/pkg/calc.py
+++ b/pkg/calc.py
@@ -40,2 +40,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```
"""
    edit = parse_edit(reply)
    assert edit.format == "diff"
    apply_edit(edit, ws)
    assert (ws / "pkg" / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_unified_diff_creates_and_deletes_files(ws: Path) -> None:
    (ws / "old.txt").write_text("bye\n")
    reply = (
        "--- /dev/null\n+++ b/notes/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    changed = apply_edit(parse_edit(reply), ws)
    assert sorted(changed) == ["notes/new.txt", "old.txt"]
    assert (ws / "notes" / "new.txt").read_text() == "hello\nworld\n"
    assert not (ws / "old.txt").exists()


def test_diff_hunk_that_does_not_match_is_refused(ws: Path) -> None:
    reply = "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a // b\n+    return a + b\n"
    with pytest.raises(EditError, match="hunk 1 does not apply"):
        apply_edit(parse_edit(reply), ws)
    assert (ws / "pkg" / "calc.py").read_text() == CALC


def test_whole_file_replacement_with_path_line_before_the_fence(ws: Path) -> None:
    reply = (
        "The fixed file:\n\npkg/calc.py\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
    )
    edit = parse_edit(reply)
    assert edit.format == "whole-file"
    apply_edit(edit, ws)
    assert (ws / "pkg" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_whole_file_in_the_format_the_llm_prompt_shows_files(ws: Path) -> None:
    # The llm: attempter shows files as "### path" + fence; a model echoing that is understood.
    reply = "### pkg/calc.py\n```\ndef add(a, b):\n    return a + b\n```\n"
    apply_edit(parse_edit(reply), ws)
    assert (ws / "pkg" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_whole_file_replacement_keeps_the_file_mode(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\nexit 1\n")
    script.chmod(0o755)
    apply_edit(parse_edit("```sh run.sh\n#!/bin/sh\nexit 0\n```\n"), ws)
    assert script.read_text() == "#!/bin/sh\nexit 0\n"
    assert os.stat(script).st_mode & 0o777 == 0o755


def test_reply_without_any_edit_says_what_was_expected() -> None:
    with pytest.raises(EditError, match="no edit found.*search/replace.*unified diff.*fenced"):
        parse_edit("I think the bug is in add(); you should change the minus to a plus.")


def test_fenced_block_without_a_path_is_not_an_edit() -> None:
    with pytest.raises(EditError, match="no edit found"):
        parse_edit("Run this:\n```\npytest -q\n```\n")


@pytest.mark.parametrize(
    "path, why",
    [
        ("../escape.txt", "'..'"),
        ("pkg/../../escape.txt", "'..'"),
        ("/tmp/escape.txt", "absolute"),
        (".git/config", ".git"),
    ],
)
def test_paths_that_leave_the_workspace_are_refused(ws: Path, path: str, why: str) -> None:
    reply = f"{path}\n<<<<<<< SEARCH\n=======\npwned\n>>>>>>> REPLACE\n"
    with pytest.raises(EditError, match=why):
        apply_edit(parse_edit(reply), ws)
    assert not (ws.parent / "escape.txt").exists()


def test_diff_path_escaping_the_workspace_is_refused(ws: Path) -> None:
    reply = "--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+pwned\n"
    with pytest.raises(EditError, match="'..'"):
        apply_edit(parse_edit(reply), ws)
    assert not (ws.parent / "escape.txt").exists()


def test_symlink_pointing_outside_cannot_be_written_through(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (ws / "link.txt").symlink_to(outside)
    (ws / "linkdir").symlink_to(tmp_path)
    for target in ("link.txt", "linkdir/outside.txt"):
        reply = f"```text {target}\nowned\n```\n"
        with pytest.raises(EditError, match="outside the workspace"):
            apply_edit(parse_edit(reply), ws)
    assert outside.read_text() == "secret\n"


def test_binary_file_is_not_edited_as_text(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    reply = "blob.bin\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
    with pytest.raises(EditError, match="not UTF-8"):
        apply_edit(parse_edit(reply), ws)
    assert (ws / "blob.bin").read_bytes() == b"\xff\xfe\x00\x01"
