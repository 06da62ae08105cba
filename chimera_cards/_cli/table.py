"""The ``chimera-cards`` command table, without click: read by the group and by plain ``--help``.

Each row is (name, ``"module:attribute"``, the first line of its docstring); a test checks the
rows against the commands themselves. Nothing here imports anything but the standard library.
"""

from __future__ import annotations

PROG = "chimera-cards"
GROUP_HELP = "Skill cards as dependencies: lint, hash, import, review, approve, retrieve."
# The group's own options as click's help lists them.
OPTION_ROWS = (
    ("--version", "Show the version and exit."),
    ("-h, --help", "Show this message and exit."),
)

_LINT, _STORE, _REVIEW, _INSTALL, _UPDATE, _RUNTIME = (
    "chimera_cards._cli.lint",
    "chimera_cards._cli.store",
    "chimera_cards._cli.review",
    "chimera_cards._cli.install",
    "chimera_cards._cli.update",
    "chimera_cards._cli.runtime",
)

COMMAND_TABLE: tuple[tuple[str, str, str], ...] = (
    (
        "lint",
        f"{_LINT}:lint",
        "Lint skills: a SKILL.md file (the card alone), a skill folder, or a folder of them.",
    ),
    (
        "scan",
        "chimera_cards._cli.scan:scan_cmd",
        "Scan skills with our scan and any other scanners that write SARIF.",
    ),
    (
        "scanner",
        "chimera_cards._cli.scan:scanner_group",
        "Other scanners (any command that writes SARIF) that scan and import can run.",
    ),
    (
        "hash",
        f"{_LINT}:hash_",
        "Print each skill's SKILL.md SHA-256 (hex, SRI) and its bundle digest over every file.",
    ),
    (
        "import",
        f"{_STORE}:import_cmd",
        "Import SOURCE: skill folders, an archive, a git repository, or a URL.",
    ),
    (
        "lock",
        f"{_STORE}:lock_cmd",
        "Write a lockfile pinning every active skill to its bundle digest (every file).",
    ),
    (
        "list",
        f"{_STORE}:list_cmd",
        "List every stored version (name, status, provenance, hash, import time, origin).",
    ),
    (
        "show",
        f"{_STORE}:show_cmd",
        "Show one card version: metadata, origin, findings, and the history of its versions.",
    ),
    (
        "export",
        f"{_STORE}:export_cmd",
        "Write a skill's whole folder byte-identical, exec bits kept, plus approvals.jsonl.",
    ),
    (
        "audit",
        f"{_STORE}:audit_cmd",
        "Print the append-only audit log (each entry holds the hash of the one before it).",
    ),
    (
        "verify",
        f"{_STORE}:verify_cmd",
        "Re-hash every blob, check every version against the audit log, walk the hash chain.",
    ),
    ("keys", f"{_REVIEW}:keys_group", "Reviewer signing keys (Ed25519)."),
    (
        "trust",
        f"{_REVIEW}:trust_group",
        "The store's trust list of reviewer keys, and how many must approve (threshold).",
    ),
    (
        "review",
        f"{_REVIEW}:review_cmd",
        "The queue of pending versions, or (NAME) everything needed to decide on one.",
    ),
    (
        "approve",
        f"{_REVIEW}:approve_cmd",
        "Sign an approval of NAME's version with this digest.",
    ),
    (
        "reject",
        f"{_REVIEW}:reject_cmd",
        "Sign a rejection: the version (and any later import of the same bytes) stays rejected.",
    ),
    ("retire", f"{_REVIEW}:retire_cmd", "Withdraw a version from use."),
    (
        "match",
        f"{_REVIEW}:match_cmd",
        "Approved cards for QUERY (one or more words), ready for a prompt.",
    ),
    (
        "install",
        f"{_INSTALL}:install_cmd",
        "Write each NAME's approved bundle, byte for byte, into an agent's skills folder.",
    ),
    (
        "uninstall",
        f"{_INSTALL}:uninstall_cmd",
        "Remove skill folders (and links) this tool installed; a link's target is left alone.",
    ),
    (
        "adopt",
        f"{_INSTALL}:adopt_cmd",
        "Import every skill a project's agent folders hold, as npx skills left them.",
    ),
    (
        "check",
        f"{_INSTALL}:check_cmd",
        "One line per skill folder: ok, modified (naming files), revoked, unknown or missing.",
    ),
    (
        "sync",
        f"{_INSTALL}:sync_cmd",
        "Make a skills folder equal to the approved set: NAMEs, a --lockfile, or every usable "
        "skill.",
    ),
    (
        "update",
        f"{_UPDATE}:update_cmd",
        "Re-fetch each skill (default: all) from its recorded origin and import what changed.",
    ),
    (
        "outdated",
        f"{_UPDATE}:outdated_cmd",
        "List the skills (default: all) whose origin now holds bytes the store does not have.",
    ),
    (
        "agents",
        f"{_INSTALL}:agents_cmd",
        "List the agents this tool can install for, with their project and user skill folders.",
    ),
    (
        "serve",
        f"{_RUNTIME}:serve_cmd",
        "Serve approved skills to agents: only versions that verify now, re-hashed on every read.",
    ),
    (
        "hook",
        f"{_RUNTIME}:hook_group",
        "The commands agents' hooks run before a skill loads (Claude Code, Gemini CLI).",
    ),
    (
        "exec",
        f"{_RUNTIME}:exec_cmd",
        "Start an agent (exec -- COMMAND) seeing only skills check calls ok; the rest hidden.",
    ),
    (
        "prompt",
        f"{_RUNTIME}:prompt_cmd",
        "Print <available_skills> for every installed skill whose bytes check calls ok.",
    ),
    (
        "path",
        f"{_INSTALL}:path_cmd",
        "Print where the store lives (or, with --agent, where that agent reads skills).",
    ),
)
