"""Parsing a model's reply for an edit and applying it inside the workspace only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import REPO_ROOT, TESTS_DIR

from reference_loop._attempters.edits import (
    EchoedExampleError,
    EditError,
    apply_edit,
    choose_format,
    edit_instructions,
    editable_files,
    parse_edit,
)
from reference_loop.errors import LoopUsageError

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
    reply = (
        "```python pkg/calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n"
        "    return b * a\n>>>>>>> REPLACE\n```\n"
    )
    apply_edit(parse_edit(reply), ws)
    assert "return b * a" in (ws / "pkg" / "calc.py").read_text()


def test_search_replace_tolerates_trailing_whitespace_mistakes(ws: Path) -> None:
    reply = (
        "pkg/calc.py\n<<<<<<< SEARCH\n    return a - b   \n=======\n"
        "    return a + b\n>>>>>>> REPLACE\n"
    )
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
        "pkg/calc.py\n<<<<<<< SEARCH\n    return a / b\n=======\n"
        "    return a + b\n>>>>>>> REPLACE\n"
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
    reply = (
        "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
        "-    return a // b\n+    return a + b\n"
    )
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
    with pytest.raises(EditError, match=r"no edit found.*search/replace.*unified diff.*fenced"):
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
    with pytest.raises(EditError, match=r"'\.\.'"):
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


# -- what small models write: each rule with a reply in the shape a real run reported ----------

REPLIES = TESTS_DIR / "fixtures" / "replies"
STATS = (
    '"""Statistics helpers."""\n\nimport math\n\n\n'
    "def mean(values):\n    return sum(values) / len(values)\n\n\n"
    "def median(values):\n    values.sort()\n    mid = len(values) // 2\n"
    "    return values[mid]\n\n\n"
    "def spread(values):\n    return max(values) - min(values)\n"
)
RECT = (
    "class Rect:\n    def __init__(self, width, height):\n        self.width = width\n"
    "        self.height = height\n\n    def area(self):\n        return self.width + self.height\n"
)


def reply(name: str) -> str:
    return (REPLIES / name).read_text()


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_fenced_whole_file_without_a_path_applies_when_one_file_is_editable(tmp_path) -> None:
    calc = '"""Arithmetic."""\n\n\n' + CALC
    ws = project(tmp_path, {"calc.py": calc, "test_calc.py": "from calc import add\n"})
    editable = editable_files(ws)
    assert list(editable) == ["calc.py"]  # the test file is protected, so not editable
    edit = parse_edit(reply("pathless-whole-file.txt"), editable)
    assert apply_edit(edit, ws) == ["calc.py"]
    assert (ws / "calc.py").read_text() == calc.replace("a - b", "a + b")
    assert edit.notes == ["code block without a path read as the whole of calc.py"]


def test_pathless_block_with_only_some_functions_keeps_the_others(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    edit = parse_edit("```python\ndef add(a, b):\n    return a + b\n```\n", editable_files(ws))
    assert edit.notes == ["code block read as a new version of add in calc.py"]
    apply_edit(edit, ws)
    assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_fenced_block_without_a_path_is_refused_when_two_files_could_be_meant(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC, "other.py": "X = 1\n"})
    with pytest.raises(EditError, match=r"names no file path.*editable: calc\.py, other\.py"):
        parse_edit("```python\nprint('hello')\n```\n", editable_files(ws))


def test_a_command_in_a_fence_is_not_read_as_the_whole_file(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    with pytest.raises(EditError, match="no edit found"):
        parse_edit("Run this:\n```\npytest -q\n```\n", editable_files(ws))


def test_block_defining_a_function_replaces_only_that_definition(tmp_path) -> None:
    ws = project(tmp_path, {"stats.py": STATS, "report.py": "from stats import median\n"})
    edit = parse_edit(reply("definition-only.txt"), editable_files(ws))
    assert edit.format == "definition" and edit.paths == ["stats.py"]
    apply_edit(edit, ws)
    text = (ws / "stats.py").read_text()
    assert "import math" in text and "def mean(values):" in text and "def spread(" in text
    assert "ordered = sorted(values)" in text and "values.sort()" not in text
    ns: dict = {}
    exec(compile(text, "stats.py", "exec"), ns)
    assert ns["median"]([3, 1, 2, 4]) == 2.5


def test_method_shown_flush_left_goes_back_into_its_class(tmp_path) -> None:
    ws = project(tmp_path, {"rect.py": RECT, "main.py": "print(1)\n"})
    apply_edit(parse_edit(reply("method-flush-left.txt"), editable_files(ws)), ws)
    ns: dict = {}
    exec(compile((ws / "rect.py").read_text(), "rect.py", "exec"), ns)
    assert ns["Rect"](2, 3).area() == 6
    assert (
        "    def area(self):\n        return self.width * self.height\n"
        in (ws / "rect.py").read_text()
    )


def test_search_block_without_divider_holding_a_definition_replaces_it(tmp_path) -> None:
    ws = project(tmp_path, {"stats.py": STATS})
    edit = parse_edit(reply("dividerless-definition.txt"), editable_files(ws))
    assert edit.format == "definition"
    apply_edit(edit, ws)
    assert "ordered[mid - 1] + ordered[mid]" in (ws / "stats.py").read_text()
    assert "def spread(values):" in (ws / "stats.py").read_text()


def test_search_block_without_divider_and_no_definition_says_the_divider_is_missing(
    tmp_path,
) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    with pytest.raises(EditError, match="no ======= divider"):
        parse_edit(reply("dividerless-fragment.txt"), editable_files(ws))


def test_placeholder_path_resolves_to_the_one_editable_file(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC, "test_calc.py": "x = 1\n"})
    edit = parse_edit(reply("placeholder-path.txt"), editable_files(ws))
    assert edit.paths == ["calc.py"]
    assert edit.notes == ["placeholder path path/to/file.py read as calc.py"]
    apply_edit(edit, ws)
    assert "a + b" in (ws / "calc.py").read_text()


def test_placeholder_path_with_several_files_goes_to_the_one_holding_the_search(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC, "util.py": "X = 1\n"})
    assert parse_edit(reply("placeholder-path.txt"), editable_files(ws)).paths == ["calc.py"]


@pytest.mark.parametrize("fmt", ["whole", "search-replace", "diff"])
def test_reply_identical_to_the_taught_example_is_no_edit(tmp_path, fmt) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    instructions = edit_instructions(fmt)
    example = instructions.split("would change its greeting:\n\n", 1)[1].split("\n(greet.py")[0]
    with pytest.raises(EchoedExampleError, match="no edit: the reply repeats the example"):
        parse_edit(f"Sure!\n\n{example}\n", editable_files(ws))


def test_echo_of_the_old_instructions_example_is_no_edit_not_a_missing_file(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    with pytest.raises(EchoedExampleError, match=r"path/to/file\.py"):
        parse_edit(reply("echoed-legacy-example.txt"), editable_files(ws))


def test_diff_with_other_indentation_and_wrong_line_numbers_applies_fuzzily(tmp_path) -> None:
    ws = project(tmp_path, {"stats.py": STATS})
    edit = parse_edit(reply("fuzzy-diff.txt"), editable_files(ws))
    apply_edit(edit, ws)
    text = (ws / "stats.py").read_text()
    assert "    values = sorted(values)\n    mid = len(values) // 2\n" in text
    assert edit.notes and "hunk 1 applied fuzzily (ignoring whitespace" in edit.notes[0]
    assert "lines from its header" in edit.notes[0]


def test_search_quoted_with_other_indentation_matches_and_keeps_the_files(tmp_path) -> None:
    ws = project(tmp_path, {"stats.py": STATS})
    edit = parse_edit(reply("reindented-search.txt"), editable_files(ws))
    apply_edit(edit, ws)
    text = (ws / "stats.py").read_text()
    assert "def median(values):\n    values = sorted(values)\n    mid = len(values) // 2\n" in text
    assert edit.notes == ["stats.py: SEARCH of block 1 matched ignoring whitespace"]


def test_fuzzy_hunk_farther_than_the_offset_bound_does_not_apply(tmp_path) -> None:
    ws = project(tmp_path, {"stats.py": STATS})
    far = reply("fuzzy-diff.txt").replace("@@ -40,4 +40,4 @@", "@@ -400,4 +400,4 @@")
    with pytest.raises(EditError, match="even ignoring whitespace"):
        apply_edit(parse_edit(far, editable_files(ws)), ws)
    assert (ws / "stats.py").read_text() == STATS


def test_each_taught_example_is_itself_a_valid_edit_of_greet(tmp_path) -> None:
    for fmt in ("whole", "search-replace", "diff"):
        ws = project(tmp_path / fmt, {"greet.py": 'def greet(name):\n    return "Hello " + name\n'})
        text = edit_instructions(fmt)
        example = text.split("would change its greeting:\n\n", 1)[1].split("\n(greet.py")[0]
        apply_edit(parse_edit(example), ws)
        assert 'f"Hello, {name}!"' in (ws / "greet.py").read_text(), fmt


def test_auto_teaches_whole_files_for_a_small_task_and_search_replace_for_a_big_one() -> None:
    assert choose_format("auto", {"calc.py": CALC}) == "whole"
    big = {f"m{i}.py": "x = 1\n" * 300 for i in range(3)}
    assert choose_format("auto", big) == "search-replace"
    assert choose_format("diff", {"calc.py": CALC}) == "diff"
    with pytest.raises(LoopUsageError, match="unknown edit format"):
        choose_format("patch", {})


@pytest.mark.parametrize(
    ("fmt", "taught", "not_taught"),
    [
        ("auto", "complete new content", "<<<<<<< SEARCH"),
        ("search-replace", "<<<<<<< SEARCH", "+++ b/"),
        ("diff", "+++ b/greet.py", "<<<<<<< SEARCH"),
    ],
)
def test_model_prompt_teaches_exactly_one_format(tmp_path, fmt, taught, not_taught) -> None:
    from reference_loop._attempters.llm import compose_model_prompt

    ws = project(tmp_path, {"calc.py": CALC})
    sent = compose_model_prompt("Fix add().", ws, fmt)
    assert taught in sent and not_taught not in sent and "Example: if greet.py held" in sent


# -- real replies: SmolLM2-135M-Instruct on the sample tasks (tests/fixtures/replies/README.md) --

SAMPLES = REPO_ROOT / "reference_loop" / "_tasks" / "samples"


def sample_project(tmp_path: Path, task: str) -> Path:
    files = {p.name: p.read_text() for p in (SAMPLES / task / "project").iterdir() if p.is_file()}
    return project(tmp_path, files)


def test_real_reply_with_the_fix_among_test_blocks_replaces_the_definition(tmp_path) -> None:
    ws = sample_project(tmp_path, "port-config")
    edit = parse_edit(reply("smollm2-135m-port-config-1.txt"), editable_files(ws))
    assert edit.format == "definition" and set(edit.paths) == {"config.py"}
    assert "code block read as a new version of get_port in config.py" in edit.notes
    assert any("were left out" in n for n in edit.notes)  # its test blocks name no file
    assert any("cut off at the end of the reply" in n for n in edit.notes)
    # The model wrote back the function it was shown: an edit that changes nothing.
    assert apply_edit(edit, ws) == []


def test_real_reply_cut_at_max_tokens_applies_its_last_complete_block(tmp_path) -> None:
    ws = sample_project(tmp_path, "title-slug")
    (ws / "text.py").write_text("BROKEN = True\n")
    edit = parse_edit(reply("smollm2-135m-title-slug-1.txt"), editable_files(ws))
    assert set(edit.paths) == {"text.py"}
    assert edit.notes == ["a code block cut off at the end of the reply (text.py) was left out"]
    assert apply_edit(edit, ws) == ["text.py"]
    text = (ws / "text.py").read_text()  # the whole complete copy, not the half one after it
    assert text.startswith('"""Text helpers."""\n')
    assert text.endswith('def slugify(title):\n    return title.lower().replace(" ", "-")\n')


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("smollm2-135m-page-numbers-1.txt", "page-numbers"),
        ("smollm2-135m-stats-median-2.txt", "stats-median"),
    ],
)
def test_real_reply_of_only_test_code_is_no_edit(tmp_path, name, task) -> None:
    ws = sample_project(tmp_path, task)
    with pytest.raises(EditError, match="no edit found"):
        parse_edit(reply(name), editable_files(ws))


def test_real_reply_echoing_the_whole_prompt_is_no_change(tmp_path) -> None:
    """Gemma 3 270M wrote the prompt back: the example's greet.py and the shown files."""
    ws = sample_project(tmp_path, "money-format")
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    edit = parse_edit(reply("gemma3-270m-money-format-1.txt"), editable_files(ws))
    assert edit.notes == ["the instructions' example (greet.py) was left out"]
    assert "greet.py" not in edit.paths
    assert apply_edit(edit, ws) == []  # the task's files written back as they were
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


def test_real_reply_writing_back_the_file_with_other_blank_lines_changes_nothing(tmp_path) -> None:
    """Gemma 3 270M echoed pages.py with one blank line fewer: same code, so no edit is made."""
    ws = sample_project(tmp_path, "page-numbers")
    before = (ws / "pages.py").read_bytes()
    edit = parse_edit(reply("gemma3-270m-page-numbers-1.txt"), editable_files(ws))
    assert apply_edit(edit, ws) == []
    assert "pages.py differs only in layout or comments: left as it was" in edit.notes
    assert (ws / "pages.py").read_bytes() == before


def test_a_real_one_line_change_is_still_written(tmp_path) -> None:
    ws = project(tmp_path, {"calc.py": CALC})
    edit = parse_edit("calc.py\n```python\n" + CALC.replace("a - b", "a + b") + "```\n")
    assert apply_edit(edit, ws) == ["calc.py"] and not edit.notes
