"""The shell walk's base: a unit's state (variables, aliases, remotes, descriptors, the folder
``cd`` went to) and the grammar below a command: words and expansions, statements, loops,
assignments and redirects, and the paths they read and write; and which language a command
name runs (``_interpreter``). The commands themselves are read by
:mod:`chimera_cards._scan.shell`'s walker, which builds on this class."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from chimera_cards._scan.sensitive import (
    Send,
    Taint,
    credential_in,
    is_secret_name,
    source_taint,
    vault_token,
)
from chimera_cards._scan.shellfacts import (
    MAX_COMMANDS,
    Command,
    Embed,
    Out,
    ShellFacts,
    Word,
)
from chimera_cards._scan.shellsteps import (
    CREDENTIAL_PATH_VARIABLES,
    drop_discarded_lookup,
    printed_text,
)

# The user's shell named by its variable (a Makefile's $(SHELL) reads as ${SHELL}) is a shell.
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh", "busybox",
                     "$SHELL", "${SHELL}", "$BASH", "${BASH}"})  # fmt: skip
_PYTHONS = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*|py)$")
_NODES = frozenset({"node", "nodejs", "deno", "bun"})
_OTHER_INTERPRETERS = frozenset({"perl", "ruby", "php", "pwsh", "powershell", "lua", "osascript"})


_DEV_TCP_RE = re.compile(r"/dev/(?:tcp|udp)/([^/\s]+)/")
_HEX_ESCAPES_RE = re.compile(r"(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3}){8,}")


def _interpreter(name: str) -> str | None:
    if name in _SHELLS:
        return "shell"
    if _PYTHONS.match(name):
        return "python"
    if name in _NODES:
        return "javascript"
    if name in _OTHER_INTERPRETERS:
        return "other"
    return None


class _WalkerBase:
    """A unit's state, and words, loops, redirects and the paths they read and write."""

    # Defined by _Walker, which builds on this class (a loop's body holds commands).
    command: Callable[[Any, Out], Out]
    _open_descriptor: Callable[[Any], None]

    def __init__(
        self,
        facts: ShellFacts,
        *,
        first_line: int,
        depth: int,
        variables: dict[str, Out],
        embed: Embed | None,
    ) -> None:
        self.facts = facts
        self.first_line = first_line
        self.depth = depth
        self.vars = variables
        self.embed = embed
        self.count = 0
        self.texts = facts.texts  # literal values of variables (see ShellFacts.texts)
        self.remotes: dict[str, str] = {}  # git remotes this unit adds: name -> URL
        self.committed: set[Taint] = set()  # secrets written into commit messages
        self.aliases: dict[str, list[str]] = {}  # alias name='command words
        self.fds: dict[str, str] = {}  # exec 3<>/dev/tcp/host/port: descriptor -> path
        self.cwd = "."  # the folder the last cd went to, as written
        self.piped = ""  # the text of the pipeline stage before the one being read

    def line(self, node: Any) -> int:
        return self.first_line + node.start_point[0]

    # --- words -----------------------------------------------------------------------------

    def word(self, node: Any) -> Word:
        kind = node.type
        if kind == "raw_string":
            return Word(node.text.decode("utf-8", "replace")[1:-1], Out())
        if kind in ("word", "number"):
            text = node.text.decode("utf-8", "replace")
            if "\\" in text:
                text = re.sub(r"\\(.)", r"\1", text)
            return Word(text, Out())
        if kind == "ansi_c_string":
            raw = node.text.decode("utf-8", "replace")[2:-1]
            out = Out(decoded=bool(_HEX_ESCAPES_RE.search(raw)))
            try:
                text = raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
            except UnicodeDecodeError:
                text = raw
            return Word(text, out)
        if kind == "simple_expansion" or kind == "expansion":
            return self.expansion(node)
        if kind in ("command_substitution", "process_substitution"):
            out = Out()
            for child in node.named_children:
                out.merge(self.statement(child, Out()))
            printed = printed_text(node) if kind == "command_substitution" else None
            return Word(printed if printed is not None else "$(…)", out)
        # string, concatenation, and anything else made of parts
        parts: list[str] = []
        out = Out()
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                parts.append(child.text.decode("utf-8", "replace"))
                continue
            sub = self.word(child)
            parts.append(sub.text)
            out.merge(sub.out)
        return Word("".join(parts), out)

    def expansion(self, node: Any) -> Word:
        name = ""
        for child in node.named_children:
            if child.type in ("variable_name", "special_variable_name"):
                name = child.text.decode("utf-8", "replace")
                break
        out = Out()
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution", "expansion"):
                out.merge(self.word(child).out)
        if name in self.vars:
            out.merge(self.vars[name])
        elif name and is_secret_name(name):
            out.taint.add(Taint("env", name))
        simple = node.type == "simple_expansion" or len(node.named_children) == 1
        if name in self.texts and simple:
            return Word(self.texts[name], out)
        if name in CREDENTIAL_PATH_VARIABLES and name not in self.vars and simple:
            return Word(CREDENTIAL_PATH_VARIABLES[name], out)
        return Word(f"${{{name}}}" if name else node.text.decode("utf-8", "replace"), out)

    # --- statements ------------------------------------------------------------------------

    def statement(self, node: Any, stdin: Out) -> Out:
        self.count += 1
        if self.count > MAX_COMMANDS:
            return Out()
        kind = node.type
        if kind == "command":
            return self.command(node, stdin)
        if kind == "pipeline":
            out = stdin
            for child in node.named_children:
                out = self.statement(child, out)
                self.piped = child.text.decode("utf-8", "replace")[:4096]
            self.piped = ""
            return out
        if kind == "redirected_statement":
            return self.redirected(node, stdin)
        if kind == "variable_assignment":
            self.assign(node)
            return Out()
        if kind == "declaration_command":
            out = Out()
            assigned: list[Word] = []
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child)
                    assigned.append(Word(child.text.decode("utf-8", "replace"), Out()))
                elif child.type not in ("variable_name",):
                    out.merge(self.word(child).out)
            head = node.children[0].text.decode("utf-8", "replace") if node.children else ""
            if head == "export" and assigned and len(self.facts.commands) < MAX_COMMANDS:
                self.facts.commands.append(Command("export", assigned, self.line(node)))
            return out
        if kind == "for_statement":
            return self.for_loop(node, stdin)
        if kind == "function_definition":
            self.fork_bomb(node)
        if kind in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            return Out()
        if kind in (
            "command_substitution",
            "process_substitution",
            "string",
            "concatenation",
            "simple_expansion",
            "expansion",
        ):
            return self.word(node).out
        out = Out()
        for child in node.named_children:
            # A subshell or a loop reads the pipe it is given (… | while read f; do …).
            shares = kind in ("subshell", "while_statement", "until_statement", "do_group")
            out.merge(self.statement(child, stdin if shares else Out()))
        return out

    def fork_bomb(self, node: Any) -> None:
        """``:(){ :|:& };:``: a function that pipes itself into itself in the background."""
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = name_node.text.decode("utf-8", "replace")
        text = body.text.decode("utf-8", "replace")
        if re.search(rf"(?<![\w-]){re.escape(name)}\s*\|\s*{re.escape(name)}\s*&", text):
            self.facts.fork_bombs.append((self.line(node), f"{name}() {{ {name}|{name}& }}"))

    def assign(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None:
            return
        name = name_node.text.decode("utf-8", "replace")
        word = self.word(value) if value is not None else None
        out = word.out if word is not None else Out()
        self.texts.pop(name, None)
        if word is not None:
            text = word.text
            if out.taint and value is not None:  # one vault secret named for its service
                out.taint = vault_token(name, value.text.decode("utf-8", "replace"), out.taint)
            if credential_in(text):
                out.taint.add(Taint("credential", credential_in(text) or text))
                out.taint.add(Taint("path", text))
            if "$(" not in text and len(text) < 512:
                self.texts[name] = text
        self.vars[name] = out

    def for_loop(self, node: Any, stdin: Out) -> Out:
        variable = node.child_by_field_name("variable")
        values = Out()
        for child in node.children_by_field_name("value"):
            word = self.word(child)
            values.merge(word.out)
            found = credential_in(word.text)
            if found:
                values.taint.add(source_taint(found))
        if variable is not None:
            self.vars[variable.text.decode("utf-8", "replace")] = values
        body = node.child_by_field_name("body")
        return self.statement(body, stdin) if body is not None else Out()

    def redirected(self, node: Any, stdin: Out) -> Out:
        body = node.child_by_field_name("body")
        feed = stdin.copy()
        outputs: list[tuple[str, Any]] = []
        heredoc: str | None = None
        heredoc_line = 0
        for redirect in node.children_by_field_name("redirect"):
            kind = redirect.type
            if kind == "heredoc_redirect":
                body_node = next(
                    (c for c in redirect.named_children if c.type == "heredoc_body"), None
                )
                if body_node is not None:
                    heredoc = body_node.text.decode("utf-8", "replace")
                    heredoc_line = self.line(body_node)
                    feed.merge(self.word(body_node).out)
                for inner in redirect.named_children:
                    if inner.type == "file_redirect":
                        outputs.append(self.file_redirect(inner, feed))
                continue
            if kind == "herestring_redirect":
                for child in redirect.named_children:
                    feed.merge(self.word(child).out)
                continue
            if kind == "file_redirect":
                self._open_descriptor(redirect)
                op = redirect.children[0].text.decode() if redirect.children else ">"
                if op.startswith("<") and op != "<&":
                    dest = redirect.child_by_field_name("destination")
                    if dest is not None:
                        feed.merge(self.read_path(self.word(dest), self.line(redirect)))
                elif not op.startswith("2"):  # 2>/dev/null, 2>&1: the error stream only
                    outputs.append(self.file_redirect(redirect, feed))
        if body is None:
            return feed
        if heredoc is not None and body.type == "command":
            self.pending_heredoc = (heredoc, heredoc_line)
        before, reads = len(self.facts.commands), len(self.facts.reads)
        out = self.statement(body, feed)
        self.pending_heredoc = None
        drop_discarded_lookup(self.facts, before, reads, [path for path, _ in outputs])
        written = heredoc or " ".join(
            " ".join([c.name, *c.argv]) for c in self.facts.commands[before:]
        )
        for path, redirect in outputs:
            if path:
                self.write(path, out, self.line(redirect), written[:4096])
                if _DEV_TCP_RE.search(path) and body.type == "command":
                    name = self.facts.commands[-1].name if self.facts.commands else ""
                    if _interpreter(name) is not None:
                        self.facts.reverse_shell.append((self.line(node), f"{name} to {path}"))
        return Out() if any(path for path, _ in outputs) else out

    pending_heredoc: tuple[str, int] | None = None

    def file_redirect(self, redirect: Any, feed: Out) -> tuple[str, Any]:
        dest = redirect.child_by_field_name("destination")
        if dest is not None and dest.type == "number":
            return self.fds.get(dest.text.decode("utf-8", "replace"), ""), redirect
        if dest is None:
            return "", redirect
        return self.word(dest).text, redirect

    def read_path(self, word: Word, line: int) -> Out:
        out = word.out.copy()
        path = word.text
        found = credential_in(path)
        if found:
            taint = source_taint(found)
            out.taint.add(taint)
            self.facts.reads.append((line, taint))
        known = self.facts.tainted_files.get(path)
        if known is not None:
            out.merge(known)
        for taint in list(out.taint):
            if taint.kind == "path":
                out.taint.discard(taint)
        return out

    def read_taint(self, path: str, line: int) -> set[Taint]:
        return self.read_path(Word(path, Out()), line).taint

    def saved(self, path: str) -> Out | None:
        """What the file at ``path`` holds, as far as earlier steps wrote it (``./x`` and ``x``
        are one file)."""
        files = self.facts.tainted_files
        first = files.get(path)
        second = files.get(path[2:] if path.startswith("./") else "./" + path)
        if first is None or second is None:
            return first or second
        return first.copy().merge(second)

    def write(self, path: str, content: Out, line: int, text: str = "") -> None:
        self.facts.writes.append((line, path, content, text))
        if content.taint or content.decoded or content.downloaded:
            self.facts.tainted_files.setdefault(path, Out()).merge(content)
        elif path not in self.facts.tainted_files and not path.endswith("/"):
            # A file the page writes itself (cat > ./afl++ <<'EOF'), in a folder that came off
            # the network: what runs is the text written here, not the download.
            self.facts.tainted_files[path] = Out()
        tcp = _DEV_TCP_RE.search(path)
        if tcp:
            self.facts.sends.append(Send(line, tcp.group(1), "/dev/tcp", body=set(content.taint)))
