"""The detection pass's policy: the rule table (``DETECT_RULES``) and the grading of what one
file's code does (its sends, reads, decoded or downloaded data run, reverse shells,
persistence, security controls switched off, package indexes written) into findings. What is
plainly hostile is an ``error`` whatever the file; a send or an install from an unreviewed place
is a ``warning`` naming where; documentation showing the user a command is ``info`` unless it
ships secrets."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chimera_cards._scan.buildfiles import (
    INDEX_RULE,
    WRITTEN_INDEX_KINDS,
    build_kind,
    index_settings,
    index_severity,
    source_severity,
)
from chimera_cards._scan.commands import command_findings, path_persistence
from chimera_cards._scan.endpoints import DocumentedEndpoints
from chimera_cards._scan.findings import Finding
from chimera_cards._scan.generic import GenericFacts
from chimera_cards._scan.jsflow import JsFacts
from chimera_cards._scan.pyfacts import PyFacts
from chimera_cards._scan.sensitive import Send, Taint, send_severity, service_name
from chimera_cards._scan.shellfacts import ShellFacts
from chimera_cards._scan.textruns import led

DETECT_RULES: dict[str, str] = {
    "secret-exfiltration": (
        "Sensitive data (secrets, credential stores, the environment) reaches the network, "
        "the clipboard or a file outside the skill."
    ),
    "network-send": (
        "Data sent over the network, naming the host (info when a token goes to the API it is for)."
    ),
    "credential-access": (
        "Code reads a credential file or store (SSH, cloud, package-manager tokens, "
        "browsers, wallets, keychains)."
    ),
    "decode-exec": (
        "Decoded or deobfuscated data run as code (base64 -d | sh, exec(b64decode(...)))."
    ),
    "download-exec": "Downloaded content run as code (saved, then run).",
    "reverse-shell": "A shell wired to a network connection.",
    "remote-install": (
        "A package installed from an unreviewed place (a URL, an unknown index, an unpinned npx)."
    ),
    INDEX_RULE: (
        "Installs sent to an index or registry other than the public ones, for good (.npmrc, "
        "pip.conf, a requirements file's --extra-index-url, npm config set registry)."
    ),
    "persistence": (
        "Something set to start by itself (cron, shell rc files, launch agents, systemd, git "
        "hooks)."
    ),
    "security-disable": (
        "A security control switched off (firewall, antivirus, TLS checks, hooks, chmod 777)."
    ),
    "confusable-command": "Look-alike letters from another script inside a command.",
    "sql-from-input": "An SQL statement built by string formatting and run (injection).",
    "unreadable-code": "Code nested deeper than the scan follows: what it does is unknown.",
    "resource-exhaustion": "An endless loop, a fork bomb, or an allocation of tens of millions.",
    "prose-credential-exfiltration": "Instructions to send or back up credentials or secrets.",
    "prose-concealment": "Instructions to hide what is done from the user.",
    "prose-precedence": "Instructions claiming precedence over the user or the system.",
    "prose-tool-restrictions": (
        "Instructions to set tool restrictions, permissions or confirmations aside."
    ),
    "prose-security-disable": "Instructions to switch a security control off.",
    "prose-persistence": "Instructions to install something that starts by itself.",
    "prose-secret-disclosure": "Instructions to repeat a secret of the user's into the reply.",
    "prose-runaway-tool": "Instructions to call a tool without end until a secret turns up.",
    "code-in-data": (
        "A JSON or YAML value holding code that starts processes (a payload for whatever "
        "evaluates the value)."
    ),
    "path-from-input": (
        "A file opened at a path a caller's argument extends, with nothing keeping it inside "
        "its folder (path traversal)."
    ),
}


_MARKDOWN = (".md", ".markdown", ".mdx", ".mdc")  # .mdc: Cursor rule files


@dataclass
class _Unit:
    """One file as the detection pass reads it: the facts of its code and its own findings."""

    path: str
    documentation: bool
    # A build that runs inside a container image (a Dockerfile): what it downloads and runs
    # stays in the image; what it sends out does not.
    container: bool = False
    shell: ShellFacts = field(default_factory=ShellFacts)
    python: list[PyFacts] = field(default_factory=list)
    js: list[JsFacts] = field(default_factory=list)
    generic: list[GenericFacts] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    inline_lines: set[int] = field(default_factory=set)  # lines of inline commands (mentions)
    # Lines of blocks the prose before them presents as examples for the user to run.
    example_lines: set[int] = field(default_factory=set)
    # Lines of blocks that provision a machine image (a Packer or Terraform provisioner that
    # runs on the machine being built): as in a Dockerfile, what they download and run, and
    # the protections they relax, stay in that image.
    image_lines: set[int] = field(default_factory=set)
    # Lines of JavaScript/TypeScript blocks in Markdown: app code the skill shows how to write
    # (a component's fetch), not a command the agent runs; a plain data send there is listed.
    app_lines: set[int] = field(default_factory=set)


def _names(taints: set[Taint]) -> str:
    return ", ".join(sorted({t.what for t in taints}))[:120]


def _grade(unit: _Unit, documented: DocumentedEndpoints) -> list[Finding]:
    out = list(unit.findings)
    sends: list[Send] = list(unit.shell.sends)
    reads = list(unit.shell.reads)
    decode = list(unit.shell.decode_exec)
    download = list(unit.shell.download_exec)
    reverse = list(unit.shell.reverse_shell)
    persistence: list[tuple[int, str, str]] = []
    security_off: list[tuple[int, str]] = []
    for generic in unit.generic:
        sends += generic.sends
        reads += generic.reads
        decode += generic.decode_exec
        download += generic.download_exec
        security_off += generic.security_off
    code: list[PyFacts | JsFacts] = [*unit.python, *unit.js]
    for facts in code:
        sends += facts.sends + facts.shell.sends
        reads += facts.reads + facts.shell.reads
        decode += facts.decode_exec + facts.shell.decode_exec
        download += facts.download_exec + facts.shell.download_exec
        reverse += facts.reverse_shell + facts.shell.reverse_shell
        persistence += facts.persistence
    commands = list(unit.shell.commands)
    writes = list(unit.shell.writes)
    for facts in code:
        commands += facts.shell.commands
        writes += facts.shell.writes
    path = unit.path
    shipped = False
    for send in sends:
        graded = send_severity(
            send,
            documentation=unit.documentation
            or send.line in unit.example_lines
            or send.line in unit.app_lines,
            documented=documented,
        )
        if graded is None:
            continue
        rule, severity, message = graded
        shipped = shipped or rule == "secret-exfiltration"
        out.append(Finding(rule, severity, message, send.line, path))
    for line, where, content, text in writes:
        out += _written_index(path, line, where, text)
        persisted = path_persistence(where)
        if persisted:
            # What starts by itself and talks to the network (or is a key for someone else)
            # is a backdoor, not a convenience.
            calls_out = _CALLS_OUT_RE.search(text)
            severity = "error" if "authorized_keys" in persisted or calls_out else "warning"
            extra = f", and what it adds calls out ({calls_out.group(0)})" if calls_out else ""
            if (
                severity == "warning"
                and _RC_FILE_RE.search(where)
                and _PATH_APPEND_RE.fullmatch(text)
            ):
                # A folder added at the end of PATH: commands of its own are found there, no
                # command the user has is shadowed (a folder put first would shadow them).
                severity, extra = "info", ", a folder added at the end of PATH"
            out.append(
                Finding("persistence", severity, f"writes {persisted} ({where}){extra}", line, path)
            )
        if (
            content.taint
            and where.startswith(("/", "~", "$HOME", "${HOME}", "../"))
            and not where.startswith("/dev/")
        ):
            out.append(
                Finding(
                    "secret-exfiltration",
                    "error",
                    f"sensitive data ({_names(content.taint)}) written to {where}, outside "
                    f"the skill",
                    line,
                    path,
                )
            )
    secrets = [(line, name) for facts in unit.python for line, name in facts.env_reads]
    services = {service_name(name) for _, name in secrets}
    if len(services) >= 2 and not shipped:
        # Secrets of several services gathered in one place: what a harvester does first.
        names = ", ".join(sorted({name for _, name in secrets}))[:120]
        out.append(
            Finding(
                "credential-access",
                "warning",
                f"reads secrets of several services ({names})",
                secrets[0][0],
                path,
            )
        )
    if not shipped:
        for line, taint in reads:
            # A project's own .env read in place (a checker, a loader) is listed, not warned.
            # So is a process's own environment read in place.
            local = taint.what.lower().startswith(".env") or taint.kind == "env-all"
            out.append(
                Finding(
                    "credential-access",
                    "info" if local else "warning",
                    f"reads {taint.what}",
                    line,
                    path,
                )
            )
    if unit.shell.too_deep or any(f.too_deep for f in [*code, *unit.generic]):
        out.append(
            Finding(
                "unreadable-code",
                "error",
                "code nested deeper than the scan follows "
                "(hundreds of levels): what it does is unknown",
                None,
                path,
            )
        )
    for line, how in decode:
        severity = "warning" if line in unit.image_lines else "error"
        out.append(Finding("decode-exec", severity, f"runs decoded data ({how})", line, path))
    for line, how in download:
        # Saved first and run later is the same code nobody reviewed as a pipe into a shell; a
        # block the skill shows the user as an example to run is theirs to judge.
        shown = unit.documentation or line in unit.example_lines
        severity = "warning" if shown and not how.startswith("piped into") else "error"
        if unit.container or line in unit.image_lines:
            severity = "warning"
        out.append(Finding("download-exec", severity, f"runs downloaded code ({how})", line, path))
    for line, how in reverse:
        out.append(Finding("reverse-shell", "error", f"reverse shell: {how}", line, path))
    for facts in unit.python:
        for line, what in facts.sql:
            # In Markdown an example for the reader (often the "bad" one of a pair): no
            # program of the skill's runs it.
            shown = path.lower().endswith(_MARKDOWN)
            out.append(Finding("sql-from-input", "info" if shown else "warning", what, line, path))
        for line, what in facts.exhaustion:
            out.append(Finding("resource-exhaustion", "warning", what, line, path))
    for line, what in unit.shell.fork_bombs:
        out.append(Finding("resource-exhaustion", "error", f"fork bomb: {what}", line, path))
    for line, what, severity in persistence:
        out.append(Finding("persistence", severity, what, line, path))
    for line, what in security_off:
        severity = "warning" if line in unit.image_lines else "error"
        out.append(
            Finding("security-disable", severity, f"switches a protection off: {what}", line, path)
        )
    for found in command_findings(commands):
        severity = found.severity
        if (
            (unit.documentation or found.line in unit.example_lines)
            and found.rule in ("remote-install", "security-disable")
            and severity == "warning"
        ):
            severity = "info"
        if (
            (unit.documentation or found.line in unit.example_lines)
            and found.rule == INDEX_RULE
            and " for good" not in found.message
        ):
            severity = "info"  # a one-off install from an index, shown for the user to run
        if (
            found.line in unit.inline_lines
            and found.rule == "security-disable"
            and severity == "warning"
        ):
            severity = "info"  # a flag named in a sentence ("`--no-verify` skips the hooks")
        out.append(Finding(found.rule, severity, found.message, found.line, path))
    return out


# `echo 'export PATH="$PATH:$HOME/development/flutter/bin"'` (quotes removed as the shell reads
# them): only folders, named by literal paths and $HOME, after the current PATH.
_PATH_APPEND_RE = re.compile(
    r"(?:echo|printf)(?:\s+-[neE]+)?\s+(?:export\s+)?PATH=([\"']?)\$(?:PATH|\{PATH\})"
    r"(?::(?:\$HOME|\$\{HOME\}|~)?[\w./+-]*)+\1\s*"
)
_RC_FILE_RE = re.compile(
    r"(?:^|[/~])\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|kshrc)$"
)
_CALLS_OUT_RE = re.compile(
    led(
        "/Icfhinsw",
        r"\b(?:curl|wget|nc|ncat|socat|ssh|scp|fetch|Invoke-WebRequest|iwr)\b|/dev/tcp/|https?://",
    )
)


_ECHOED_RE = re.compile(r"^\s*(?:echo|printf)\s+(?:-[neE]+\s+)?")


def _written_index(path: str, line: int, where: str, text: str) -> list[Finding]:
    """An index or registry written into a config file by a command (``echo registry=… >>
    ~/.npmrc``, a heredoc into ``pip.conf``): installs sent elsewhere for good."""
    kind = build_kind(where)
    if kind not in WRITTEN_INDEX_KINDS or not text:
        return []
    body = "\n".join(_ECHOED_RE.sub("", t).strip("'\"") for t in text.split("\n"))
    return [
        Finding(f.rule, f.severity, f"{f.message} (written to {where})", line, path)
        for f in _index_findings(path, kind, body)
    ]


def _index_findings(path: str, kind: str, text: str) -> list[Finding]:
    out = []
    for setting in index_settings(kind, text):
        graded = (source_severity if kind == "system-source" else index_severity)(setting.url)
        if graded is None:
            continue
        severity, host = graded
        out.append(
            Finding(
                INDEX_RULE,
                severity,
                f"{setting.what} sends installs to {host} ({setting.url[:100]}), not a public "
                f"index",
                setting.line,
                path,
            )
        )
    return out
