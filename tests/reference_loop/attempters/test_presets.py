"""Agent presets (``--attempter claude|codex|gemini``): what command line, environment and settings
the CLI is started with, and the refusals. The real CLIs against a model server are in
tests/wire/test_loop_presets_at_the_wire.py; here a recording program stands in for the CLI on
PATH so every flag can be read back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reference_loop._attempters.factory import agent_settings, make_attempter
from reference_loop._attempters.presets import PRESETS, is_preset, make_preset_attempter
from reference_loop._cli.app import main
from reference_loop._cli.bench import default_jobs
from reference_loop.errors import LoopUsageError

# Records its argv, stdin, environment and the settings file it was pointed at, then exits 0.
RECORDER = f"""#!{sys.executable}
import json, os, sys
settings = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
record = {{
    "argv": sys.argv[1:],
    "stdin": sys.stdin.read(),
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "settings": json.load(open(settings)) if settings else None,
}}
with open(os.environ["RECORD_TO"], "w") as f:
    json.dump(record, f)
"""


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on PATH holding a recording ``claude``, ``codex`` and ``gemini``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in PRESETS:
        program = bin_dir / name
        program.write_text(RECORDER)
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("RECORD_TO", str(tmp_path / "record.json"))
    monkeypatch.delenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", raising=False)
    return tmp_path / "record.json"


def attempt(spec: str, workspace: Path, record: Path, **kwargs: object) -> dict:
    att = make_attempter(spec, **kwargs)  # type: ignore[arg-type]
    out = att.attempt("PROMPT_TEXT fix it", workspace, attempt=1)
    assert [s.ok for s in out.steps] == [True], out.steps
    return json.loads(record.read_text())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_runs_headless_in_the_workspace_with_the_prompt_on_stdin(
    name: str, on_path: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    got = attempt(name, ws, on_path)
    assert got["stdin"] == "PROMPT_TEXT fix it"
    assert Path(got["cwd"]) == ws.resolve()
    assert got["argv"] == list(PRESETS[name].args + PRESETS[name].trailer)
    for key, value in PRESETS[name].env.items():
        assert got["env"][key] == value
    assert os.listdir(ws) == []  # nothing of the preset's own lands in the workspace


def test_claude_asks_for_edits_without_the_mode_root_is_refused() -> None:
    args = PRESETS["claude"].args
    assert "-p" in args
    assert args[args.index("--permission-mode") + 1] == "acceptEdits"
    assert {"Bash", "Edit", "Write"} <= set(args[args.index("--allowedTools") + 1].split(","))
    assert "bypassPermissions" not in args and "--dangerously-skip-permissions" not in args


def test_model_and_extra_flags_go_before_what_must_stay_last(on_path: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    got = attempt("codex", ws, on_path, model="gpt-x", agent_args=("-c", "a=1"))
    assert got["argv"][-5:] == ["--model", "gpt-x", "-c", "a=1", "-"]
    got = attempt("claude:opus-9", ws, on_path, model="ignored", agent_args=("--verbose",))
    assert got["argv"][-3:] == ["--model", "opus-9", "--verbose"]


def test_the_spec_names_the_attempter_with_its_model(on_path: Path) -> None:
    assert make_attempter("gemini").name == "gemini"
    assert make_attempter("gemini", model="g-2").name == "gemini:g-2"
    assert make_attempter("claude:sonnet").name == "claude:sonnet"


def test_gemini_settings_layer_keeps_the_system_settings_and_turns_statistics_off(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "system-settings.json"
    text = json.dumps(
        {
            "security": {"auth": {"enforcedType": "vertex-ai"}},
            "privacy": {"usageStatisticsEnabled": True},
            "general": {"vimMode": True},
        }
    )
    system.write_text(text)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(system))
    ws = tmp_path / "ws"
    ws.mkdir()
    got = attempt("gemini", ws, on_path)
    settings = got["settings"]
    assert settings["security"] == {"auth": {"enforcedType": "vertex-ai"}}  # the admin's, kept
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["general"] == {
        "vimMode": True,
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
    }
    assert got["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] != str(system)
    assert system.read_text() == text  # the machine's own file is never written
    assert not Path(got["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).exists()  # gone after


def test_unreadable_gemini_system_settings_is_a_usage_error(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "settings.json"
    broken.write_text("{not json")
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(broken))
    with pytest.raises(LoopUsageError, match="cannot read"):
        make_attempter("gemini")


def test_a_preset_whose_cli_is_not_installed_is_refused_naming_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LoopUsageError) as refused:
        make_preset_attempter("codex")
    assert "@openai/codex@" + PRESETS["codex"].tested in str(refused.value)


def test_run_without_the_cli_exits_2_with_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    res = CliRunner().invoke(main, ["run", "--task", "title-slug", "--attempter", "claude"])
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: claude:")


@pytest.mark.parametrize(
    ("specs", "model", "args"),
    [
        (["cmd:true"], "m", ()),
        (["scripted:walk"], None, ("--x",)),
        (["llm:some-model", None], "m", ()),
    ],
)
def test_model_and_agent_args_without_a_preset_are_a_usage_error(
    specs: list, model: str | None, args: tuple
) -> None:
    with pytest.raises(LoopUsageError, match="agent preset"):
        agent_settings(specs, model, args)


def test_only_the_presets_of_a_run_take_model_and_agent_args() -> None:
    got = agent_settings(["claude", "scripted:strong"], "m", ("--v",))
    assert got == {"claude": {"model": "m", "agent_args": ("--v",)}, "scripted:strong": {}}


@pytest.mark.parametrize(
    ("spec", "preset"),
    [("claude", True), ("codex:gpt-x", True), ("gemini:", False), ("cmd:claude", False)],
)
def test_is_preset(spec: str, preset: bool) -> None:
    assert is_preset(spec) is preset


def test_the_bench_runs_one_agent_cli_at_a_time() -> None:
    assert default_jobs("claude") == default_jobs("codex:x") == 1
