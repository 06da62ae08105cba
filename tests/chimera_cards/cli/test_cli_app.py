"""The shape of the two packages and their commands: one-way imports, commands loaded only when
they run, plugins through an entry-point group, ``python -m``, ``__all__`` and one version."""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import chimera_cards
import reference_loop
from chimera_cards._cli.app import main
from chimera_cards._cli.entrypoints import PLUGIN_GROUP, plugin_entry_points

# What a command pulls in: none of it may load for `chimera-cards --help`.
HEAVY = ["markdown_it", "cryptography", "http.client", "sqlite3", "yaml"]


def _python(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def _loaded_after(code: str) -> set[str]:
    done = _python(
        textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_importing_every_chimera_cards_module_loads_no_reference_loop_module():
    loaded = _loaded_after(
        """
        import pkgutil, importlib, chimera_cards, chimera_cards._cli
        for info in pkgutil.walk_packages(chimera_cards.__path__, "chimera_cards."):
            importlib.import_module(info.name)
        import chimera_cards._cli.app
        """
    )
    assert "chimera_cards._cli.app" in loaded and "chimera_cards._store" in loaded
    assert not {m for m in loaded if m.split(".")[0] == "reference_loop"}


@pytest.mark.slow
def test_no_chimera_cards_module_names_reference_loop_in_an_import():
    root = Path(chimera_cards.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "reference_loop" for n in names):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


def test_help_imports_no_command_module_and_none_of_their_dependencies():
    loaded = _loaded_after(
        """
        from chimera_cards._cli.app import main
        try:
            main(["--help"], prog_name="chimera-cards")
        except SystemExit:
            pass
        """
    )
    assert "chimera_cards._cli.app" in loaded
    assert not loaded & {f"chimera_cards._cli.{m}" for m in ("lint", "store", "review")}
    assert not loaded & set(HEAVY)
    assert "reference_loop._cli.demo" not in loaded  # the plugin is listed, not loaded


def test_importing_the_packages_loads_none_of_their_modules():
    loaded = _loaded_after("import chimera_cards, reference_loop")
    assert not loaded & set(HEAVY)
    assert "chimera_cards._store" not in loaded and "reference_loop._run.loop" not in loaded


COMMANDS = dict(main.lazy)  # the built-in commands, before any plugin is looked up


def test_the_help_the_group_lists_before_loading_a_command_is_the_commands_own():
    for name, lazy in COMMANDS.items():
        known = click.Command(name, help=lazy.short_help)
        command = lazy.load()
        for limit in (45, 10_000):
            assert known.get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_every_command_shows_its_own_help():
    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert set(COMMANDS) | {"demo"} <= set(names)
    for name in names:
        result = CliRunner().invoke(main, [name, "--help"], prog_name="chimera-cards")
        assert result.exit_code == 0, (name, result.output)
        assert result.output.startswith(f"Usage: chimera-cards {name} "), name


def test_top_level_help_lists_every_command_with_its_help_line():
    result = CliRunner().invoke(main, ["--help"], prog_name="chimera-cards")
    assert result.exit_code == 0
    for name in [*COMMANDS, "demo"]:
        assert f"\n  {name} " in result.output, name
    assert "Run the main job end to end in a throwaway folder" in result.output


def test_the_demo_is_registered_through_the_entry_point_group():
    entry = ("demo", "reference_loop._plugins.commands:register_commands")
    assert entry in list(plugin_entry_points())


def test_an_installed_plugin_adds_a_command_that_is_listed_and_runs(tmp_path):
    # A real distribution on sys.path: a module and its dist-info with an entry point.
    (tmp_path / "hello_plugin.py").write_text(
        textwrap.dedent(
            """
            import click

            @click.command("hello")
            @click.argument("who")
            def hello(who):
                '''Say hello from a plugin.'''
                click.echo(f"hello {who}")

            def register_commands(cli):
                cli.add_command(hello)
            """
        )
    )
    info = tmp_path / "hello_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{PLUGIN_GROUP}]\nhello = hello_plugin:register_commands\n"
    )
    env = {"PYTHONPATH": str(tmp_path)}
    listing = subprocess.run(
        [sys.executable, "-m", "chimera_cards", "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert listing.returncode == 0, listing.stderr
    # The column width follows the longest command name ("uninstall").
    assert re.search(r"\n  hello +Say hello from a plugin\.", listing.stdout)
    assert "demo" in listing.stdout
    run = subprocess.run(
        [sys.executable, "-m", "chimera_cards", "hello", "world"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert (run.returncode, run.stdout) == (0, "hello world\n")


@pytest.mark.parametrize(
    ("module", "prog"), [("chimera_cards", "chimera-cards"), ("reference_loop", "reference-loop")]
)
def test_python_dash_m_runs_each_command(module, prog):
    done = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{prog}, version {chimera_cards.__version__}\n"


@pytest.mark.parametrize("package", [chimera_cards, reference_loop])
def test_every_name_in_all_is_importable(package):
    assert set(package.__all__) == {"__version__", *package._EXPORTS}
    for name in package.__all__:
        assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018


def test_the_version_is_defined_once():
    from importlib.metadata import version

    assert reference_loop.__version__ is chimera_cards.__version__
    assert version("chimera-cards") == chimera_cards.__version__
    pyproject = (Path(chimera_cards.__file__).parent.parent / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert "\nversion =" not in pyproject.split("[tool.setuptools.dynamic]")[0]


def test_the_license_file_is_the_apache_2_text():
    text = (Path(chimera_cards.__file__).parent.parent / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0")
    assert "END OF TERMS AND CONDITIONS" in text
    assert importlib.import_module("chimera_cards") is chimera_cards
