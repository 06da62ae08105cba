"""What the shell reader carries and gathers: each word's text and content (sensitive data,
decoded or downloaded), each command as run, and a unit's facts for the rules to grade."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from chimera_cards._scan.sensitive import CodeFacts, Taint

_DOTENV = re.compile(r"\.env(?:\.[\w-]+)?")

# Past this many commands in one unit the rest are not looked at one by one (the findings of
# the first ones are enough, and a megabyte of ``curl`` words stays linear and small).
MAX_COMMANDS = 200_000


@dataclass
class Out:
    """What a stage, word or variable holds: sensitive data, and whether it is decoded or
    downloaded content (run later, either is code nobody reviewed)."""

    taint: set[Taint] = field(default_factory=set)
    decoded: bool = False
    downloaded: bool = False

    def merge(self, other: Out | None) -> Out:
        if other is not None:
            self.taint |= other.taint
            self.decoded = self.decoded or other.decoded
            self.downloaded = self.downloaded or other.downloaded
        return self

    def copy(self) -> Out:
        return Out(set(self.taint), self.decoded, self.downloaded)

    def attribute(self, name: str) -> Out:
        """What ``value.name`` holds. A path's ``parent`` is the folder it is in: a dotenv file's
        folder is the project it configures, so that store's taint stays with the file (the
        folder of any other store, ``~/.ssh``, keeps it)."""
        if name not in ("parent", "parents"):
            return self
        kept = {t for t in self.taint if t.kind != "credential" or not _DOTENV.fullmatch(t.what)}
        return Out(kept, self.decoded, self.downloaded)


# Reads code of another language a unit runs: its language, text, first line and what its
# arguments carry (``python -c CODE {}``: ``sys.argv``), returning what the code prints.
Embed = Callable[[str, str, int, Out], Out]


@dataclass
class Word:
    """One word of a command: its text with quotes removed (expansions kept as written) and what
    it holds."""

    text: str
    out: Out


@dataclass
class Command:
    """One command as run: its name (wrappers such as ``sudo`` and ``env`` taken off), arguments,
    line, and leading variable assignments (``FOO=1 cmd``)."""

    name: str
    args: list[Word]
    line: int
    assigns: list[str] = field(default_factory=list)
    stdin: Out = field(default_factory=Out)

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.args]

    @property
    def written(self) -> str:
        """The arguments as written, variables named (where a token stands in a call)."""
        return " ".join(self.argv)


@dataclass
class ShellFacts(CodeFacts):
    """What a shell unit does, for the rules to grade."""

    commands: list[Command] = field(default_factory=list)
    writes: list[tuple[int, str, Out, str]] = field(
        default_factory=list
    )  # (line, path, content, text)
    tainted_files: dict[str, Out] = field(default_factory=dict)
    embedded: list[tuple[str, str, int]] = field(default_factory=list)  # (language, code, line)
    output: Out = field(default_factory=Out)
    fork_bombs: list[tuple[int, str]] = field(default_factory=list)
    # Variables' literal values (a=".s"; b="sh": "$HOME/$a$b" reads as ~/.ssh), kept across the
    # code blocks of one page as the variables themselves are: a page's blocks are run in turn,
    # so `API_BASE=https://api.x.io` in one block is the host of `curl "$API_BASE/..."` in the next.
    texts: dict[str, str] = field(default_factory=dict)
    # Programs a download unpacked onto the PATH (folder/name, or folder/* when no member was
    # named) -> the line: a name run in the steps right after is the download run.
    unpacked_on_path: dict[str, int] = field(default_factory=dict)


def basename(word: str) -> str:
    """A command word's program name (``/usr/bin/curl`` and ``C:\\x\\curl`` are ``curl``)."""
    return word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]


def copy_destination(cmd: Command) -> Word | None:
    """The file ``cp``/``mv``/``install`` writes (``cp .env.example .env``): written, not read."""
    if cmd.name not in ("cp", "mv", "install") or any(
        a.text in ("-t", "--target-directory") or a.text.startswith("--target-directory=")
        for a in cmd.args
    ):
        return None
    files = [a for a in cmd.args if not a.text.startswith("-")]
    return files[-1] if len(files) >= 2 else None
