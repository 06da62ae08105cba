"""Files a build or an install obeys without anyone reading them: Makefile recipes, Dockerfile
``RUN`` steps, ``package.json`` scripts (npm runs ``preinstall``, ``install``, ``postinstall`` and
``prepare`` by itself), and where packages come from (``.npmrc``, ``.yarnrc``, ``pip.conf``,
requirements files, ``pyproject.toml`` index tables, ``npm config set registry``).

The commands of a build file are handed to the shell reader as one shell text whose lines keep
their places in the file, so a finding names the file's own line. An index or registry other
than the public ones, set for good, sends every later install to whoever runs it (a package of
the same name as a private one wins: dependency confusion), so it is an error; a hosted
registry service a company may run its own registry on is a warning for the reviewer.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass

from chimera_cards._scan.sensitive import host_of

INDEX_RULE = "index-change"
# Config files that hold an index setting when a command or a script writes one into them.
WRITTEN_INDEX_KINDS = frozenset(
    {"npmrc", "pip-conf", "condarc", "tool-toml", "system-source", "pipfile", "gemfile"}
)
# Registries and indexes that are the public ones (or a project's own official wheel index).
PUBLIC_INDEX_HOSTS = frozenset(
    {
        "pypi.org",
        "pypi.python.org",
        "files.pythonhosted.org",
        "test.pypi.org",
        "download.pytorch.org",
        "pypi.nvidia.com",
        "pypi.ngc.nvidia.com",
        "data.pyg.org",
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "registry.npmmirror.com",
        "npm.pkg.github.com",
        "crates.io",
        "index.crates.io",
        "rubygems.org",
        "proxy.golang.org",
        "goproxy.io",
        "goproxy.cn",
        "conda.anaconda.org",
        "repo.anaconda.com",
        "conda-forge.org",
        "index.rubygems.org",
        "repo.maven.apache.org",
        "repo1.maven.org",
        "maven.google.com",
        "dl.google.com",
        "plugins.gradle.org",
        "oss.sonatype.org",
        "s01.oss.sonatype.org",
        "maven.pkg.github.com",
        "repo.spring.io",
        "github.com",
        "localhost",
        "127.0.0.1",
    }
)
# Services a company hosts its own private registry on: the reviewer decides whose it is.
HOSTED_REGISTRY_SUFFIXES = (
    ".jfrog.io",
    ".pkgs.visualstudio.com",
    "pkgs.dev.azure.com",
    ".pkg.dev",
    "gitlab.com",
    ".codeartifact.amazonaws.com",
    ".cloudsmith.io",
    ".fury.io",
    ".packagecloud.io",
    ".azurecr.io",
    "jitpack.io",  # builds any public repository on request
)


@dataclass(frozen=True)
class IndexSetting:
    """One place a build file sends installs: its line, what sets it and the URL."""

    line: int
    what: str  # e.g. "registry in .npmrc", "--extra-index-url"
    url: str


# Build files known by their whole name: npm's and Composer's scripts (Composer runs its
# *-install-cmd and *-update-cmd by itself), CMake's (execute_process runs on configuring).
_NAMED_BUILD_KINDS = {
    "package.json": "package-json",
    "composer.json": "composer-json",
    "cmakelists.txt": "cmake",
    ".condarc": "condarc",
    "condarc": "condarc",
    ".npmrc": "npmrc",
    ".yarnrc": "npmrc",
    ".yarnrc.yml": "npmrc",
    "npmrc": "npmrc",
}


def build_kind(path: str) -> str | None:
    """What kind of build or install file a path is, by its name.

    Args:
        path: the file's path in the bundle.
    Returns:
        "makefile" (make, just), "dockerfile", "package-json", "composer-json", "cmake",
        "envrc", "rakefile", "compose", "tox", "workflow", "runner" (task runners, CI),
        "gradle", "npmrc", "pip-conf", "requirements", "pyproject", "condarc", "tool-toml",
        "system-source" (apt, yum, NuGet sources), or None.
    """
    name = path.rsplit("/", 1)[-1]
    lower = name.lower()
    if lower in ("makefile", "gnumakefile", "justfile", ".justfile") or lower.endswith(
        (".mk", ".just")
    ):
        return "makefile"  # just's recipes are indented under their name, as make's are
    if lower in (".envrc", "envrc"):
        return "envrc"  # direnv runs it on entering the folder
    if lower == "rakefile" or lower.endswith(".rake"):
        return "rakefile"
    if _COMPOSE_RE.match(lower):
        return "compose"
    runner = _runner_kind(path, lower)
    if runner is not None:
        return runner
    if "/.github/workflows/" in f"/{path}" and lower.endswith((".yml", ".yaml")):
        return "workflow"
    if lower in _NAMED_BUILD_KINDS:
        return _NAMED_BUILD_KINDS[lower]
    if lower.endswith(".toml") and "pyproject" not in lower and "poetry" not in lower:
        return "tool-toml"  # bunfig.toml, Cargo's config.toml (or a copy of it, any name)
    if lower.startswith(("dockerfile", "containerfile")) or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.endswith(".cmake"):
        return "cmake"
    if lower in ("pip.conf", "pip.ini", "uv.toml"):
        return "pip-conf"
    if lower.startswith(("requirements", "constraints")) and lower.endswith((".txt", ".in")):
        return "requirements"
    if lower.endswith(".toml") and ("pyproject" in lower or "poetry" in lower):
        return "pyproject"
    return None


# Where the system's package manager (apt, yum/dnf, zypper) and NuGet take packages from.
_SYSTEM_SOURCE_RE = re.compile(
    r"/sources\.list$|/sources\.list\.d/[^/]+\.(?:list|sources)$|/(?:yum\.|zypp/)?repos\.d/[^/]+\.repo$|"
    r"/nuget\.config$"
)


def _runner_kind(path: str, lower: str) -> str | None:
    if lower == "tox.ini":
        return "tox"
    if lower in (".gitconfig", "gitconfig") or lower.endswith(".gitconfig"):
        return "gitconfig"  # included with include.path, or copied to ~/.gitconfig
    if lower in _NAMED_KINDS:
        return _NAMED_KINDS[lower]
    if lower.endswith(".nix"):
        return "nix"
    if _RUNNER_RE.match(lower) or f"/{path}".lower().endswith(_RUNNER_PATHS):
        return "runner"
    if lower.startswith(("build.gradle", "settings.gradle")):
        return "gradle"
    if _SYSTEM_SOURCE_RE.search(f"/{path}".lower()):
        return "system-source"
    return None


_COMPOSE_RE = re.compile(r"^(?:docker-)?compose(?:\.[\w-]+)?\.ya?ml$")
# Files known by their whole name: Pipenv's, Bundler's and conda's package sources, Maven's
# repositories, and Vagrant's provisioners.
_NAMED_KINDS = {
    "pipfile": "pipfile",
    "gemfile": "gemfile",
    "gems.rb": "gemfile",
    "environment.yml": "conda-env",
    "environment.yaml": "conda-env",
    "pom.xml": "pom",
    "vagrantfile": "vagrantfile",
}
# Task runners, hook managers and CI services that run the commands of a YAML file themselves
# (task, lefthook, GitLab, Bitbucket, Travis, Azure, Drone, Cloud Build, AppVeyor, Gitpod's
# tasks on opening the workspace, devfiles).
_RUNNER_RE = re.compile(
    r"^(?:taskfile(?:\.dist)?|\.?lefthook(?:-local)?|\.gitlab-ci|bitbucket-pipelines|\.travis|"
    r"azure-pipelines|\.drone|cloudbuild|appveyor|\.appveyor|\.gitpod|devfile|codemagic)\.ya?ml$"
)
_RUNNER_PATHS = ("/.circleci/config.yml", "/.buildkite/pipeline.yml", "/.buildkite/pipeline.yaml")

# --- commands of build files -------------------------------------------------------------------

# Ruby's shell-outs in a Rakefile: sh "…", system("…"), `…`, %x(…).
_RUBY_SHELL_RE = re.compile(
    r"""\b(?:sh|system|exec|ruby)\s*\(?\s*(["'])(.*?)\1|`([^`\n]+)`|%x[({\[](.*?)[)}\]]"""
)
_RUBY_INTERPOLATION_RE = re.compile(r"#\{(\w+)\}")


def _rake_shell(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        commands = [
            m.group(2) if m.group(2) is not None else m.group(3) or m.group(4) or ""
            for m in _RUBY_SHELL_RE.finditer(line)
        ]
        out.append(_RUBY_INTERPOLATION_RE.sub(r"${\1}", "; ".join(c for c in commands if c)))
    return out


_TOX_COMMANDS_RE = re.compile(r"^(commands(?:_pre|_post)?)\s*=\s*(.*)$")
_TOX_SUBSTITUTION_RE = re.compile(r"\{env:(\w+)(?::[^}]*)?\}|\{(?:posargs|toxinidir|envdir)[^}]*\}")


def _tox_shell(text: str) -> list[str]:
    """tox.ini's ``commands`` (each line of the value one command), ``{env:HOME}`` as
    ``${HOME}``."""
    out = []
    inside = False
    for line in text.split("\n"):
        match = _TOX_COMMANDS_RE.match(line)
        if match:
            inside, command = True, match.group(2)
        elif inside and line[:1] in (" ", "\t") and line.strip():
            command = line.strip()
        else:
            inside, command = False, ""
        out.append(
            _TOX_SUBSTITUTION_RE.sub(lambda m: f"${{{m.group(1)}}}" if m.group(1) else "", command)
        )
    return out


_SECRETS_EXPRESSION_RE = re.compile(r"\$\{\{\s*(?:secrets|env)\.(\w+)\s*\}\}")


def _blank_lines(text: str) -> list[str]:
    return [""] * (text.count("\n") + 1)


def _yaml_mapping(text: str, key: str) -> dict | None:
    """The mapping under a top-level key of a YAML file (``jobs``, ``services``), or None."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else None


def _workflow_shell(text: str) -> list[str]:
    """A GitHub Actions workflow's ``run`` steps (what the runner's shell runs, with the
    repository's secrets in ``${{ secrets.NAME }}`` read as the variable ``$NAME``)."""
    out, jobs = _blank_lines(text), _yaml_mapping(text, "jobs")
    if jobs is None:
        return out
    lines = text.split("\n")
    at = 0
    for job in jobs.values():
        steps = job.get("steps") if isinstance(job, dict) else None
        for step in steps if isinstance(steps, list) else []:
            run = step.get("run") if isinstance(step, dict) else None
            if not isinstance(run, str):
                continue
            at = next((i for i in range(at, len(lines)) if "run:" in lines[i]), at)
            block = lines[at].rstrip().endswith(("|", ">", "|-", ">-"))
            for offset, written in enumerate(run.split("\n"), 1 if block else 0):
                if at + offset < len(out):
                    command = _SECRETS_EXPRESSION_RE.sub(r"${\1}", written)
                    out[at + offset] = (
                        out[at + offset] + "; " if out[at + offset] else ""
                    ) + command
            at += 1
    return out


def _compose_shell(text: str) -> list[str]:
    """A compose file's ``command``/``entrypoint`` lines, with each host folder a service
    mounts written in place of the path it is mounted at (``~/.ssh:/keys`` then ``tar /keys``
    reads ~/.ssh)."""
    out, services = _blank_lines(text), _yaml_mapping(text, "services")
    if services is None:
        return out
    lines = text.split("\n")
    for service in services.values():
        if not isinstance(service, dict):
            continue
        mounts: list[tuple[str, str]] = []
        for volume in service.get("volumes") or []:
            if isinstance(volume, str) and ":" in volume:
                host, _, inside = volume.partition(":")
                mounts.append((inside.split(":", 1)[0], host))
        for key in ("command", "entrypoint"):
            value = service.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if not isinstance(value, str):
                continue
            for inside, host in sorted(mounts, key=lambda m: -len(m[0])):
                if inside.startswith("/") and len(inside) > 1:
                    value = re.sub(re.escape(inside) + r"(?=[/\s\"']|$)", host, value)
            at = next((i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:")), 0)
            out[at] = (out[at] + "; " if out[at] else "") + value.replace("\n", " ")
    return out


_MAKE_VAR_RE = re.compile(r"\$\((\w+)\)|\$\{(\w+)\}")
_MAKE_ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:::?|\?|\+|!)?=\s*(.*)$")
_DOCKER_RE = re.compile(r"^\s*(RUN|ADD|ARG|ENV)\s+(.*)$", re.I)
_DOCKER_FLAG_RE = re.compile(r"^(?:--[\w-]+(?:=\S+)?\s+)+")


def _make_shell(text: str) -> list[str]:
    out = []
    recipe = False
    for line in text.split("\n"):
        if line.startswith("\t") or (recipe and line.startswith(" ") and line.strip()):
            command = line.strip().lstrip("@+-").replace("$$", "\0")
            command = command.replace("$(shell ", "$(")
            command = _MAKE_VAR_RE.sub(lambda m: "${" + (m.group(1) or m.group(2)) + "}", command)
            out.append(command.replace("\0", "$"))
            continue
        recipe = bool(line.strip()) and ":" in line and not line.lstrip().startswith("#")
        assigned = _MAKE_ASSIGN_RE.match(line)
        if assigned and "$(shell " in assigned.group(2):
            value = assigned.group(2).replace("$(shell ", "$(")
            out.append(f'{assigned.group(1)}="{value}"')
        else:
            out.append("")
    return out


def _docker_shell(text: str) -> list[str]:
    out = []
    going = False  # a RUN continued on the next line
    for line in text.split("\n"):
        if going:
            out.append(line)
            going = line.rstrip().endswith("\\")
            continue
        match = _DOCKER_RE.match(line)
        if not match:
            out.append("")
            continue
        word, rest = match.group(1).upper(), _DOCKER_FLAG_RE.sub("", match.group(2))
        if word == "RUN":
            if rest.startswith("["):
                with contextlib.suppress(ValueError, TypeError):
                    rest = " ".join(json.loads(rest))
            out.append(rest)
            going = rest.rstrip().endswith("\\")
        elif word == "ADD":
            parts = rest.split()
            # ADD of a URL downloads it into the image: what a later RUN runs is unreviewed.
            if len(parts) >= 2 and parts[0].startswith(("http://", "https://")):
                out.append(f"curl -sSLo {parts[-1]} {parts[0]}")
            else:
                out.append("")
        else:  # ARG NAME[=value], ENV NAME=value
            parts = rest.split(None, 1)
            name = parts[0].split("=", 1)[0] if parts else ""
            value = parts[0].split("=", 1)[1] if parts and "=" in parts[0] else ""
            if word == "ENV" and len(parts) == 2 and "=" not in parts[0]:
                value = parts[1]
            out.append(f"{name}={value}" if name.isidentifier() and value else "")
    return out


def _json_scripts(text: str) -> tuple[list[str], dict, list[str]]:
    """A JSON manifest's ``scripts`` map (empty when the text or the map is not JSON's), with
    an empty command line per line of the file and the file's lines."""
    out = [""] * (text.count("\n") + 1)
    try:
        data = json.loads(text)
    except ValueError:
        return out, {}, []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return out, scripts if isinstance(scripts, dict) else {}, text.split("\n")


def _package_shell(text: str) -> list[str]:
    out, scripts, lines = _json_scripts(text)
    start = next((i for i, line in enumerate(lines) if '"scripts"' in line), 0)
    for name, command in scripts.items():
        if not isinstance(command, str):
            continue
        key = json.dumps(name)
        at = next((i for i in range(start, len(lines)) if key in lines[i]), start)
        out[at] = (out[at] + "; " if out[at] else "") + command.replace("\n", " ")
    return out


def _composer_shell(text: str) -> list[str]:
    """Composer's scripts: a command or a list of them per event; ``@name`` calls another
    script and ``Class::method`` a PHP callback (read where its class is)."""
    out, scripts, lines = _json_scripts(text)
    for commands in scripts.values():
        for command in commands if isinstance(commands, list) else [commands]:
            if not isinstance(command, str) or command.startswith("@") or "::" in command:
                continue
            head = command.split("\n", 1)[0]
            at = next((i for i, line in enumerate(lines) if json.dumps(head)[1:-1] in line), 0)
            out[at] = (out[at] + "; " if out[at] else "") + command.replace("\n", " ")
    return out


# A CMake COMMAND's words run until the next keyword of the call or its end.
_CMAKE_COMMAND_RE = re.compile(
    r"\bCOMMAND\s+((?:\"(?:[^\"\\]|\\.)*\"|[^\s)]+|\s+)*?)(?=\s+(?:COMMAND|WORKING_DIRECTORY|"
    r"OUTPUT_\w+|ERROR_\w+|RESULT_\w+|RESULTS_VARIABLE|INPUT_FILE|TIMEOUT|DEPENDS|BYPRODUCTS|"
    r"COMMENT|VERBATIM|USES_TERMINAL|ECHO_\w+|COMMAND_\w+|ENCODING|MAIN_DEPENDENCY|"
    r"IMPLICIT_DEPENDS|JOB_POOL|APPEND|SOURCES|ALL)\b|\s*\))",
    re.S,
)
_CMAKE_ENV_RE = re.compile(r"\$ENV\{(\w+)\}")


def _cmake_shell(text: str) -> list[str]:
    """The commands of ``execute_process`` (run when the build is configured) and of custom
    commands and targets (run by the build), at their lines; ``$ENV{X}`` is the shell's."""
    out = _blank_lines(text)
    for match in _CMAKE_COMMAND_RE.finditer(text):
        at = text.count("\n", 0, match.start(1))
        words = " ".join(match.group(1).split())
        if at < len(out) and words:
            out[at] = (out[at] + "; " if out[at] else "") + _CMAKE_ENV_RE.sub(r"${\1}", words)
    return out


# Keys whose values such a file runs as shell commands (a string or a list of them).
_RUN_KEYS = frozenset(
    {
        "run",
        "cmd",
        "cmds",
        "command",
        "commands",
        "script",
        "before_script",
        "after_script",
        "before_install",
        "install",
        "after_success",
        "init",
        "before",
        "prebuild",
        "entrypoint",
        "args",
    }
)


def _runner_shell(text: str) -> list[str]:
    """The commands of a runner's YAML file (every value under a key it runs), each written on
    the line it starts on."""
    import yaml

    out = _blank_lines(text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return out
    commands: list[str] = []

    def gather(node: object, runs: bool) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                gather(value, runs or str(key).lower() in _RUN_KEYS)
        elif isinstance(node, list):
            for item in node:
                gather(item, runs)
        elif runs and isinstance(node, str):
            commands.append(node)

    gather(data, False)
    lines = text.split("\n")
    at = 0
    for command in commands:
        first = command.strip().split("\n", 1)[0].strip()
        found = next((i for i in range(at, len(lines)) if first and first in lines[i]), None)
        if found is None:
            found = next((i for i, line in enumerate(lines) if first and first in line), 0)
        at = found
        for offset, written in enumerate(command.strip().split("\n")):
            row = min(found + offset, len(out) - 1)
            out[row] = (out[row] + "; " if out[row] else "") + written
    return [_TASK_VARIABLE_RE.sub(r"${\1}", line) for line in out]


# task's {{.HOME}} and Go-template variables read as the shell variables they name.
_TASK_VARIABLE_RE = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")
_GRADLE_EXEC_RE = re.compile(r"\b(?:commandLine|executable|ProcessBuilder|exec)\b\s*\(?\s*(.*)")
_GRADLE_EXECUTE_RE = re.compile(r"""(["'])(.+?)\1\s*\.execute\(""")
_QUOTED_RE = re.compile(r"""(["'])(.*?)(?<!\\)\1""")


def _gradle_shell(text: str) -> list[str]:
    """A Gradle build's commands: ``commandLine 'sh', '-c', '…'`` (the ``-c`` text) or the
    words of the command it runs, and ``"…".execute()``."""
    out = []
    for line in text.split("\n"):
        command = ""
        execute = _GRADLE_EXECUTE_RE.search(line)
        match = _GRADLE_EXEC_RE.search(line)
        if execute:
            command = execute.group(2)
        elif match:
            words = [m.group(2) for m in _QUOTED_RE.finditer(match.group(1))]
            if "-c" in words[:-1]:
                command = words[words.index("-c") + 1]
            else:
                command = " ".join(shlex.quote(w) for w in words)
        out.append(command.replace("$HOME", "${HOME}"))
    return out


# Nix's indented strings: shellHook, buildPhase, installPhase … are shell scripts.
_NIX_STRING_RE = re.compile(r"''(.*?)''(?!['$\\])", re.S)


def _nix_shell(text: str) -> list[str]:
    out = _blank_lines(text)
    for match in _NIX_STRING_RE.finditer(text):
        first = text.count("\n", 0, match.start(1))
        for offset, written in enumerate(match.group(1).split("\n")):
            if first + offset < len(out):
                out[first + offset] = written
    return out


# Vagrant's shell provisioners and triggers: inline: "…" or inline: <<-SHELL … SHELL.
_VAGRANT_INLINE_RE = re.compile(
    r"""\binline:\s*(?:(["'])(.*?)(?<!\\)\1|<<[-~]?(\w+)\n(.*?)\n\s*\3)""", re.S
)
_RUBY_ENV_RE = re.compile(r"""#\{ENV\[\s*["'](\w+)["']\s*\]\}""")


def _vagrant_shell(text: str) -> list[str]:
    out = _blank_lines(text)
    for match in _VAGRANT_INLINE_RE.finditer(text):
        body = match.group(2) if match.group(2) is not None else match.group(4) or ""
        first = text.count(
            "\n", 0, match.start(2) if match.group(2) is not None else match.start(4)
        )
        for offset, written in enumerate(body.split("\n")):
            if first + offset < len(out):
                out[first + offset] = _RUBY_ENV_RE.sub(r"${\1}", written)
    return out


def hook_shell(kind: str, text: str) -> str | None:
    """The shell a build file runs, as one text whose lines keep their places in the file.

    Args:
        kind: from ``build_kind``.
        text: the file's text.
    Returns:
        The shell text, or None for a kind that runs no commands.
    """
    reader = _SHELL_READERS.get(kind)
    if reader is None:
        return None
    lines = reader(text)
    return "\n".join(lines) if any(lines) else None


_GIT_SECTION_RE = re.compile(r'^\s*\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_GIT_ENTRY_RE = re.compile(r"^\s*([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")


def _git_value(raw: str) -> str:
    # git's values: double quotes group, backslash escapes; ; or # outside quotes start a comment.
    out, quoted, at = [], False, 0
    while at < len(raw):
        char = raw[at]
        if char == "\\" and at + 1 < len(raw):
            out.append({"n": "\n", "t": "\t"}.get(raw[at + 1], raw[at + 1]))
            at += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in ";#" and not quoted:
            break
        else:
            out.append(char)
        at += 1
    return "".join(out).strip()


def _gitconfig_shell(text: str) -> list[str]:
    """A git config file's settings as the ``git config`` commands that would set them, so a
    value git runs (a credential helper, an fsmonitor, a ``!`` alias) is read as code."""
    out, section = [], ""
    for line in text.split("\n"):
        header = _GIT_SECTION_RE.match(line)
        entry = None if header else _GIT_ENTRY_RE.match(line)
        if header:
            section = header.group(1) + (f".{header.group(2)}" if header.group(2) else "")
            out.append("")
        elif entry and section:
            key = f"{section}.{entry.group(1)}"
            out.append(
                f"git config --global {shlex.quote(key)} {shlex.quote(_git_value(entry.group(2)))}"
            )
        else:
            out.append("")
    return out


# Each build kind's reader of the commands it runs, line for line with the file.
_SHELL_READERS: dict[str, Callable[[str], list[str]]] = {
    "makefile": _make_shell,
    "dockerfile": _docker_shell,
    "package-json": _package_shell,
    "composer-json": _composer_shell,
    "cmake": _cmake_shell,
    "envrc": lambda text: text.split("\n"),
    "rakefile": _rake_shell,
    "compose": _compose_shell,
    "tox": _tox_shell,
    "workflow": _workflow_shell,
    "runner": _runner_shell,
    "gradle": _gradle_shell,
    "nix": _nix_shell,
    "vagrantfile": _vagrant_shell,
    "gitconfig": _gitconfig_shell,
}


# --- where packages come from ------------------------------------------------------------------

_NPMRC_RE = re.compile(
    r"^\s*(?:(@[\w.-]+:)?registry\s*=\s*|registry\s+|npmRegistryServer:\s*)[\"']?(\S+?)[\"']?\s*$",
    re.M,
)
_PIP_CONF_RE = re.compile(
    r"^\s*(index-url|extra-index-url|find-links|index_url|extra_index_url|url)\s*[=:]\s*"
    r"[\"']?(\S+?)[\"']?\s*$",
    re.M,
)
_REQUIREMENTS_RE = re.compile(
    r"^\s*(-i|--index-url|--extra-index-url|-f|--find-links)[\s=]+(\S+)", re.M
)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _table(parent: dict, key: str) -> dict:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _pyproject(text: str) -> list[IndexSetting]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    tool = data.get("tool") if isinstance(data, dict) else None
    if not isinstance(tool, dict):
        return []
    urls: list[tuple[str, str]] = []
    uv = _table(tool, "uv")
    for entry in uv.get("index", []) if isinstance(uv.get("index"), list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            urls.append(("[[tool.uv.index]]", entry["url"]))
    for key in ("index-url", "extra-index-url"):
        value = uv.get(key)
        for url in value if isinstance(value, list) else [value]:
            if isinstance(url, str):
                urls.append((f"tool.uv {key}", url))
    for family in ("poetry", "pdm"):
        section = _table(tool, family)
        for entry in section.get("source", []) if isinstance(section.get("source"), list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                urls.append((f"[[tool.{family}.source]]", entry["url"]))
    found = []
    for what, url in urls:
        at = text.find(url)
        found.append(IndexSetting(_line_of(text, at) if at >= 0 else 1, what, url))
    return found


def index_settings(kind: str, text: str) -> list[IndexSetting]:
    """Every index or registry a build file points installs at.

    Args:
        kind: from ``build_kind``.
        text: the file's text.
    Returns:
        The settings, in order.
    """
    if kind == "npmrc":
        return [
            IndexSetting(_line_of(text, m.start()), f"{m.group(1) or ''}registry", m.group(2))
            for m in _NPMRC_RE.finditer(text)
        ]
    if kind == "pip-conf":
        return [
            IndexSetting(_line_of(text, m.start()), m.group(1), m.group(2))
            for m in _PIP_CONF_RE.finditer(text)
        ]
    if kind == "requirements":
        return [
            IndexSetting(_line_of(text, m.start()), m.group(1), m.group(2))
            for m in _REQUIREMENTS_RE.finditer(text)
        ]
    if kind == "pyproject":
        return _pyproject(text)
    if kind == "condarc":
        return [
            IndexSetting(_line_of(text, m.start()), "conda channel", m.group(1))
            for m in _CONDA_URL_RE.finditer(text)
        ]
    if kind == "tool-toml":
        return _tool_toml(text)
    if kind in _SOURCE_PATTERNS:
        return [
            IndexSetting(_line_of(text, m.start()), what, m.group(1))
            for what, pattern in _SOURCE_PATTERNS[kind]
            for m in pattern.finditer(text)
        ]
    if kind == "system-source":
        return [
            IndexSetting(_line_of(text, m.start()), "system package source", m.group(1))
            for m in _SYSTEM_SOURCE_URL_RE.finditer(text)
        ]
    return []


# Package sources written in a file's own syntax: (what, pattern whose group 1 is the URL).
_SOURCE_PATTERNS: dict[str, list[tuple[str, re.Pattern]]] = {
    "pipfile": [("Pipfile [[source]]", re.compile(r"""^\s*url\s*=\s*["']([^"']+)""", re.M))],
    "gemfile": [
        ("Gemfile source", re.compile(r"""^\s*source\s*\(?\s*["'](https?://[^"']+)""", re.M))
    ],
    "conda-env": [
        ("conda channel", re.compile(r"""^\s*-\s*["']?(https?://[^\s"']+)""", re.M)),
        (
            "pip option in environment.yml",
            re.compile(
                r"^\s*-\s*(?:-i|--index-url|--extra-index-url|-f|--find-links)[\s=]+(\S+)", re.M
            ),
        ),
    ],
    "gradle": [
        (
            "Maven repository",
            re.compile(
                r"""\bmaven\s*(?:\{[^}]*?\b(?:url|setUrl)\s*(?:=\s*)?\(?\s*(?:uri\s*\(\s*)?|\(\s*)["']([^"']+)""",
                re.S,
            ),
        )
    ],
    "pom": [
        (
            "Maven repository",
            re.compile(r"<(?:plugin)?[Rr]epository>(?:(?!</).)*?<url>\s*([^<\s]+)\s*</url>", re.S),
        )
    ],
}
# deb [options] URL suite, deb822 URIs:, yum baseurl=/mirrorlist=, NuGet <add key value="URL">.
_SYSTEM_SOURCE_URL_RE = re.compile(
    r"""^\s*(?:deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?|URIs:\s*|(?:baseurl|mirrorlist|metalink)\s*=\s*|"""
    r"""<add\s+key="[^"]*"\s+value=")(https?://[^\s"']+)""",
    re.M | re.I,
)
# Vendors whose own package repositories installation guides add (apt.releases.hashicorp.com,
# download.docker.com, packages.microsoft.com, …): the vendor's domain, the vendor's packages.
_VENDOR_SOURCE_DOMAINS = frozenset(
    {"debian.org", "ubuntu.com", "launchpad.net", "launchpadcontent.net", "fedoraproject.org",
     "centos.org", "rockylinux.org", "opensuse.org", "llvm.org", "hashicorp.com", "docker.com",
     "github.com", "microsoft.com", "nodesource.com", "k8s.io", "kubernetes.io", "google.com",
     "grafana.com", "yarnpkg.com", "mongodb.org", "postgresql.org", "nvidia.com", "nuget.org",
     "cloudflare.com", "tailscale.com", "1password.com", "elastic.co", "influxdata.com",
     "r-project.org", "anaconda.com", "mariadb.org", "redis.io", "rabbitmq.com", "adoptium.net",
     "mozilla.org", "gitlab.com", "githubusercontent.com", "helm.sh", "ngrok.com", "deno.land",
     "mysql.com", "oracle.com", "amazon.com", "amazonaws.com", "jenkins.io", "nginx.org",
     "caddyserver.com", "trivy.dev", "sury.org", "cran.r-project.org"}
)  # fmt: skip


def source_severity(url: str) -> tuple[str, str] | None:
    """``index_severity`` for a system package source or a NuGet feed: a vendor's own
    repository is the usual install path, a project page host (``*.github.io``) is for the
    reviewer, any other host an error."""
    host = host_of(url)
    if host is None:
        return None
    labels = host.split(".")
    if ".".join(labels[-2:]) in _VENDOR_SOURCE_DOMAINS or host in _VENDOR_SOURCE_DOMAINS:
        return None
    if host.endswith(".github.io"):
        return ("warning", host)
    return index_severity(url)


def _tool_toml(text: str) -> list[IndexSetting]:
    """bunfig.toml's ``[install] registry`` and scopes, Cargo's ``[source.*] registry`` (what
    ``replace-with`` swaps crates.io for) and ``[registries.*] index``."""
    if "[source" not in text and "[registries" not in text and "[install" not in text:
        return []
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    urls: list[tuple[str, object]] = []
    for family, key in (("source", "registry"), ("registries", "index")):
        for entry in _table(data, family).values():
            if isinstance(entry, dict):
                urls.append((f"[{family}] {key}", entry.get(key)))
    install = _table(data, "install")
    urls.append(("[install] registry", install.get("registry")))
    urls += [("[install.scopes]", v) for v in _table(install, "scopes").values()]
    found = []
    for what, value in urls:
        url = value.get("url") if isinstance(value, dict) else value
        if not isinstance(url, str):
            continue
        url = url.removeprefix("sparse+").removeprefix("registry+").removeprefix("git+")
        at = text.find(url)
        found.append(IndexSetting(_line_of(text, at) if at >= 0 else 1, what, url))
    return found


# .condarc: every URL under channels, default_channels, custom_channels or channel_alias.
_CONDA_URL_RE = re.compile(r"""^[\s-]*(?:[\w-]+:\s*)?["']?(https?://[^\s"']+)""", re.M)


def index_severity(url: str) -> tuple[str, str] | None:
    """How a package index or registry URL is graded: None for a public one, ("warning", host)
    for a hosted registry service, ("error", host) for anything else.

    Args:
        url: the index's URL as written.
    Returns:
        The severity and the host, or None.
    """
    host = host_of(url)
    if host is None:
        # A variable (${REGISTRY_URL}) or a path: the user's own choice at run time.
        return None
    if host in PUBLIC_INDEX_HOSTS or host.endswith(".localhost"):
        return None
    if host.endswith(HOSTED_REGISTRY_SUFFIXES) or host in HOSTED_REGISTRY_SUFFIXES:
        return ("warning", host)
    return ("error", host)
