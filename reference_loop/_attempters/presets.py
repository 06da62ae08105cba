"""Agent presets: ``--attempter claude``, ``codex`` or ``gemini`` run that agent's real CLI.

A preset is data on top of the ``cmd:`` attempter, not a second runner: the program, the flags
that run it once, non-interactively, in the workspace (its working directory) with file edits
and shell commands allowed, the flag that picks a model, and the environment or settings that
turn its telemetry and auto-update off. The composed prompt goes to the CLI's stdin.

Why these flags (each checked against the real CLI at the version in ``tested``):

- Claude Code: ``-p`` is headless. Root may not use ``bypassPermissions`` (or
  ``--dangerously-skip-permissions``) unless the CLI is told it is sandboxed, so the preset asks
  for ``acceptEdits`` plus an allow-list, which edits files as root and as anyone else.
- Codex CLI: ``exec`` is headless; its own sandbox needs helper binaries it refuses to create
  when its home is under a temporary folder (every shell call then fails), so approvals and its
  sandbox are off and containment is the loop's job (``--sandbox``). ``-`` reads the prompt from
  stdin; the workspace need not be a git repository.
- Gemini CLI: reads the prompt from stdin when it is not a terminal. ``yolo`` approves every
  tool call, and ``--skip-trust`` trusts the workspace for this run (else yolo is dropped in an
  untrusted folder). Usage statistics and auto-update are settings only, so they come in a
  settings layer (``GEMINI_CLI_SYSTEM_SETTINGS_PATH``) that keeps the machine's system settings
  and overrides just those keys.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_loop._attempters.cmd import DEFAULT_TIMEOUT, CmdAttempter
from reference_loop.errors import LoopUsageError


@dataclass(frozen=True)
class AgentPreset:
    """How to run one agent CLI as an attempter."""

    name: str
    program: str  # looked up on PATH
    package: str  # where to get it (npm)
    tested: str  # the version the wire tests run and the docs name
    args: tuple[str, ...]  # headless, edits allowed; the prompt comes on stdin
    model_flag: str
    env: Mapping[str, str] = field(default_factory=dict)  # telemetry and update checks off
    trailer: tuple[str, ...] = ()  # what must stay last (extra flags go before it)
    # A settings file the CLI reads through an environment variable: (variable, default path of
    # the file it would otherwise read, the keys to override in it).
    settings: tuple[str, str, Mapping[str, Any]] | None = None
    # Where the CLI keeps its state ("$VAR|fallback"), and the files of it (config, credentials,
    # user instructions) it must see: under --sandbox the folder is private scratch showing only
    # those, read-only, so nothing an attempt writes there outlives it.
    state: tuple[str, tuple[str, ...]] | None = None

    def argv(self, model: str | None, extra: Sequence[str]) -> list[str]:
        model_args = [self.model_flag, model] if model else []
        return [self.program, *self.args, *model_args, *extra, *self.trailer]


PRESETS: dict[str, AgentPreset] = {
    preset.name: preset
    for preset in (
        AgentPreset(
            name="claude",
            program="claude",
            package="@anthropic-ai/claude-code",
            tested="2.1.332",
            args=(
                "-p",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash,Edit,Write,MultiEdit,NotebookEdit,Read,Glob,Grep",
            ),
            model_flag="--model",
            state=(
                "$CLAUDE_CONFIG_DIR|~/.claude",
                ("settings.json", ".credentials.json", "CLAUDE.md"),
            ),
            env={
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
            },
        ),
        AgentPreset(
            name="codex",
            program="codex",
            package="@openai/codex",
            tested="0.171.0",
            args=(
                "exec",
                "--dangerously-bypass-approvals-and-sandbox",
                "--skip-git-repo-check",
                "--ephemeral",
                "--color",
                "never",
                "-c",
                "check_for_update_on_startup=false",
                "-c",
                "analytics.enabled=false",
            ),
            model_flag="--model",
            trailer=("-",),
            state=("$CODEX_HOME|~/.codex", ("config.toml", "auth.json", "AGENTS.md")),
        ),
        AgentPreset(
            name="gemini",
            program="gemini",
            package="@google/gemini-cli",
            tested="0.61.0",
            args=("--approval-mode", "yolo", "--skip-trust", "--output-format", "text"),
            model_flag="--model",
            env={"GEMINI_TELEMETRY_ENABLED": "false"},
            state=(
                "$GEMINI_CLI_HOME/.gemini|~/.gemini",
                ("settings.json", "oauth_creds.json", "google_accounts.json", ".env", "GEMINI.md"),
            ),
            settings=(
                "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
                "/etc/gemini-cli/settings.json",
                {
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                    "telemetry": {"enabled": False},
                },
            ),
        ),
    )
}


def is_preset(spec: str) -> bool:
    """Whether an attempter spec names an agent preset (``claude``, ``claude:MODEL``, ...)."""
    kind, sep, arg = spec.partition(":")
    return kind in PRESETS and (bool(arg) or not sep)


def _merged(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _settings_layer(preset: AgentPreset) -> tuple[dict[str, str], dict[str, str]]:
    """(env, files) that put the preset's settings over the machine's own settings file."""
    if preset.settings is None:
        return {}, {}
    variable, default, keys = preset.settings
    current = Path(os.environ.get(variable) or default)
    base: Any = {}
    if current.is_file():
        try:
            base = json.loads(current.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LoopUsageError(f"{preset.name}: cannot read {current}: {exc}") from None
    if not isinstance(base, dict):
        raise LoopUsageError(f"{preset.name}: {current} is not a JSON object")
    name = f"{preset.name}-settings.json"
    return {variable: "{attempt_dir}/" + name}, {name: json.dumps(_merged(base, keys), indent=2)}


def make_preset_attempter(
    name: str,
    *,
    model: str | None = None,
    agent_args: Sequence[str] = (),
    seed: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
) -> CmdAttempter:
    """The ``cmd:`` attempter that runs the agent CLI ``name`` (a key of :data:`PRESETS`).

    Args:
        name: claude, codex or gemini.
        model: passed with the CLI's model flag; None leaves the CLI's own default.
        agent_args: more flags for the CLI, after the preset's own.
        seed: the run's seed (the CLI sees it as REFERENCE_LOOP_SEED).
        timeout: seconds for one attempt.

    Returns:
        A CmdAttempter named after the preset (``claude``, or ``claude:MODEL``).

    Raises:
        LoopUsageError: an unknown preset, or its program is not on PATH.
    """
    preset = PRESETS.get(name)
    if preset is None:
        raise LoopUsageError(f"unknown agent preset {name!r} (expected {', '.join(PRESETS)})")
    if shutil.which(preset.program) is None:
        raise LoopUsageError(
            f"{name}: {preset.program} is not on PATH (npm install -g "
            f"{preset.package}@{preset.tested}; the preset was tested with {preset.tested})"
        )
    env, files = _settings_layer(preset)
    return CmdAttempter(
        preset.argv(model, agent_args),
        timeout=timeout,
        seed=seed,
        env={**preset.env, **env},
        files=files,
        scratch=(preset.state,) if preset.state else (),
        name=f"{name}:{model}" if model else name,
    )
