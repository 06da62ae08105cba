"""``--json`` on every command that prints a result, and ``keys list``: what the README promises.

The one command without it, ``serve``, prints no result (it serves until stopped); a hook run
answers the agent in the agent's own JSON, so ``hook claude --json`` goes with ``--install``.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from chimera_cards._cli import derived
from chimera_cards._cli.app import main
from reference_loop._cli import derived as loop_derived

# Commands that print no result of their own, and why (the README says the same).
WITHOUT_JSON = {("chimera-cards", "serve")}


def _leaf_screens():
    for prog, module in (("chimera-cards", derived), ("reference-loop", loop_derived)):
        for path, (_names, screen, hidden) in module.HELP.items():
            if path and not hidden and "\nCommands:\n" not in screen and "COMMAND" not in screen:
                yield prog, path, screen


def test_every_command_that_prints_a_result_takes_json():
    missing = {(prog, path) for prog, path, screen in _leaf_screens() if "  --json " not in screen}
    assert missing == WITHOUT_JSON


def run(*args: object) -> dict | list:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_path_json_names_the_store_and_whether_it_exists(home):
    assert run("path", "--json") == {"store": str(home / "cc" / "cards.db"), "exists": False}
    found = run("path", "--agent", "claude", "--json")
    assert found == {"agent": "claude", "global": False, "skills": str(home / ".claude/skills")}


def test_keys_list_names_each_key_and_whether_the_store_trusts_it(home):
    made = run("keys", "generate", "alice", "--json")
    store = home / "cc" / "cards.db"
    assert run("keys", "list", "--json") == [
        {
            "name": "alice",
            "keyid": made["keyid"],
            "keyfile": made["keyfile"],
            "public_key": made["public_key"],
            "trusted_as": "alice",
        }
    ]
    run("trust", "remove", "alice", "--store", store, "--json")
    assert [k["trusted_as"] for k in run("keys", "list", "--json")] == [None]
    text = CliRunner().invoke(main, ["keys", "list"]).stdout
    assert text.split("\t")[:3] == ["alice", made["keyid"], "not trusted"]


def test_trust_export_and_scanner_remove_print_json(home):
    run("keys", "generate", "alice", "--json")
    exported = run("trust", "export", home / "team.trust", "--json")
    assert exported["path"] == str(home / "team.trust") and exported["threshold"] == 1
    assert [k["name"] for k in exported["keys"]] == ["alice"]
    run("scanner", "set", "mine", "--command", "tool {dir}", "--json")
    assert run("scanner", "remove", "mine", "--json") == {"removed": "mine"}


def test_hook_install_prints_json_and_a_hook_run_refuses_it(home):
    written = run("hook", "claude", "--install", "--json")
    assert written["settings"] == ".claude/settings.json" and written["added"]
    assert run("hook", "claude", "--install", "--json")["added"] == []
    result = CliRunner().invoke(main, ["hook", "claude", "--json"], input="{}")
    assert result.exit_code == 2 and "--json goes with --install" in result.stderr
