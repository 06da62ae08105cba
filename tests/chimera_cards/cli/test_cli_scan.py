"""`chimera-cards scan`, `scanner` and `import --scanner` through click: formats, exit codes, what
the store keeps, and usage errors that write nothing."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner
from conftest import sarif_scanner_command
from sarif_shape import check_sarif

from chimera_cards._cli.app import main
from chimera_cards._store.facade import Store


def make_skill(root, name, files=None):
    """A plain Agent Skills folder (no finding of its own) with FILES beside its SKILL.md."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Demo.\n---\n\nBody.\n")
    for rel, text in (files or {}).items():
        (folder / rel).write_text(text)
    return folder


def run(*args, env=None):
    return CliRunner().invoke(main, list(map(str, args)), env=env)


def scanners_file(tmp_path, **extra):
    path = tmp_path / "scanners.yaml"
    scanners = {"demo": {"command": sarif_scanner_command()}, **extra}
    path.write_text(yaml.safe_dump({"scanners": scanners}))
    return path


def test_scan_reports_ours_and_the_scanners_findings_and_exits_1_on_an_error(tmp_path):
    skill = make_skill(tmp_path / "src", "leaky", {"send.sh": "curl EXFIL\n"})
    result = run("scan", skill, "--scanner", "demo", "--scanners-file", scanners_file(tmp_path))
    assert result.exit_code == 1, result.output
    assert f"{skill / 'send.sh'}:1: error [demo/demo-exfil] exfil in send.sh" in result.output
    assert "scanner demo (demo-scanner 0.1) on" in result.output
    assert result.output.strip().endswith("1 card: 1 error(s), 0 warning(s)")


def test_scan_without_errors_exits_0_and_json_names_each_scanner(tmp_path):
    skill = make_skill(tmp_path / "src", "careful", {"notes.md": "SUSPECT\n"})
    path = scanners_file(tmp_path)
    result = run("scan", skill, "--scanner", "demo", "--scanners-file", path, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (scanner,) = data["scanners"]
    assert (scanner["scanner"], scanner["status"], scanner["folder"]) == ("demo", "ok", str(skill))
    assert [f["rule"] for f in scanner["findings"]] == ["demo/demo-suspect"]
    assert data["warnings"] == 1 and data["errors"] == 0


def test_scan_sarif_is_one_log_with_a_run_per_tool(tmp_path):
    skill = make_skill(tmp_path / "src", "mixed", {"a.md": "<!-- hidden -->\nEXFIL\n"})
    path = scanners_file(tmp_path)
    result = run("scan", skill, "--scanner", "demo", "--scanners-file", path, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.output)
    check_sarif(log)
    ours, demo = log["runs"]
    assert ours["tool"]["driver"]["name"] == "chimera-cards"
    assert "html-comment" in {r["ruleId"] for r in ours["results"]}
    assert demo["tool"]["driver"]["name"] == "demo"
    assert demo["tool"]["driver"]["version"] == "0.1"
    assert demo["tool"]["driver"]["properties"] == {"tool": "demo-scanner"}
    (exfil,) = demo["results"]
    assert exfil["ruleId"] == "demo/demo-exfil" and exfil["level"] == "error"
    assert exfil["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_a_scanner_that_fails_makes_scan_fail(tmp_path):
    skill = make_skill(tmp_path / "src", "plain")
    path = scanners_file(tmp_path, gone={"command": "no-such-tool-xyz {dir}"})
    result = run("scan", skill, "--scanner", "gone", "--scanners-file", path)
    assert result.exit_code == 1
    assert "scanner gone on" in result.output and "FAILED (command not found" in result.output


def test_lint_sarif_has_the_shape_of_sarif_2_1_0(tmp_path):
    skill = make_skill(tmp_path / "src", "plain", {"x.md": "<!-- c -->\nsee https://e.com\n"})
    result = run("lint", "--format", "sarif", skill)
    log = json.loads(result.output)
    check_sarif(log)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"html-comment", "url"}


def test_scanner_set_list_remove_are_kept_in_the_store_and_its_audit_log(tmp_path):
    store = tmp_path / "cards.db"
    command = " ".join(f"'{part}'" for part in sarif_scanner_command())
    result = run("scanner", "set", "mine", "--command", command, "--level", "warning=error",
                 "--timeout", "30", "--store", store)  # fmt: skip
    assert result.exit_code == 0, result.output
    listed = json.loads(run("scanner", "list", "--store", store, "--json").output)
    mine = next(s for s in listed if s["name"] == "mine")
    assert mine["defined_in"] == "store" and mine["timeout"] == 30.0
    assert mine["levels"]["warning"] == "error"
    assert {"cisco"} <= {s["name"] for s in listed if s["defined_in"] == "preset"}
    # import uses it by name, and a warning now holds.
    skill = make_skill(tmp_path / "src", "careful", {"notes.md": "SUSPECT\n"})
    imported = run("import", skill, "--scanner", "mine", "--store", store, "--json")
    assert imported.exit_code == 0, imported.output
    data = json.loads(imported.output)
    assert data["status"] == "pending" and data["scanners"][0]["scanner"] == "mine"
    review = run("review", "careful", "--store", store)
    assert "== scanner mine (demo-scanner 0.1): 1 error/warning finding(s), 0 info ==" in (
        review.output
    )
    shown = run("show", "careful", "--store", store)
    assert "scanner:    mine ok, 1 error/warning finding(s)" in shown.output
    assert "error    mine/demo-suspect-" in shown.output
    shown_json = json.loads(run("show", "careful", "--store", store, "--json").output)
    assert [r["scanner"] for r in shown_json["scanners"]] == ["mine"]
    assert run("scanner", "remove", "mine", "--store", store).exit_code == 0
    again = run("scanner", "remove", "mine", "--store", store)
    assert again.exit_code == 2 and "no scanner named 'mine'" in again.output
    with Store(store) as opened:
        events = [(e.event, e.detail.get("scanner")) for e in opened.audit_entries()]
    assert events == [
        ("scanner-set", "mine"),
        ("import", None),
        ("scan", "mine"),
        ("scanner-remove", "mine"),
    ]


def test_bad_scanner_options_are_usage_errors_that_create_no_store(tmp_path):
    store = tmp_path / "cards.db"
    skill = make_skill(tmp_path / "src", "plain")
    unknown = run("import", skill, "--scanner", "nope", "--store", store)
    assert unknown.exit_code == 2
    assert unknown.output.startswith("error: no scanner named 'nope'")
    assert "Traceback" not in unknown.output
    no_dir = run("scanner", "set", "x", "--command", "tool --sarif", "--store", store)
    assert no_dir.exit_code == 2 and "{dir}" in no_dir.output
    bad_level = run(
        "scanner", "set", "x", "--command", "t {dir}", "--level", "note", "--store", store
    )
    assert bad_level.exit_code == 2 and "LEVEL=SEVERITY" in bad_level.output
    assert not store.exists()


def test_a_scanner_set_on_import_runs_on_a_plain_import(tmp_path):
    store = tmp_path / "cards.db"
    command = " ".join(f"'{part}'" for part in sarif_scanner_command())
    set_ = run("scanner", "set", "team", "--command", command, "--on-import", "--store", store)
    assert set_.exit_code == 0 and "(on every import)" in set_.output
    assert "team (store, on every import):" in run("scanner", "list", "--store", store).output
    skill = make_skill(tmp_path / "src", "leaky", {"send.sh": "EXFIL\n"})
    imported = run("import", skill, "--store", store)
    assert imported.exit_code == 0, imported.output
    assert "pending" in imported.output and "scanner team errors: demo-exfil" in imported.output
