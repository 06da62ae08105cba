"""What a new user ran into, walking the README and docs with other inputs than the ones shown:
each rough edge is a test named after what it defends (one `error:` line, the right exit code,
nothing stored), on the real commands in this process."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading

import click
import pytest
from conftest import dump_store, make_card, run_cli

from chimera_cards._cli.app import main as cards_main
from reference_loop._cli.app import main as loop_main


@pytest.fixture
def pending(home):
    """A store holding one tainted, pending card and a trusted key named alice."""
    make_card(home, "flaky")
    run_cli("import", home / "flaky", "--taint")
    run_cli("keys", "generate", "alice")
    return home / "cc" / "cards.db"


def _one_error_line(result, code: int) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == "" and result.stderr.startswith("error: "), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("verb", [["approve"], ["reject", "--reason", "no"]])
def test_a_decision_without_a_digest_is_a_usage_error_and_signs_nothing(pending, verb):
    before = dump_store(pending)
    result = run_cli(*verb[:1], "flaky", "--key", "alice", *verb[1:], ok=False)
    assert "Missing option '--digest'" in _one_error_line(result, 2)
    assert dump_store(pending) == before


def _commands(group: click.Group, ctx: click.Context, path: str = ""):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        yield f"{path} {name}".strip(), command
        if isinstance(command, click.Group):
            yield from _commands(command, ctx, f"{path} {name}")


def test_every_option_the_help_calls_required_is_refused_when_missing():
    # An option with an explicit default of None counts as given in click >= 8.3: help says
    # [required] and the command ran on without it (a traceback, or worse, a default).
    unenforced = []
    for root, prog in ((cards_main, "chimera-cards"), (loop_main, "reference-loop")):
        ctx = click.Context(root, info_name=prog)
        for path, command in _commands(root, ctx):
            sub = click.Context(command, info_name=path, parent=ctx)
            for param in command.params:
                if not (isinstance(param, click.Option) and param.required):
                    continue
                value, _ = param.consume_value(sub, {})
                try:
                    param.process_value(sub, value)
                except click.MissingParameter:
                    continue
                unenforced.append(f"{path} {param.opts[0]}")
    assert unenforced == []


def test_retiring_a_card_the_store_lacks_names_the_card(pending):
    before = dump_store(pending)
    result = run_cli("retire", "nosuch", ok=False)
    assert "no card named 'nosuch'" in _one_error_line(result, 1)
    assert dump_store(pending) == before


def test_an_empty_source_is_a_usage_error_not_an_import_of_this_folder(home):
    make_card(home, "here")  # the current folder holds a skill: "" must not mean "."
    result = run_cli("import", "", ok=False)
    assert "SOURCE is empty" in _one_error_line(result, 2)
    assert not (home / "cc" / "cards.db").exists()


def test_a_git_source_nobody_answers_is_named_at_the_start_of_its_error_line(home):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = f"http://127.0.0.1:{port}/team/skills.git"
    result = run_cli("import", source, ok=False)
    assert _one_error_line(result, 1).startswith(f"error: {source}: ")
    assert run_cli("list", "--json").stdout.strip() == "[]"


def _named(value, key: str) -> list:
    """Every value stored under ``key`` anywhere in a JSON document."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k == key]
        return found + [x for v in value.values() for x in _named(v, key)]
    if isinstance(value, list):
        return [x for v in value for x in _named(v, key)]
    return []


def test_no_json_output_calls_the_bundle_digest_sha256(pending):
    # One name per thing: the bundle digest is `digest`; a `sha256` is one file's own hash.
    def out(*args: object):
        return json.loads(run_cli(*args, "--json").stdout)

    outputs = {"review": out("review"), "review NAME": out("review", "flaky")}
    digest = outputs["review NAME"]["digest"]
    outputs["approve"] = out("approve", "flaky", "--key", "alice", "--digest", digest)
    for args in (["list"], ["show", "flaky"], ["audit"], ["match", "flaky"], ["import", "flaky"]):
        outputs[" ".join(args)] = out(*args)
    misnamed = {
        command: [key for key in ("sha256", "skill_sha256") if digest in _named(o, key)]
        for command, o in outputs.items()
    }
    assert misnamed == {command: [] for command in outputs}
    assert all(digest in _named(o, "digest") for o in outputs.values() if o)


def test_a_trust_file_exported_into_a_named_pipe_reaches_its_reader_and_the_pipe_stays(pending):
    fifo = pending.parent / "trust.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run_cli("trust", "export", fifo, ok=False)
    reader.join(timeout=30)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # not renamed over by a regular file
    assert b"alice ed25519 " in got[0]


def test_a_lockfile_written_to_dev_fd_lands_after_what_the_descriptor_already_holds(pending):
    out = pending.parent / "out.txt"
    out.write_text("kept\n")
    fd = os.open(out, os.O_WRONLY | os.O_APPEND)
    try:
        run_cli("lock", "-o", f"/dev/fd/{fd}")
    finally:
        os.close(fd)
    lines = out.read_text().splitlines()
    assert lines[0] == "kept" and lines[1].startswith("# chimera-cards lockfile")


def test_check_in_a_subfolder_of_the_project_names_the_agent_folder_above_it(home, monkeypatch):
    make_card(home / ".claude" / "skills", "flaky")
    (home / "docs").mkdir()
    monkeypatch.chdir(home / "docs")
    result = run_cli("check", "--agent", "claude", ok=False)
    line = _one_error_line(result, 1)
    assert f"no skill folders in {home}/docs/.claude/skills" in line
    assert f"{home}/.claude/skills has some: run check from {home}" in line
    assert not (home / "docs" / ".claude").exists()
