"""``chimera-cards demo``: the whole main job runs for real and checks itself.

Two full runs (each a real store, a real HTTP server on 127.0.0.1, a real key, real loop
attempts with pytest as the verifier): the default run must meet every expectation and exit 0;
the run with the overwrite bug (``--history last``) must fail its own check and exit 1. Nothing
is mocked: the failure comes from the loop really hiding attempt 1 from attempt 3.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from chimera_cards._cli.app import main
from reference_loop._demo.steps import (
    OWN_CARD,
    URL_CARD,
    history_excerpt,
    history_section,
    library_card_dir,
)


def _demo(*args):
    return CliRunner().invoke(main, ["demo", *args])


@pytest.mark.slow
def test_demo_meets_every_expectation_and_keeps_what_it_made_with_keep(tmp_path):
    keep = tmp_path / "kept"
    res = _demo("--keep", str(keep))
    assert res.exit_code == 0, res.output
    out = res.stdout
    for n in range(1, 6):
        assert f"[{n}/5]" in out
    assert not re.search(r"^  FAIL ", out, re.M)
    assert re.search(
        rf"import {re.escape(OWN_CARD)}/ +-> +imported .* provenance clean, status active", out
    )
    assert re.search(r"import http://127\.0\.0\.1:\d+/.* provenance tainted, status pending", out)
    assert "ok   the pending URL card is absent from match" in out
    assert "ok   approving the reviewed hash with a trusted key makes the card active" in out
    assert 'review="approved after arriving tainted (1 trusted reviewer(s))"' in out
    assert re.search(
        r"^ +\| \+def sort_in_place\(values\): +<-- sort_in_place: only attempt 1 "
        r"produced this$",
        out,
        re.M,
    )
    assert re.search(r"history injections: [1-9]", out)
    assert re.search(r"demo: all \d+ expectations met", out)
    assert f"kept: {keep}" in out

    # what it kept is real: the store holds both cards active, attempt 3's prompt names attempt 1
    conn = sqlite3.connect(keep / "cards.db")
    rows = dict(conn.execute("SELECT name, status FROM versions").fetchall())
    conn.close()
    assert rows == {OWN_CARD: "active", URL_CARD: "active"}
    third = (keep / "prompts" / "attempt-3.txt").read_text()
    assert "### Attempt 1 — fail" in third and "sort_in_place" in third
    first = (keep / "prompts" / "attempt-1.txt").read_text()
    assert f'<skill-card name="{URL_CARD}"' in first and f'<skill-card name="{OWN_CARD}"' in first
    assert (keep / "keys" / "demo-reviewer.key").stat().st_mode & 0o777 == 0o600
    kinds = [json.loads(line)["kind"] for line in (keep / "events.jsonl").read_text().splitlines()]
    assert kinds.count("history_injected") >= 2 and kinds.count("cards_injected") >= 3


@pytest.mark.slow
def test_demo_with_the_overwrite_bug_fails_its_own_check_exits_1_and_cleans_up():
    res = _demo("--history", "last", "--max-attempts", "3", "--json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert out["ok"] is False and not out["kept"]
    failed = [f["what"] for f in out["failed"]]
    assert failed == ["attempt 3's prompt shows a string only attempt 1 produced"]
    assert [s["ok"] for s in out["steps"]] == [True, True, True, True, False]
    assert not Path(out["workdir"]).exists()


def test_keep_refuses_a_folder_that_already_has_files(tmp_path):
    (tmp_path / "mine.txt").write_text("do not touch")
    res = _demo("--keep", str(tmp_path))
    assert res.exit_code == 2
    assert res.stderr.startswith("error: --keep") and "Traceback" not in res.output
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_the_project_card_is_found_inside_the_package():
    card = library_card_dir()
    assert (card / "SKILL.md").is_file() and card.name == OWN_CARD


def test_history_excerpt_marks_the_first_line_with_each_attempt_one_string():
    prompt = (
        "# Task\n\nfix it\n\n## Earlier attempts — each one below was tried, failed, and "
        "was reverted. Do NOT repeat them.\n\n### Attempt 1 — fail\nFiles touched: a.py\n"
        "+def only_in_one():\n+    only_in_one()\n\n### Attempt 2 — fail\n"
    )
    section = history_section(prompt)
    assert section.startswith("## Earlier attempts")
    lines = history_excerpt(section, ["only_in_one"])
    assert sum("<-- only_in_one" in line for line in lines) == 1
    assert "### Attempt 1 — fail" in lines and "### Attempt 2 — fail" in lines
    assert history_section("# Task\n\nno history yet\n") == ""
