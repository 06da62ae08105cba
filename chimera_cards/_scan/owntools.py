"""The installer of the tool a skill is for: listed, not flagged.

A skill that drives a command-line tool (allowed-tools `Bash(oo *)`) tells the reader how to
install that tool when it is missing: the vendor's installer (`curl -fsSL
https://cli.oomol.com/install.sh | bash` under "install the oo CLI"), the vendor's Homebrew tap
(`brew install dopplerhq/cli/doppler` in a skill named doppler-…), or the tool's repository
(`pipx install https://github.com/<owner>/agent-reach/...` in the skill named agent-reach).
Installing the tool is what the skill is for: the trust it asks is the trust in the skill's
author, as an unflagged `npm i -g <tool>` asks. Only warnings already graded as one of those
shapes shown to the reader over https are listed (info); every hostile shape (root, plain http,
an address, a tunnel, data sent with the request, the pipeline inside another command, a
script's own command) was graded an error before this and is not touched. Why, and what it
leaves an attacker: docs/decisions/scan-published-false-alarms.md, "Round 4, warnings".

The vendor's release archive of the tool, unpacked onto the PATH and run by name (`curl -L
https://github.com/datadog-labs/pup/releases/download/… | tar xz -C /usr/local/bin pup`, then
`pup --version`), is the same install: listed when every address of the recipe is https at the
skill's own GitHub organisation or domain (its `repository`/`homepage`) and one names the tool.
An archive from another host, over http, or of another program stays `download-exec`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chimera_cards._cards.card import Card, code_block_lines
from chimera_cards._scan.findings import ERROR, INFO, WARNING, Finding
from chimera_cards._scan.hidden import PIPE_TO_SHELL_RE
from chimera_cards._scan.installers import INSTALLER_URL_RE
from chimera_cards._scan.sensitive import registrable_domain
from chimera_cards._scan.shellsteps import NEXT_STEPS
from chimera_cards._scan.textruns import led

_MARKDOWN = (".md", ".markdown", ".mdx", ".mdc")

# Commands that run whatever they are given: naming one in allowed-tools names no tool.
_RUN_ANYTHING = frozenset(
    ("bash", "sh", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh", "pwsh", "powershell",
     "cmd", "python", "python3", "py", "node", "perl", "ruby", "php", "iex", "sudo", "doas",
     "su", "env", "xargs", "exec", "eval", "command", "nohup", "timeout", "time", "nice",
     "curl", "wget", "irm", "iwr", "source", "osascript")
)  # fmt: skip
# Words of an installer's address that name how it is served, not what it installs.
_SERVING_WORDS = frozenset(
    ("install", "installer", "get", "cli", "setup", "download", "downloads", "releases",
     "release", "latest", "raw", "main", "master", "www", "sh", "ps1", "script", "scripts", "bin",
     "dl", "static", "cdn", "api", "docs", "stable", "tools", "tool", "app", "sdk", "v1", "v2")
)  # fmt: skip
_BASH_TOOL_RE = re.compile(r"\bBash\(\s*([A-Za-z0-9][\w.+-]*)")
_NAME_WORD_RE = re.compile(r"[a-z0-9]+")
# A presence check: after a code span's backtick, `&&`, `||`, `;`, `if`, `!` or `$(`; or at a
# code block line's start (a sentence's "which" checks for nothing)
_CHECK = r"(?:which|command[ \t]+-v|type[ \t]+-[pP])[ \t]+([A-Za-z][\w.+-]*)(?![\w.+-])"
_PRESENCE_RE = re.compile(led("`&|;i!$", r"(?:`|(?:&&|\|\||;|\bif|!|\$\()[ \t]*)" + _CHECK))
_PRESENCE_LINE_RE = re.compile(r"[ \t]*(?:\$[ \t]+)?" + _CHECK)
# The same at the start of any line of a text: where none is, no code block line holds one.
_PRESENCE_ANY_LINE_RE = re.compile(r"^[ \t]*(?:\$[ \t]+)?" + _CHECK, re.M)


def _checked_programs(body: str) -> set[str]:
    """The programs whose presence a card's body checks (`which clickhousectl`, `command -v
    oo`): a command, not a sentence quoting an error message."""
    found = {m.group(1).lower() for m in _PRESENCE_RE.finditer(body)}
    if _PRESENCE_ANY_LINE_RE.search(body) is None:
        return found  # the body's code blocks need not be found
    lines = body.split("\n")
    for start, end in code_block_lines(body, 1):
        for line in lines[start - 1 : end - 1]:
            if match := _PRESENCE_LINE_RE.match(line):
                found.add(match.group(1).lower())
    return found


@dataclass(frozen=True)
class OwnTools:
    """The tools a skill says it drives: commands its allowed-tools lets it run (named in the
    text that introduces an installer, or in the installer's address), and its name and the
    words of its name (named in the installer's address or package only)."""

    declared: frozenset[str]
    named: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.declared or self.named)


def own_tools(card: Card) -> OwnTools:
    """The tools ``card`` names as its own (see OwnTools)."""
    value = card.frontmatter.get("allowed-tools", card.frontmatter.get("allowed_tools"))
    entries = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    declared = {
        m.group(1).lower()
        for entry in entries
        if isinstance(entry, str)
        for m in _BASH_TOOL_RE.finditer(entry)
    }
    # metadata.tools ("helm,kubectl,pup"): the commands the skill says it drives
    listed = _metadata(card).get("tools")
    words = listed if isinstance(listed, list) else [listed] if isinstance(listed, str) else []
    declared |= {w.lower() for entry in words if isinstance(entry, str)
                 for w in re.split(r"[\s,]+", entry) if re.fullmatch(r"[\w.+-]+", w)}  # fmt: skip
    # a program whose presence SKILL.md checks (`which clickhousectl`, `command -v oo`) is one
    # the skill drives
    declared |= _checked_programs(card.body)
    name = card.name.lower() if isinstance(card.name, str) else ""
    named = {name, *_NAME_WORD_RE.findall(name)} if name else set()
    return OwnTools(
        frozenset(declared - _RUN_ANYTHING),
        frozenset(
            w for w in named - _RUN_ANYTHING - _SERVING_WORDS if len(w) >= 2 and not w.isdigit()
        ),
    )


def _metadata(card: Card) -> dict[str, object]:
    metadata = card.frontmatter.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def vendor_places(card: Card) -> tuple[frozenset[str], frozenset[str]]:
    """The skill's own GitHub (or GitLab) organisations and other registrable domains, from its
    ``repository``/``homepage`` (top level, under ``metadata``, or under a registry's table in
    it: ``metadata.openclaw.homepage``)."""
    orgs: set[str] = set()
    domains: set[str] = set()
    metadata = _metadata(card)
    tables = [v for v in metadata.values() if isinstance(v, dict)]
    for fields in (card.frontmatter, metadata, *tables):
        for key in ("repository", "homepage", "source", "url", "repo"):
            value = fields.get(key)
            match = _URL_RE.match(value) if isinstance(value, str) else None
            if match is None or match.group(1).lower() != "https":
                continue
            host, _, path = match.group(2).lower().partition("/")
            if host in _CODE_HOSTS:
                orgs.update(path.split("/")[:1])
            elif (domain := registrable_domain(host)) is not None:
                domains.add(domain)
    return frozenset(orgs - {""}), frozenset(domains)


_URL_RE = re.compile(r"(\w+)://([^\s\"'`)|;<>]+)")
_CODE_HOSTS = ("github.com", "www.github.com", "gitlab.com")
# Hosts that serve a GitHub organisation's releases and files: the organisation is the path's first
# segment (after repos/ on the API).
_GITHUB_SERVING = ("github.com", "api.github.com", "raw.githubusercontent.com", "gitlab.com")
_RUN_RELEASE_RE = re.compile(r"runs downloaded code \(([\w.+-]+)\)")
_UNPACK_RE = re.compile(r"\b(?:tar|unzip)\b")


def _runs_own_release(
    finding: Finding, text: str, tools: OwnTools, places: tuple[frozenset[str], frozenset[str]]
) -> str | None:
    """The own tool an error run of an unpacked release is (see the module's last paragraph)."""
    match = _RUN_RELEASE_RE.fullmatch(finding.message)
    tool = match.group(1).lower() if match else ""
    if tool not in tools.declared | tools.named or not finding.line:
        return None
    window = text.split("\n")[max(0, finding.line - 2 - NEXT_STEPS) : finding.line - 1]
    urls = [m for line in window for m in _URL_RE.finditer(line)]
    if not urls or not any(_UNPACK_RE.search(line) for line in window):
        return None
    return tool if _own_addresses(urls, places, tool) else None


def _own_addresses(
    urls: list[re.Match], places: tuple[frozenset[str], frozenset[str]], tool: str
) -> bool:
    """Whether every address is https at the skill's own organisation or domain, one naming
    ``tool`` in its path."""
    orgs, domains = places
    names_tool = False
    for url in urls:
        host, _, path = url.group(2).lower().partition("/")
        segments = path.split("/")
        if host == "api.github.com" and segments[0] == "repos":
            segments = segments[1:]
        own = (
            segments[0] in orgs if host in _GITHUB_SERVING else registrable_domain(host) in domains
        )
        if url.group(1).lower() != "https" or not own:
            return False
        names_tool = names_tool or any(s == tool or s.startswith((f"{tool}_", f"{tool}-"))
                                       for s in segments[1:])  # fmt: skip
    return names_tool


# The vendor's installer saved, then run by a shell as the user (`curl … install.sh -o
# /tmp/x.sh`, `sh /tmp/x.sh -b /usr/local/bin`), shown in Markdown: the two-step form of the
# piped installer, listed on the same terms as the release above (a root shell stays flagged).
_RUN_SAVED_RE = re.compile(r"runs downloaded code \((?:ba|z|da|k)?sh [^)]+\)")
_ROOT_RE = re.compile(r"\b(?:sudo|doas|su|pkexec)\b")


def _runs_own_installer(
    finding: Finding, text: str, tools: OwnTools, places: tuple[frozenset[str], frozenset[str]]
) -> str | None:
    """The own tool a shown two-step installer's warning installs, or None (see above)."""
    if not finding.line or not (finding.path or "").lower().endswith(_MARKDOWN):
        return None
    if not _RUN_SAVED_RE.fullmatch(finding.message):
        return None
    window = text.split("\n")[max(0, finding.line - 1 - NEXT_STEPS) : finding.line]
    if any(_ROOT_RE.search(line) for line in window):
        return None
    urls = [m for line in window for m in _URL_RE.finditer(line)]
    if not urls:
        return None
    return next(
        (t for t in sorted(tools.declared | tools.named) if _own_addresses(urls, places, t)), None
    )


def _address_words(url: str) -> set[str]:
    """The host's labels (not its top-level domain) and the path's segments and their stems."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    labels = host.lower().split(":")[0].split(".")[:-1]
    # a host named "get" + the tool (getdbt.com, get.docker.com's one-word form)
    words = set(labels) | {
        label[3:] for label in labels if label.startswith("get") and len(label) > 5
    }
    for part in path.lower().split("/"):
        segment = part.split("?")[0].split("#")[0]
        words.update((segment, segment.rsplit(".", 1)[0]))
    return words - _SERVING_WORDS - {""}


def _names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def _introduction(text: str, line: int, *, markdown: bool) -> str:
    """The words that introduce the command on ``line`` (1-based): in Markdown, the paragraph
    before the code block it is in (past blank lines and other code blocks), or its own
    paragraph; in a script, the comment lines down to it."""
    lines = text.split("\n")
    index = line - 1
    if not markdown:
        start = index
        while start > 0 and lines[start - 1].lstrip().startswith("#") and index - start < 5:
            start -= 1
        return "\n".join(lines[start : index + 1])
    blocks = code_block_lines(text, 1)
    end = index + 1  # the intro paragraph's lines, [start, end)
    inside = next(((a, b) for a, b in blocks if a <= line < b), None)
    if inside is not None:
        at = inside[0] - 2  # the line above the block (0-based)
        while at >= 0:
            block = next(((a, b) for a, b in blocks if a <= at + 1 < b), None)
            if block is not None:
                at = block[0] - 2
            elif not lines[at].strip():
                at -= 1
            else:
                break
        if at < 0:
            return ""
        end = at + 1
    start = end - 1
    while start > 0 and end - start < 5 and lines[start - 1].strip():
        if lines[start].lstrip().startswith("#"):
            break  # a heading starts the paragraph
        start -= 1
    return "\n".join(lines[start:end])


_BREW_TAP_RE = re.compile(r"\bbrew\s+install\s+(?:-\S+\s+)*([\w.-]+)/([\w.-]+)/([\w.@+-]+)")
_BREW_ADD_TAP_RE = re.compile(r"\bbrew\s+tap\s+([\w.-]+)/[\w.-]+")
_BREW_INSTALL_RE = re.compile(r"\bbrew\s+install\s+(?:-\S+\s+)*([\w.@+-]+)(?![\w./@+-])")
_REPO_URL_RE = re.compile(
    r"(?:git\+)?(\w+)://(?:www\.)?(github\.com|gitlab\.com)/([\w.-]+)/([\w.-]+)"
)


def _repository_tool(match: re.Match, tools: OwnTools) -> str | None:
    """The own tool a repository is: named as the tool, as a declared command's companion
    (`dbt-labs/dbt-autofix` in a skill that runs `dbt`), or as the skill itself by its owner
    and name (`google/adk-python` for the skill google-adk-python) or by its name's words run
    together (`TransformerLens` for transformer-lens-interpretability)."""
    owner, repo = match.group(3).lower(), match.group(4).lower().removesuffix(".git")
    if repo in tools.declared | tools.named:
        return repo
    if any(repo.startswith(f"{tool}-") for tool in tools.declared):
        return repo
    if f"{owner}-{repo}" in tools.named:
        return repo
    # TransformerLens for transformer-lens-…: the repository's name is name words run together
    words = _NAME_WORD_RE.findall(max(tools.named, key=len)) if tools.named else []
    glued = {"".join(words[i:j]) for i in range(len(words)) for j in range(i + 2, len(words) + 1)}
    return repo if repo in glued else None


def _installs_own_tool(
    finding: Finding, text: str, tools: OwnTools, places: tuple[frozenset[str], frozenset[str]]
) -> str | None:
    """The own tool a shown installer's warning installs, or None (see the section above)."""
    lines = text.split("\n")
    if not finding.line or finding.line > len(lines):
        return None
    code = lines[finding.line - 1]
    markdown = finding.path is not None and finding.path.lower().endswith(_MARKDOWN)
    if finding.rule == "pipe-to-shell":
        match = PIPE_TO_SHELL_RE.search(code)
        url = INSTALLER_URL_RE.search(match.group(0)) if match else None
        if url is None or (url.group(1) or "").lower() != "https://":
            return None
        words = _address_words(url.group(0))
        for tool in sorted(tools.declared | tools.named):
            # the tool's name, the vendor's name for it (render-oss/cli for render), or the
            # vendor whose control tool it is (clickhousectl from clickhouse.com/cli)
            if (
                tool in words
                or any(w.startswith(f"{tool}-") for w in words)
                or any(tool in (f"{w}ctl", f"{w}cli", f"{w}-cli") for w in words if len(w) >= 4)
            ):
                return tool
        intro = _introduction(text, finding.line, markdown=markdown)
        return next((t for t in sorted(tools.declared) if _names_word(intro, t)), None)
    if "Homebrew tap" in finding.message and (tap := _BREW_ADD_TAP_RE.search(code)):
        # brew tap pinecone-io/tap, then brew install pinecone-io/tap/pinecone: the tap is the
        # one the own tool is installed from, as `brew install org/tap/tool` alone is
        after = "\n".join(lines[finding.line - 1 : finding.line + NEXT_STEPS])
        from_tap = [
            m.group(3).split("@")[0].lower()
            for m in _BREW_TAP_RE.finditer(after)
            if f"{m.group(1)}/{m.group(2)}".lower() == tap.group(0).split()[-1].lower()
        ]
        if from_tap and all(f in tools.declared | tools.named for f in from_tap):
            return from_tap[0]
        # brew tap datadog-labs/pack && brew install pup: the skill's own organisation's tap
        formulas = [m.group(1).lower() for m in _BREW_INSTALL_RE.finditer(code)]
        owned = [f for f in formulas if f in tools.declared | tools.named]
        own_org = tap.group(1).lower() in places[0]
        return owned[0] if own_org and formulas and len(owned) == len(formulas) else None
    if "Homebrew tap" in finding.message:
        formulas = [m.group(3).split("@")[0].lower() for m in _BREW_TAP_RE.finditer(code)]
        owned = [f for f in formulas if f in tools.declared | tools.named]
        return owned[0] if formulas and len(owned) == len(formulas) else None
    if "straight from" in finding.message:
        repos = list(_REPO_URL_RE.finditer(code))
        if not repos or any(m.group(1).lower() != "https" for m in repos):
            return None
        owned = [own for m in repos if (own := _repository_tool(m, tools))]
        return owned[0] if len(owned) == len(repos) else None
    return None


_COMMAND_WORD_RE = re.compile(r"\s*(?:\$\s+)?([\w.+-]+)")


def _installs_from_its_domain(finding: Finding, text: str) -> str | None:
    """The program a reference page's shown installer installs from that program's own domain
    (`curl https://get.flashlight.dev | bash`, then `flashlight measure`), or None.

    Not SKILL.md (what the agent follows as it reads it): a page other than it, where the
    installer is shown for the reader. The host's registrable domain (less a "get" in front)
    must be the name of the program the same code block runs next: the trust asked is then
    the trust in that tool's publisher, as `npm i -g flashlight` asks with no finding at all.
    """
    path = (finding.path or "").replace("\\", "/")
    if not path.lower().endswith(_MARKDOWN) or path.rsplit("/", 1)[-1] == "SKILL.md":
        return None
    lines = text.split("\n")
    at = finding.line
    if not at or at > len(lines):
        return None
    match = PIPE_TO_SHELL_RE.search(lines[at - 1])
    url = INSTALLER_URL_RE.search(match.group(0)) if match else None
    if url is None or (url.group(1) or "").lower() != "https://":
        return None
    host = url.group(0).split("://", 1)[-1].split("/", 1)[0].split(":")[0].lower()
    label = (registrable_domain(host) or "").split(".")[0]
    label = label[3:] if label.startswith("get") and len(label) > 5 else label
    if len(label) < 3:
        return None
    above = lines[max(0, at - 3) : at - 1]
    if any(x.lstrip().startswith("#") and _names_word(x, label) for x in above[-1:]):
        return label  # the block's comment over it says what it installs ("# Install Flashlight")
    for line in lines[at : at + NEXT_STEPS]:
        if line.lstrip().startswith("```"):
            break
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        word = _COMMAND_WORD_RE.match(line)
        return label if word and word.group(1).lower() == label else None
    return None


def list_own_tool_installs(
    card: Card, text_of: Callable[[str], str | None], findings: Iterable[Finding]
) -> None:
    """Make each warning that installs the skill's own tool over https (see above) info, in place.

    Args:
        card: the skill's SKILL.md.
        text_of: a finding's path -> the text of that file of the skill (None if not text).
        findings: the skill's findings.
    """
    tools = own_tools(card)
    places = vendor_places(card)
    for finding in findings:
        if finding.rule == "download-exec" and finding.severity == ERROR and any(places):
            text = text_of(finding.path or "")
            tool = _runs_own_release(finding, text, tools, places) if text is not None else None
            if tool is not None:
                finding.severity = INFO
                finding.message = f"installs {tool}, the tool this skill is for: {finding.message}"
            continue
        if finding.rule == "download-exec" and finding.severity == WARNING and any(places):
            text = text_of(finding.path or "")
            tool = _runs_own_installer(finding, text, tools, places) if text is not None else None
            if tool is not None:
                finding.severity = INFO
                finding.message = f"installs {tool}, the tool this skill is for: {finding.message}"
            continue
        if finding.severity != WARNING or finding.rule not in ("pipe-to-shell", "remote-install"):
            continue
        text = text_of(finding.path or "")
        tool = (
            _installs_own_tool(finding, text, tools, places) if text is not None and tools else None
        )
        if tool is not None:
            finding.severity = INFO
            finding.message = f"installs {tool}, the tool this skill is for: {finding.message}"
        elif text is not None and finding.rule == "pipe-to-shell":
            tool = _installs_from_its_domain(finding, text)
            if tool is not None:
                finding.severity = INFO
                finding.message = (
                    f"installs {tool} from its own domain, shown in a reference page: "
                    f"{finding.message}"
                )
