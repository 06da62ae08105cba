"""Agent and editor configuration a skill ships: MCP server lists (``.mcp.json``, VS Code's
``mcp.json``), Claude Code settings (hooks, ``env``, helper commands) and VS Code tasks.

Copied into a project or a home folder, such a file makes the agent or the editor run its
commands and send its traffic without asking again, so it is read by what it contains, whatever
it is named: the commands it runs (as shell, line for line with the file), an MCP server it
connects to that is handed the user's secrets, and an API base URL that redirects the requests
(and the key they carry) of a service the user has a key for.
"""

from __future__ import annotations

import json
import re

from chimera_cards._scan.findings import Finding
from chimera_cards._scan.sensitive import _loopback, host_of, is_secret_name, own_api

_MARKERS = ('"mcpServers"', '"servers"', '"hooks"', '"tasks"', '"env"', '"apiKeyHelper"',
            '"statusLine"', '"awsAuthRefresh"', '"awsCredentialExport"',
            '"otelHeadersHelper"')  # fmt: skip
MAX_CONFIG = 262_144
# Claude Code settings whose values are commands it runs (for a key, credentials, a status line).
_HELPER_KEYS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")
_URL_RE = re.compile(r"(?:https?|wss?)://[^\s\"'<>]+")
# ${NAME}, $NAME, ${env:NAME} (VS Code), {env:NAME}: a variable the server is handed.
_VARIABLE_RE = re.compile(r"\$\{(?:env:)?([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)|\{env:([A-Za-z_]\w*)\}")
# A service's API address in the environment (ANTHROPIC_BASE_URL, OPENAI_API_BASE): its client
# sends every request, and the key with it, there.
# Model APIs whose SDKs read both the key and the base URL from the environment.
_KEYED_CLIENTS = frozenset({"ANTHROPIC", "OPENAI", "GEMINI", "MISTRAL", "COHERE", "GROQ",
                            "DEEPSEEK", "XAI"})  # fmt: skip
_BASE_URL_RE = re.compile(
    r"^([A-Z][A-Z0-9]*)_(?:BASE_URL|API_BASE(?:_URL)?|API_URL|API_HOST|ENDPOINT)$"
)


def read_agent_config(path: str, text: str) -> dict | None:
    """The parsed configuration when a JSON file is an agent's or an editor's configuration
    (MCP servers, hooks, tasks, settings with an ``env`` block or helper commands); else None."""
    if not path.lower().endswith((".json", ".jsonc")) or len(text) > MAX_CONFIG:
        return None
    if not any(marker in text for marker in _MARKERS):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if _servers(data) or isinstance(data.get("hooks"), dict) or _tasks(data):
        return data
    if isinstance(data.get("env"), dict) or any(isinstance(data.get(k), str) for k in _HELPER_KEYS):
        return data
    return None


def _servers(data: dict) -> dict:
    found = {}
    nested = data.get("mcp")
    for holder in (data, nested if isinstance(nested, dict) else {}):
        for key in ("mcpServers", "servers"):
            value = holder.get(key)
            if isinstance(value, dict):
                found.update(
                    {
                        n: s
                        for n, s in value.items()
                        if isinstance(s, dict) and ("command" in s or "url" in s)
                    }
                )
    return found


def _tasks(data: dict) -> list[dict]:
    # VS Code's tasks.json (a schema version and labelled tasks), not any list named "tasks".
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or "version" not in data:
        return []
    return [
        t
        for t in tasks
        if isinstance(t, dict) and isinstance(t.get("command"), str) and "label" in t
    ]


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [
            w if isinstance(w, str) else str(w.get("value", ""))
            for w in value
            if isinstance(w, (str, dict))
        ]
    return []


def _quote(word: str) -> str:
    # Single quotes keep ${VAR} as written for the reader; a word with spaces stays one word.
    return (
        word if re.fullmatch(r"[\w@%+=:,./${}-]+", word) else "'" + word.replace("'", "'\\''") + "'"
    )


def _commands(data: dict) -> list[str]:
    commands: list[str] = []

    def hooks(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "command" and isinstance(value, str):
                    commands.append(value)
                else:
                    hooks(value)
        elif isinstance(node, list):
            for item in node:
                hooks(item)

    hooks(data.get("hooks"))
    hooks(data.get("statusLine"))
    commands += [data[k] for k in _HELPER_KEYS if isinstance(data.get(k), str)]
    for task in _tasks(data):
        commands.append(" ".join([task["command"], *map(_quote, _words(task.get("args")))]))
    for server in _servers(data).values():
        if isinstance(server.get("command"), str):
            commands.append(" ".join([server["command"], *map(_quote, _words(server.get("args")))]))
    return commands


def _line_of(text: str, value: str) -> int:
    needle = json.dumps(value)[1:41]
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def config_shell(data: dict, text: str) -> str | None:
    """The commands the configuration runs, each on the line of the file it is written on."""
    lines = [""] * (text.count("\n") + 1)
    for command in _commands(data):
        row = _line_of(text, command.split(" ", 1)[0] if command.startswith("npx") else command) - 1
        one = command.replace("\n", "; ")
        lines[row] = (lines[row] + "; " if lines[row] else "") + one
    return "\n".join(lines) if any(lines) else None


def _handed(server: dict) -> set[str]:
    """The secret-named variables a server is given: in its env, headers or arguments."""
    names: set[str] = set()
    for key in ("env", "headers"):
        block = server.get(key)
        if isinstance(block, dict):
            names |= {k for k in block if isinstance(k, str) and is_secret_name(k)}
            for value in block.values():
                names |= _variables(str(value))
    for word in _words(server.get("args")) + _words(server.get("url")):
        names |= _variables(word)
    return {n for n in names if is_secret_name(n)}


def _variables(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _VARIABLE_RE.finditer(text)}


def config_findings(path: str, data: dict, text: str) -> list[Finding]:
    """Secrets the configuration hands to someone else's server: an MCP server at another
    service's address given the user's tokens, an API base URL moved off the service."""
    out = []
    for name, server in _servers(data).items():
        urls = _words(server.get("url")) + [
            u for w in _words(server.get("args")) for u in _URL_RE.findall(w)
        ]
        for url in urls:
            host = host_of(url)
            if host is None or _loopback(host):
                continue
            given = sorted(n for n in _handed(server) if not own_api(n, host))
            if given:
                out.append(
                    Finding(
                        "secret-exfiltration",
                        "error",
                        f"MCP server {name!r} connects to {host} and is handed {', '.join(given)}",
                        _line_of(text, url),
                        path,
                    )
                )
                break
    for block in [data.get("env"), *(s.get("env") for s in _servers(data).values())]:
        if isinstance(block, dict):
            out += _redirects(path, block, text)
    return out


def _redirects(path: str, env: dict, text: str) -> list[Finding]:
    keys = [str(k) for k in env]
    out = []
    for key, value in env.items():
        what = redirect(str(key), str(value), keys)
        if what is not None:
            out.append(
                Finding("secret-exfiltration", "error", what, _line_of(text, str(value)), path)
            )
    return out


def redirect(key: str, value: str, keys: list[str]) -> str | None:
    """What setting ``key`` to ``value`` does when it moves a service's API address (its
    ``*_BASE_URL``) to a host that is not the service's, with no key of its own for that
    host among ``keys`` (the variables set beside it): the user's key goes there. Else None."""
    match = _BASE_URL_RE.match(key)
    host = host_of(value.strip("'\"")) if match else None
    if match is None or host is None or _loopback(host):
        return None
    service = match.group(1)
    if service not in _KEYED_CLIENTS:
        return None  # a tool's own address setting (DEEPAGENTS_BASE_URL) carries no user key
    # A gateway given its own key in the same block is the user's choice of provider: a key
    # named for the service, however the provider prefixes it (AZURE_OPENAI_API_KEY).
    if own_api(f"{service}_API_KEY", host) or any(
        service in k.split("_") and is_secret_name(k) for k in keys
    ):
        return None
    return f"sets {key} to {host}: every {service.title()} request, with the user's key, goes there"
