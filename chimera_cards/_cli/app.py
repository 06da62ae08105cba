"""The ``chimera-cards`` group: its commands by job, each loaded only when it runs.

Each area keeps its commands in its own module (``_cli/lint.py``, ``_cli/store.py``,
``_cli/review.py``); ``SECTIONS`` says where each lives and where ``--help`` lists it. To add a
command, add its row there and run ``python tools/derive_cli.py`` (the help the group shows
before loading a command is derived from the command itself; a test fails when it is stale).
Commands from other packages come in through the ``chimera_cards.commands`` entry points
(``reference-loop`` registers ``demo`` there), so this package never imports them.
"""

from __future__ import annotations

import click

from chimera_cards import __version__
from chimera_cards._cli import derived
from chimera_cards._cli.group import ChimeraGroup

_LINT, _SCAN, _STORE, _REVIEW, _INSTALL, _UPDATE, _RUNTIME = (
    f"chimera_cards._cli.{m}"
    for m in ("lint", "scan", "store", "review", "install", "update", "runtime")
)

# (title, ((command, "module:attribute"), ...)) in the order of the work; a name without a
# target is a plugin's command (``demo``), placed here when it is installed.
SECTIONS: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...] = (
    ("Try it", (("demo", None),)),
    (
        "Inspect skills",
        (
            ("lint", f"{_LINT}:lint"),
            ("scan", f"{_SCAN}:scan_cmd"),
            ("scanner", f"{_SCAN}:scanner_group"),
            ("hash", f"{_LINT}:hash_"),
        ),
    ),
    (
        "Store",
        (
            ("import", f"{_STORE}:import_cmd"),
            ("list", f"{_STORE}:list_cmd"),
            ("show", f"{_STORE}:show_cmd"),
            ("export", f"{_STORE}:export_cmd"),
            ("lock", f"{_STORE}:lock_cmd"),
            ("verify", f"{_STORE}:verify_cmd"),
            ("audit", f"{_STORE}:audit_cmd"),
        ),
    ),
    (
        "Review",
        (
            ("review", f"{_REVIEW}:review_cmd"),
            ("approve", f"{_REVIEW}:approve_cmd"),
            ("reject", f"{_REVIEW}:reject_cmd"),
            ("retire", f"{_REVIEW}:retire_cmd"),
            ("keys", f"{_REVIEW}:keys_group"),
            ("trust", f"{_REVIEW}:trust_group"),
        ),
    ),
    (
        "Install",
        (
            ("install", f"{_INSTALL}:install_cmd"),
            ("check", f"{_INSTALL}:check_cmd"),
            ("sync", f"{_INSTALL}:sync_cmd"),
            ("uninstall", f"{_INSTALL}:uninstall_cmd"),
            ("adopt", f"{_INSTALL}:adopt_cmd"),
            ("outdated", f"{_UPDATE}:outdated_cmd"),
            ("update", f"{_UPDATE}:update_cmd"),
            ("agents", f"{_INSTALL}:agents_cmd"),
            ("path", f"{_INSTALL}:path_cmd"),
        ),
    ),
    (
        "Use approved skills",
        (
            ("match", f"{_REVIEW}:match_cmd"),
            ("prompt", f"{_RUNTIME}:prompt_cmd"),
            ("serve", f"{_RUNTIME}:serve_cmd"),
            ("exec", f"{_RUNTIME}:exec_cmd"),
            ("hook", f"{_RUNTIME}:hook_group"),
        ),
    ),
)


@click.group(
    cls=ChimeraGroup,
    sections=SECTIONS,
    short_help=derived.SHORT_HELP,
    plugins=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="chimera-cards")
def main() -> None:
    """Skill cards as dependencies: lint, hash, import, review, approve, install, serve."""
