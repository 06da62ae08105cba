"""Rules over the commands a shell unit runs (as :mod:`chimera_cards._scan.shell` parsed them):
installs from where nobody reviewed, persistence, and switching security controls off.

Each rule reads a command's name and arguments (not the line's text), so a quoted mention or a
comment is not a finding, and ``sudo -E pip install --index-url …`` is the ``pip`` it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chimera_cards._scan.agentconfig import redirect
from chimera_cards._scan.sensitive import host_of
from chimera_cards._scan.shellfacts import Command

# Package indexes and mirrors that are the registries themselves (or their official CDNs).
KNOWN_INDEX_HOSTS = frozenset(
    {
        "pypi.org",
        "pypi.python.org",
        "files.pythonhosted.org",
        "test.pypi.org",
        "download.pytorch.org",
        "pypi.nvidia.com",
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "crates.io",
        "index.crates.io",
        "rubygems.org",
        "proxy.golang.org",
    }
)
# Go modules whose @latest is the language's own.
_GO_OWN = ("golang.org/x/", "go.dev/", "google.golang.org/", "cmd/")


@dataclass(frozen=True)
class CommandFinding:
    """One finding of a command rule, before the detection pass gives it its path."""

    rule: str
    severity: str
    message: str
    line: int


def _shown(cmd: Command) -> str:
    text = " ".join([cmd.name, *cmd.argv])
    return text if len(text) <= 120 else text[:117] + "..."


def _value(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    found = []
    for index, arg in enumerate(argv):
        for flag in flags:
            if arg == flag and index + 1 < len(argv):
                found.append(argv[index + 1])
            elif arg.startswith(flag + "=") and flag.startswith("--"):
                found.append(arg.split("=", 1)[1])
            elif not flag.startswith("--") and arg.startswith(flag) and len(arg) > len(flag):
                found.append(arg[len(flag) :])
    return found


def _unknown_host(url: str) -> str | None:
    host = host_of(url)
    if host is None:
        return url if "://" in url else None
    return None if host in KNOWN_INDEX_HOSTS else host


def _pip(cmd: Command, argv: list[str]) -> list[CommandFinding]:
    out = []
    from chimera_cards._scan.buildfiles import INDEX_RULE, index_severity

    for url in _value(argv, ("--index-url", "-i", "--extra-index-url", "--find-links", "-f")):
        host = _unknown_host(url)
        if host:
            out.append(
                CommandFinding(
                    "remote-install",
                    "warning",
                    f"installs from the package index at {host}: {_shown(cmd)}",
                    cmd.line,
                )
            )
            graded = index_severity(url)
            if graded is not None and graded[0] == "error":
                # A package of any name from an index nobody knows: its build code runs here.
                out.append(
                    CommandFinding(
                        INDEX_RULE,
                        "error",
                        f"installs from {graded[1]}, not a public index: {_shown(cmd)}",
                        cmd.line,
                    )
                )
    for host in _value(argv, ("--trusted-host",)):
        out.append(
            CommandFinding(
                "security-disable",
                "warning",
                f"turns off TLS checks for {host}: {_shown(cmd)}",
                cmd.line,
            )
        )
    values = set(
        _value(
            argv,
            (
                "--index-url",
                "-i",
                "--extra-index-url",
                "--find-links",
                "-f",
                "--trusted-host",
                "-r",
                "--requirement",
                "-c",
                "--constraint",
            ),
        )
    )
    for arg in argv:
        if arg.startswith("-") or arg in values:
            continue
        if arg.startswith(("git+", "hg+", "svn+", "bzr+")) or "://" in arg:
            where = host_of(arg.split("+", 1)[-1]) or arg
            if where in KNOWN_INDEX_HOSTS:
                continue
            out.append(
                CommandFinding(
                    "remote-install",
                    "warning",
                    f"installs a package straight from {where}: {_shown(cmd)}",
                    cmd.line,
                )
            )
    return out


_NPM_REMOTE = re.compile(
    r"^(?:git\+|git:|github:|gitlab:|bitbucket:|gist:|https?://|file:)|^[\w.-]+/[\w.-]+(?:#.*)?$"
)


def _npm(cmd: Command, argv: list[str]) -> list[CommandFinding]:
    out = []
    registries = _value(argv, ("--registry",))
    for url in registries:
        host = _unknown_host(url)
        if host:
            out.append(
                CommandFinding(
                    "remote-install",
                    "warning",
                    f"installs from the registry at {host}: {_shown(cmd)}",
                    cmd.line,
                )
            )
    for arg in argv[1:]:
        if (
            arg in registries
            or arg.startswith("-")
            or (arg.startswith("@") and "/" in arg and "://" not in arg)
        ):
            continue
        if _NPM_REMOTE.match(arg):
            where = host_of(arg.removeprefix("git+")) or arg
            out.append(
                CommandFinding(
                    "remote-install",
                    "warning",
                    f"installs a package from {where}, not the registry: {_shown(cmd)}",
                    cmd.line,
                )
            )
    return out


# npx options that take the next argument as their value.
_NPX_VALUED = frozenset(("-p", "--package", "-c", "--call", "--cache", "--userconfig", "--shell",
                         "-n", "--node-arg"))  # fmt: skip


def _first_positional(argv: list[str]) -> int:
    """Where npx stops reading its own options: the first argument that is neither an option nor
    an option's value (or a ``--``)."""
    valued = False
    for index, arg in enumerate(argv):
        if arg == "--" or not (arg.startswith("-") or valued):
            return index
        valued = arg in _NPX_VALUED
    return len(argv)


def _dashdash(argv: list[str], at: int) -> int:
    """How many arguments after ``argv[at]`` come before a ``--`` (all of them if none)."""
    rest = argv[at + 1 :]
    return rest.index("--") if "--" in rest else len(rest)


def _npx(cmd: Command, argv: list[str], *, flags_first: bool = False) -> list[CommandFinding]:
    """``flags_first``: the npx (or bunx) binary, which reads its own options only before the
    package; what follows is the package's (`npx skills update … --yes` answers the tool's
    prompt, not npx's). ``npm exec`` reads its options anywhere before a ``--``."""
    at = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if at is None:
        return []
    package = argv[at]
    own = argv[: _first_positional(argv)] if flags_first else argv[: at + 1 + _dashdash(argv, at)]
    # `--package=pkg@1.2 -- bin`: the package fetched is the option's, the word after is its bin
    package = next((a[10:] for a in argv[:at] if a.startswith("--package=")), package)
    if _NPM_REMOTE.match(package) and not package.startswith("@"):
        return [
            CommandFinding(
                "remote-install",
                "warning",
                f"runs a package from {host_of(package) or package}: {_shown(cmd)}",
                cmd.line,
            )
        ]
    bare = package[1:] if package.startswith("@") else package
    if "@" not in bare:
        # -y installs it without the prompt that would show the user what is fetched.
        severity = "warning" if any(a in ("-y", "--yes") for a in own) else "info"
        return [
            CommandFinding(
                "remote-install",
                severity,
                f"runs the newest {package} from the registry (no version pinned): {_shown(cmd)}",
                cmd.line,
            )
        ]
    return []


# Options of `uv run`/`deno run`/`uvx` that take no value: the word after one is the program.
_RUN_FLAGS_RE = re.compile(
    r"-A|-q|--quiet|-v|--verbose|--no-project|--isolated|--frozen|--locked|--no-sync|--offline|"
    r"--active|--no-dev|--all-extras|--reload|-r|--unstable[\w-]*|--allow-[\w-]+|--no-prompt"
)


def runner_words(args: list[str]) -> list[str]:
    """A runner's words (after `run`) up to the program it runs, that one included: the words
    after it are the program's own arguments (`uv run scripts/probe.py --base-url
    https://api.example.com`). An option not known to take no value may take the next word, so
    the program is looked for past it."""
    after_option = False
    for index, arg in enumerate(args):
        if arg.startswith("-"):
            after_option = "=" not in arg and not _RUN_FLAGS_RE.fullmatch(arg)
            continue
        if not after_option:
            return args[: index + 1]
        after_option = False
    return args


def runs_a_url(args: list[str]) -> bool:
    """Whether a runner's words (after `run`) run code from an address: the program it runs, or
    an option's value before it (`--with https://…/pkg.whl`)."""
    return any(arg.startswith(("http://", "https://")) for arg in runner_words(args))


def _installs(cmd: Command) -> list[CommandFinding]:
    name, argv = cmd.name, cmd.argv
    sub = argv[0] if argv else ""
    if name in ("pip", "pip3") or re.match(r"^pip3\.\d+$", name):
        return _pip(cmd, argv) if sub in ("install", "download", "wheel") else []
    if name in ("python", "python3") and argv[:2] == ["-m", "pip"]:
        return _pip(cmd, argv[2:]) if argv[2:3] == ["install"] else []
    if name in ("uvx", "pipx") or (name == "uv" and sub in ("tool", "run")):
        # uvx and uv run: what the program is given is its own (an address it reads, a page)
        runs = name == "uvx" or sub == "run"
        words = runner_words(argv if name == "uvx" else argv[1:]) if runs else argv
        specs = _value(words, ("--from", "--spec", "--with"))
        out = []
        for spec in specs + [a for a in words if a.startswith(("git+", "https://", "http://"))]:
            if (
                spec.startswith(("git+", "http://", "https://"))
                and host_of(spec.removeprefix("git+")) not in KNOWN_INDEX_HOSTS
            ):
                out.append(
                    CommandFinding(
                        "remote-install",
                        "warning",
                        f"runs a tool straight from "
                        f"{host_of(spec.removeprefix('git+')) or spec}: {_shown(cmd)}",
                        cmd.line,
                    )
                )
                break
        if name != "uvx" and "install" in argv[:2]:
            out += _pip(cmd, argv)
        return out
    if name in ("uv", "poetry", "pdm", "rye", "conda", "mamba", "micromamba"):
        if "install" in argv[:3] or "add" in argv[:2] or ("run" in argv[:1] and "--with" in argv):
            return _pip(cmd, argv)
        return []
    if name in ("npm", "pnpm", "yarn", "bun", "cnpm"):
        if sub in ("install", "i", "add", "isntall", "ci") or (name == "yarn" and sub == "global"):
            return _npm(cmd, argv)
        if sub in ("exec", "dlx", "x"):
            return _npx(cmd, argv[1:])
        return []
    if name in ("npx", "bunx"):
        return _npx(cmd, argv, flags_first=True)
    if name == "pnpx":
        return _npx(cmd, argv)
    if name == "cargo" and sub == "install":
        for url in _value(argv, ("--git", "--registry", "--index")):
            return [
                CommandFinding(
                    "remote-install",
                    "warning",
                    f"builds and installs a crate from {host_of(url) or url}: {_shown(cmd)}",
                    cmd.line,
                )
            ]
        return []
    if name == "go" and sub in ("install", "get", "run"):
        out = []
        for arg in argv[1:]:
            if "@" in arg and not arg.startswith(_GO_OWN):
                version = arg.rsplit("@", 1)[1]
                if version in ("latest", "master", "main", "HEAD"):
                    out.append(
                        CommandFinding(
                            "remote-install",
                            "warning",
                            f"builds the newest {arg.rsplit('@', 1)[0]} (not pinned): "
                            f"{_shown(cmd)}",
                            cmd.line,
                        )
                    )
        return out
    if name == "gem" and sub == "install":
        out = []
        for url in _value(argv, ("--source", "-s", "--clear-sources")):
            if _unknown_host(url):
                out.append(
                    CommandFinding(
                        "remote-install",
                        "warning",
                        f"installs a gem from {host_of(url) or url}: {_shown(cmd)}",
                        cmd.line,
                    )
                )
        return out
    if name == "brew" and sub == "tap" and len(argv) > 1:
        return [
            CommandFinding(
                "remote-install",
                "warning",
                f"adds a third-party Homebrew tap {argv[1]}: {_shown(cmd)}",
                cmd.line,
            )
        ]
    if (
        name == "brew"
        and sub == "install"
        and any(a.count("/") >= 2 and "://" not in a for a in argv[1:])
    ):
        return [
            CommandFinding(
                "remote-install",
                "warning",
                f"installs from a third-party Homebrew tap: {_shown(cmd)}",
                cmd.line,
            )
        ]
    if name == "deno" and sub in ("run", "install") and any("://" in a for a in argv[1:]):
        url = next(a for a in argv[1:] if "://" in a)
        return [
            CommandFinding(
                "remote-install",
                "warning",
                f"runs code from {host_of(url) or url}: {_shown(cmd)}",
                cmd.line,
            )
        ]
    if name in ("add-apt-repository", "apt-key") or (name == "apt-key" and sub == "add"):
        return [
            CommandFinding(
                "remote-install", "warning", f"adds a package source: {_shown(cmd)}", cmd.line
            )
        ]
    return []


# Files and folders whose content runs later by itself: at login, on a timer, on a git event.
_PERSIST_PATH_RE = re.compile(
    r"(?:^|[/\\~])\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|"
    r"kshrc|cshrc|tcshrc|inputrc)\b|config/fish/config\.fish|/etc/(?:profile|bash\.bashrc|"
    r"zsh/zshrc|environment|rc\.local|ld\.so\.preload)|/etc/profile\.d/|/etc/cron|"
    r"/var/spool/cron|Library/Launch(?:Agents|Daemons)|/etc/systemd/|\.config/systemd/|"
    r"\.config/autostart|\.git/hooks/|/etc/init\.d/|\.ssh/authorized_keys|"
    r"\\Start Menu\\Programs\\Startup|CurrentVersion\\Run",
    re.IGNORECASE,
)


def path_persistence(path: str) -> str | None:
    """What a path starts by itself (a shell rc file, a cron table, a launch agent, a git hook),
    or None."""
    match = _PERSIST_PATH_RE.search(path)
    return match.group(0) if match else None


def _persistence(cmd: Command) -> list[CommandFinding]:
    name, argv = cmd.name, cmd.argv
    what = None
    if name == "crontab" and not any(a in ("-l", "-r", "-e", "-i") for a in argv):
        what = "installs a cron table"
    elif name == "launchctl" and argv[:1] in (["load"], ["bootstrap"], ["enable"]):
        what = "loads a launch agent"
    elif name == "systemctl" and "enable" in argv:
        what = "enables a service at boot"
    elif name == "schtasks" and any(a.lower() == "/create" for a in argv):
        what = "creates a scheduled task"
    elif name == "reg" and argv[:1] == ["add"] and any("\\run" in a.lower() for a in argv):
        what = "adds a Run key"
    elif name == "git" and "config" in argv[:3] and "core.hooksPath" in argv:
        what = "points git's hooks elsewhere"
    elif name in ("cp", "mv", "ln", "install", "tee") or name == "echo":
        for arg in argv:
            if name == "echo" and any(c.isspace() for c in arg):
                continue  # a message for the reader ("please add to ~/.zshrc") names the file
            found = path_persistence(arg)
            if found and not arg.startswith("-"):
                what = f"writes {found}"
                break
    if what is None:
        return []
    severity = "error" if "authorized_keys" in what else "warning"
    return [CommandFinding("persistence", severity, f"{what}: {_shown(cmd)}", cmd.line)]


def _security_off(cmd: Command) -> list[CommandFinding]:
    name, argv = cmd.name, cmd.argv
    text = " ".join(argv)
    what = None
    if name == "chmod" and re.search(r"(?:^|\s)(?:-R\s+)?(?:0?777|a\+rwx|ugo\+rwx|o\+w)\b", text):
        what = "makes files writable by everyone"
    elif name == "git" and "--no-verify" in argv:
        what = "skips git's hooks"
    elif (
        name == "git" and "config" in argv[:3] and re.search(r"http\.sslVerify\s+false", text, re.I)
    ):
        what = "turns off TLS checks for git"
    elif name in ("npm", "yarn", "pnpm") and re.search(r"strict-ssl\s+false", text):
        what = "turns off TLS checks for npm"
    elif name == "setenforce" and argv[:1] in (["0"], ["Permissive"]):
        what = "turns SELinux off"
    elif name == "ufw" and argv[:1] == ["disable"]:
        what = "turns the firewall off"
    elif (
        name == "systemctl"
        and any(a in ("stop", "disable", "mask") for a in argv)
        and re.search(
            r"firewalld|ufw|apparmor|auditd|clamav|falcon|crowdstrike|defender|selinux", text, re.I
        )
    ):
        what = "stops a security service"
    elif name in ("iptables", "ip6tables") and ("-F" in argv or "--flush" in argv):
        what = "flushes the firewall rules"
    elif name == "spctl" and "--master-disable" in argv:
        what = "turns Gatekeeper off"
    elif name == "csrutil" and argv[:1] == ["disable"]:
        what = "turns System Integrity Protection off"
    elif name in ("Set-MpPreference", "set-mppreference") and re.search(r"-Disable\w+", text):
        what = "turns Windows Defender off"
    elif name == "netsh" and "firewall" in text and ("off" in argv or "disable" in argv):
        what = "turns the firewall off"
    elif any(
        a
        in (
            "--dangerously-skip-permissions",
            "--no-sandbox",
            "--disable-sandbox",
            "--dangerously-bypass-approvals-and-sandbox",
            "--yolo",
        )
        for a in argv
    ):
        what = "runs without its sandbox or permission checks"
    if name in ("rm", "shred", "truncate") and re.search(
        r"/var/log\b|\.bash_history|\.zsh_history|/var/audit|\.local/share/recently-used|wtmp|btmp|lastlog",
        text,
    ):
        what = "deletes logs or shell history (covers its tracks)"
    elif name == "history" and "-c" in argv:
        what = "clears the shell history"
    elif name == "journalctl" and any(a.startswith("--vacuum") or a == "--rotate" for a in argv):
        what = "deletes the system journal"
    for assign in cmd.assigns:
        if re.match(r"(?:HISTFILE=/dev/null|HISTSIZE=0|HISTFILESIZE=0)", assign):
            what = f"stops the shell history ({assign})"
        if re.match(
            r"(?:NODE_TLS_REJECT_UNAUTHORIZED=0|PYTHONHTTPSVERIFY=0|GIT_SSL_NO_VERIFY=)", assign
        ):
            what = f"turns off TLS checks ({assign})"
    if what is None:
        return []
    # Switching the machine's own protection off, or wiping the traces, is no step a task needs.
    hostile = what.startswith(_HOSTILE_OFF)
    severity = "error" if hostile else "warning"
    return [CommandFinding("security-disable", severity, f"{what}: {_shown(cmd)}", cmd.line)]


_HOSTILE_OFF = (
    "turns SELinux off", "turns the firewall off", "stops a security service",
    "flushes the firewall", "turns Gatekeeper off", "turns System Integrity Protection off",
    "turns Windows Defender off", "deletes logs", "clears the shell history",
    "deletes the system journal", "stops the shell history",
)  # fmt: skip


# Settings that choose where every later install comes from.
_INDEX_KEYS_RE = re.compile(
    r"(?:^|[.:])(?:registry|npmRegistryServer|index-url|extra-index-url|find-links|index_url)$",
    re.I,
)
_INDEX_VARIABLES = frozenset(
    {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_INDEX",
     "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "NPM_CONFIG_REGISTRY", "YARN_NPM_REGISTRY_SERVER",
     "YARN_REGISTRY", "POETRY_REPOSITORIES", "PNPM_REGISTRY", "GOPROXY", "BUN_CONFIG_REGISTRY",
     "CONDA_CHANNEL_ALIAS", "CARGO_REGISTRIES_CRATES_IO_PROTOCOL"}
)  # fmt: skip


_NAMED_SOURCES = frozenset(
    {"poetry source", "conda channel", "gem source", "bundle mirror", "git url rewrite"}
)
# Sources of the system's packages and NuGet feeds (graded by buildfiles.source_severity).
_SYSTEM_SOURCES = frozenset({"system package source", "nuget source"})


def _index_change(cmd: Command) -> list[CommandFinding]:
    """``npm config set registry URL``, ``pip config set global.index-url URL``, ``poetry
    source add NAME URL``, ``export PIP_INDEX_URL=URL``: installs sent elsewhere for good."""
    from chimera_cards._scan.buildfiles import INDEX_RULE, index_severity, source_severity

    argv = [a for a in cmd.argv if not a.startswith("-")]
    if cmd.name in ("python", "python3") and argv[:1] == ["pip"]:
        argv = argv[1:]
    pairs: list[tuple[str, str]] = []
    if cmd.name in ("npm", "pnpm", "yarn", "pip", "pip3", "python", "python3", "uv"):
        rest = (
            argv[2:] if argv[:2] == ["config", "set"] else argv[1:] if argv[:1] == ["set"] else []
        )
        if len(rest) >= 2:
            pairs.append((rest[0], rest[1]))
        elif len(rest) == 1 and "=" in rest[0]:
            key, _, value = rest[0].partition("=")
            pairs.append((key, value))
    elif cmd.name == "poetry" and argv[:2] == ["source", "add"] and len(argv) >= 4:
        pairs.append(("poetry source", argv[3]))
    elif cmd.name == "go" and argv[:1] == ["env"] and "-w" in cmd.argv:
        for arg in argv[1:]:  # go env -w GOPROXY=https://…,direct
            key, _, value = arg.partition("=")
            pairs += [(key, v) for v in re.split(r"[,|]", value) if key.upper() == "GOPROXY"]
    elif cmd.name in ("conda", "mamba", "micromamba") and argv[:1] == ["config"]:
        # conda config --add channels URL, --set channel_alias URL
        pairs += [("conda channel", a) for a in argv[1:] if "://" in a]
    elif cmd.name == "git" and argv[:1] == ["config"]:
        # git config --global url."https://mirror/".insteadOf https://github.com/: every clone
        # and fetch of those repositories goes to the mirror.
        pairs += [
            ("git url rewrite", a.split(".", 1)[1].rsplit(".", 1)[0])
            for a in argv[1:]
            if a.lower().startswith("url.") and a.lower().endswith((".insteadof", ".pushinsteadof"))
        ]
    elif cmd.name == "gem" and argv[:1] == ["sources"]:
        # gem sources --add URL (a --remove beside it takes another URL away, not this one)
        pairs += [("gem source", u) for u in _gem_added(cmd.argv)]
    elif cmd.name == "bundle" and argv[:1] == ["config"] and len(argv) >= 3:
        # bundle config [set] mirror.https://rubygems.org URL
        setting = argv[2:] if argv[1] == "set" else argv[1:]
        if len(setting) >= 2 and setting[0].lower().startswith("mirror."):
            pairs.append(("bundle mirror", setting[1]))
    elif (cmd.name == "dotnet" and argv[:3] == ["nuget", "add", "source"]) or (
        cmd.name in ("nuget", "nuget.exe") and argv[:2] == ["sources", "add"]
    ):
        pairs += [("nuget source", a) for a in cmd.argv if "://" in a]
    elif cmd.name in ("add-apt-repository", "yum-config-manager", "zypper") or (
        cmd.name in ("dnf", "yum") and argv[:1] == ["config-manager"]
    ):
        # add-apt-repository 'deb URL suite main', dnf config-manager --add-repo URL
        pairs += [
            ("system package source", u)
            for a in cmd.argv
            for u in re.findall(r"https?://[^\s'\"]+", a)
        ]
    elif cmd.name in ("export", "setx", "setenv"):
        for arg in argv:
            key, _, value = arg.partition("=")
            if key.upper() in _INDEX_VARIABLES and value:
                pairs += [(key, v) for v in re.split(r"[,|]", value) if v]
        if cmd.name == "setx" and len(argv) >= 2 and argv[0].upper() in _INDEX_VARIABLES:
            pairs.append((argv[0], argv[1]))
    out = []
    for key, url in pairs:
        named = key in _NAMED_SOURCES | _SYSTEM_SOURCES or key.upper() in _INDEX_VARIABLES
        if not named and not _INDEX_KEYS_RE.search(key):
            continue
        graded = (source_severity if key in _SYSTEM_SOURCES else index_severity)(url)
        if graded is not None:
            out.append(
                CommandFinding(
                    INDEX_RULE,
                    graded[0],
                    f"points installs at {graded[1]} for good: {_shown(cmd)}",
                    cmd.line,
                )
            )
    return out


def _gem_added(argv: list[str]) -> list[str]:
    added = [
        a.split("=", 1)[1] if "=" in a else argv[i + 1] if i + 1 < len(argv) else ""
        for i, a in enumerate(argv)
        if a in ("-a", "--add") or a.startswith("--add=")
    ]
    if not added and not any(a in ("-r", "--remove") or a.startswith("--remove") for a in argv):
        added = list(argv)
    return [a for a in added if "://" in a]


def command_findings(commands: list[Command]) -> list[CommandFinding]:
    """The install, persistence and security-control findings of a unit's commands.

    Args:
        commands: as the shell walk gathered them.
    Returns:
        One finding per command and rule, in order.
    """
    out: list[CommandFinding] = []
    for cmd in commands:
        out += _index_change(cmd)
        out += _installs(cmd)
        out += _persistence(cmd)
        out += _security_off(cmd)
    # export OPENAI_BASE_URL=https://relay…: every later client call carries the key there (a
    # gateway's own key exported anywhere in the unit makes it the user's choice of provider)
    exported = [a.split("=", 1)[0] for c in commands if c.name == "export" for a in c.argv]
    for cmd in commands:
        if cmd.name == "export":
            out += _redirects(cmd, exported)
    return out


def _redirects(cmd: Command, keys: list[str]) -> list[CommandFinding]:
    return [
        CommandFinding("secret-exfiltration", "error", what, cmd.line)
        for key, _, value in (a.partition("=") for a in cmd.argv)
        if (what := redirect(key, value, keys)) is not None
    ]


# git settings whose value git runs as a command (on `git status`, on a push, for a password):
# set to a download or a send, every later git command runs it.
_GIT_RUN_KEYS_RE = re.compile(
    r"^(?:core\.(?:fsmonitor|sshcommand|pager|editor|askpass)|credential\.(?:[^\s]+\.)?helper|"
    r"diff\.external|sequence\.editor|gpg\.(?:ssh\.)?program|alias\.[\w-]+|pager\.[\w-]+|"
    r"filter\.[^\s]+\.(?:clean|smudge|process)|merge\.[^\s]+\.driver|diff\.[^\s]+\.(?:textconv|command)|"
    r"uploadpack\.packobjectshook|remote\.[^\s]+\.(?:receivepack|uploadpack))$",
    re.IGNORECASE,
)
# Keys whose command is handed the user's credentials on its input.
GIT_SECRET_KEYS_RE = re.compile(r"^(?:credential\.(?:[^\s]+\.)?helper|core\.askpass)$", re.I)
_GIT_CONFIG_VALUE_FLAGS = ("--file", "-f", "--blob", "--type", "--default", "--comment")


def git_config_command(argv: list[str]) -> tuple[str, str] | None:
    """``git config [options] KEY VALUE`` setting a key whose value git runs: (key, the shell
    code it runs), or None. A credential helper named bare (``cache``, ``osxkeychain``) is git's
    own program and a boolean ``core.fsmonitor`` its built-in daemon; neither is code."""
    if "config" not in argv[:3]:
        return None
    words: list[str] = []
    rest = argv[argv.index("config") + 1 :]
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word in _GIT_CONFIG_VALUE_FLAGS:
            skip = True
        elif word.startswith("--unset") or word in ("--get", "--get-all", "-l", "--list"):
            return None
        elif not word.startswith("-"):
            words.append(word)
    if len(words) < 2 or not _GIT_RUN_KEYS_RE.match(words[0]):
        return None
    key, value = words[0].lower(), words[1].strip()
    if value.startswith("!"):
        return key, value[1:]
    if key.startswith("alias."):
        return None  # an alias without "!" is a git subcommand
    if key.startswith("credential.") and not value.startswith(("/", "~", "$")) and " " not in value:
        return None
    if key == "core.fsmonitor" and value.lower() in ("true", "false", "0", "1", ""):
        return None
    return key, value
