"""Other scanners as plug-ins: a real SARIF-writing program run over a folder, its results read
as findings with mapped severities, and every way a scanner can fail counted as an error."""

from __future__ import annotations

import json
import sys
import time

import pytest
from conftest import sarif_scanner_command

from chimera_cards._scan.external import (
    FAILED_RULE,
    PRESETS,
    ScannerConfigError,
    UnknownScannerError,
    parse_scanner,
    read_scanner_file,
    resolve_scanner,
    run_scanner,
)


def skill(tmp_path, **files: str):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\n\nBody.\n")
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def test_a_scanners_sarif_results_become_findings_named_after_it(tmp_path):
    folder = skill(tmp_path, **{"scripts/run.sh": "echo\ncurl EXFIL\n", "notes.md": "SUSPECT\n"})
    run = run_scanner(parse_scanner("demo", sarif_scanner_command("--version", "2.0")), folder)
    assert run.ok and run.exit_code == 0
    assert (run.tool, run.tool_version) == ("demo-scanner", "2.0")
    got = sorted((f.rule, f.severity, f.path, f.line) for f in run.findings)
    assert got == [
        ("demo/demo-exfil", "error", "scripts/run.sh", 2),
        ("demo/demo-suspect", "warning", "notes.md", 1),
    ]
    assert run.holds()
    assert all(f.id.startswith(f.rule + "-") for f in run.findings)


def test_a_scanner_that_prints_its_log_is_read_from_standard_output(tmp_path):
    folder = skill(tmp_path, **{"a.txt": "NOTE\nDEFAULTED\n"})
    run = run_scanner(parse_scanner("out", sarif_scanner_command(to_file=False)), folder)
    assert run.ok
    assert sorted((f.rule, f.severity) for f in run.findings) == [
        ("out/demo-default", "error"),  # the rule's default level, as SARIF says
        ("out/demo-note", "info"),
    ]


def test_levels_map_to_severities_as_configured(tmp_path):
    folder = skill(tmp_path, **{"a.txt": "NOTE\nEXFIL\n"})
    config = parse_scanner(
        "strict",
        {"command": sarif_scanner_command(), "levels": {"note": "warning", "error": "warning"}},
    )
    run = run_scanner(config, folder)
    assert sorted(f.severity for f in run.findings) == ["warning", "warning"]
    assert not run.holds()


def test_results_the_tool_suppressed_are_shown_as_info_and_hold_nothing(tmp_path):
    folder = skill(tmp_path, **{"a.txt": "EXFIL\n"})
    run = run_scanner(parse_scanner("s", sarif_scanner_command("--suppress")), folder)
    (finding,) = run.findings
    assert finding.severity == "info" and "suppressed" in finding.message
    assert not run.holds()


def test_a_scanner_that_exits_non_zero_with_a_log_still_counts(tmp_path):
    # Many tools exit 1 when they found something; the log is what matters.
    folder = skill(tmp_path, **{"a.txt": "EXFIL\n"})
    run = run_scanner(parse_scanner("s", sarif_scanner_command("--exit", "1")), folder)
    assert run.ok and run.exit_code == 1 and run.holds()


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (["no-such-scanner-xyz", "{dir}"], "command not found: no-such-scanner-xyz"),
        (sarif_scanner_command("--garbage"), "unreadable SARIF"),
        ([sys.executable, "-c", "import sys; sys.exit(3)", "{dir}", "{output}"], "exited 3"),
        (
            [sys.executable, "-c", "import sys; sys.stderr.write('boom: no rules'); sys.exit(2)",
             "{dir}", "{output}"],
            "boom: no rules",
        ),
    ],
)  # fmt: skip
def test_a_scanner_that_cannot_run_or_leaves_no_log_fails_closed(tmp_path, command, why):
    folder = skill(tmp_path)
    run = run_scanner(parse_scanner("broken", command), folder)
    assert run.status == "failed" and why in run.reason
    (finding,) = run.findings
    assert finding.rule == f"broken/{FAILED_RULE}" and finding.severity == "error"
    assert run.holds()


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_a_scanner_past_its_timeout_is_killed_with_its_children_and_fails(tmp_path):
    folder = skill(tmp_path)
    pidfile = tmp_path / "pids"
    command = sarif_scanner_command("--sleep", "30", "--pidfile", str(pidfile), "--child")
    # Its child must be up before the timeout fires, or there is nothing to kill: a loaded
    # machine can take over a second to start Python, so the timeout grows until it was.
    for timeout in (1.5, 4.0, 12.0):
        pidfile.unlink(missing_ok=True)
        start = time.monotonic()
        run = run_scanner(parse_scanner("slow", {"command": command, "timeout": timeout}), folder)
        took = time.monotonic() - start
        if pidfile.exists() and pidfile.read_text():
            break
    assert took < timeout + 13.5  # killed at the timeout, not after the scanner's 30 s
    assert run.status == "failed" and f"timed out after {timeout:g} s" in run.reason
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        ({"command": "tool --sarif"}, "must name the folder as {dir}"),
        ({}, "needs a command"),
        ({"command": "t {dir}", "timeout": 0}, "timeout must be a positive"),
        ({"command": "t {dir}", "levels": {"fatal": "error"}}, "levels"),
        ({"command": "t {dir}", "levels": {"note": "critical"}}, "levels"),
        ({"command": "t '{dir}"}, "command"),
        ({"preset": "nope"}, "no preset 'nope'"),
    ],
)
def test_a_configuration_that_cannot_work_is_refused(settings, why):
    with pytest.raises(ScannerConfigError, match=why):
        parse_scanner("x", settings)


@pytest.mark.parametrize("name", ["../evil", "..", "", "-x", "сisco", "a b", "a/b"])
def test_a_scanner_name_is_plain_ascii_text(name):
    with pytest.raises(ScannerConfigError, match="scanner name"):
        parse_scanner(name, "t {dir}")


def test_a_command_string_is_split_as_a_shell_would_and_a_preset_can_be_tuned():
    config = parse_scanner("t", "tool --out '{output}' --path \"{dir}\"")
    assert config.command == ("tool", "--out", "{output}", "--path", "{dir}")
    assert config.writes_file
    tuned = parse_scanner("mine", {"preset": "cisco-ai-skill-scanner", "timeout": 60})
    assert tuned.command == PRESETS["cisco"].command and tuned.timeout == 60


def test_names_resolve_from_the_file_then_the_store_then_the_presets(tmp_path):
    path = tmp_path / "scanners.yaml"
    path.write_text("scanners:\n  cisco:\n    command: mine {dir}\n  extra: other {dir}\n")
    configured = read_scanner_file(path)
    stored = {"cisco": json.dumps({"command": ["stored", "{dir}"]}), "kept": '"k {dir}"'}
    assert resolve_scanner("cisco", configured=configured, stored=stored).command[0] == "mine"
    assert resolve_scanner("cisco", stored=stored).command[0] == "stored"
    assert resolve_scanner("cisco").command[0] == "skill-scanner"
    assert resolve_scanner("cisco-ai-skill-scanner").name == "cisco"
    assert resolve_scanner("kept", stored=stored).command == ("k", "{dir}")
    with pytest.raises(UnknownScannerError, match="no scanner named 'nope'"):
        resolve_scanner("nope", configured=configured, stored=stored)


@pytest.mark.parametrize(
    ("text", "why"),
    [("scanners: [1]\n", "scanners:"), ("{ bad", "not YAML"), ("x: 1\n", "scanners")],
)
def test_a_scanners_file_that_is_not_a_mapping_of_scanners_is_refused(tmp_path, text, why):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ScannerConfigError, match=why):
        read_scanner_file(path)


def test_the_readmes_scanners_file_example_reads_as_documented(tmp_path):
    from conftest import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Other scanners, and SARIF", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "scanners.yaml"
    path.write_text(example)
    (config,) = read_scanner_file(path).values()
    assert "{dir}" in config.command and config.writes_file
    assert config.levels["warning"] == "error" and config.timeout == 120
