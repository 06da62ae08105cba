"""Languages the scan has no parser for (PowerShell, Go, Ruby, Perl, PHP, …), read for the same
sources and sinks by their well-known spellings, one unit (a script, a code block) at a time.

Without a parser a flow is a co-occurrence inside the unit: a secret or a credential store read
and a network send in the same few lines of code is what an exfiltrating snippet looks like, and
what an ordinary API client in these languages rarely is (it sends the token it reads, which the
own-API check in ``sensitive.send_severity`` recognises by the host).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from chimera_cards._scan.sensitive import (
    CodeFacts,
    Send,
    Taint,
    credential_in,
    host_of,
    is_secret_name,
)

_ENV_RE = re.compile(
    r"""(?:os\.Getenv|Getenv|getenv|ENV\.fetch|System\.getenv|Environment\.GetEnvironmentVariable)\(\s*["']([A-Za-z_][\w]*)["']"""
    r"""|ENV\[\s*["']([A-Za-z_]\w*)["']\s*\]|\$ENV\{\s*["']?([A-Za-z_]\w*)["']?\s*\}|\$env:([A-Za-z_]\w*)"""
)
_ENV_ALL_RE = re.compile(
    r"os\.Environ\(\)|\bENV\.(?:to_h|each|to_a)\b|%ENV\b|Get-ChildItem\s+env:|\bgci\s+env:|\bdir\s+env:|\$_ENV\b|getenv\(\)"
)
_SEND_RE = re.compile(
    r"\bhttp\.(?:Post|PostForm|NewRequest)\b|\bnet\.Dial\b|\bNet::HTTP\b|\bHTTParty\.post\b|\bRestClient\.post\b|"
    r"\bFaraday\b[^\n]*\.post\b|\bLWP::UserAgent\b|\bHTTP::Tiny\b|\bIO::Socket\b|\bTCPSocket\b|\bfsockopen\b|"
    r"\bcurl_exec\b|\bstream_socket_client\b|\bInvoke-RestMethod\b|\bInvoke-WebRequest\b|\biwr\b|\birm\b|"
    r"\bUpload(?:File|String|Data)\b|\bNet\.Sockets\b|\bSystem\.Net\.Http\b|\bSend-MailMessage\b|"
    r"\bHttpClient\b[^\n]*\.Post|\bsocket\.(?:send|write)\b",
    re.I,
)
_POST_RE = re.compile(
    r"-Method\s+['\"]?(?:Post|Put|Patch)\b|-InFile\b|-Body\b|\bUpload(?:File|String|Data)\b|\bhttp\.Post|"
    r"\.post\b|\bPOST\b|\bprint\s+\$\w+|\bsocket\b|\bIO::Socket\b|\bnet\.Dial\b|\bTCPSocket\b|\bSend-MailMessage\b",
    re.I,
)
_ENCODED_RE = re.compile(r"-(?:e|ec|enc|encodedcommand)\s+([A-Za-z0-9+/=]{16,})", re.I)
_DECODE_RUN_RE = re.compile(
    r"(?:IEX|Invoke-Expression)\b[^\n]*(?:FromBase64String|DownloadString|DownloadData|\biwr\b|Invoke-WebRequest|"
    r"Invoke-RestMethod|\birm\b)|(?:FromBase64String|DownloadString)[^\n]*\|\s*(?:IEX|Invoke-Expression)\b|"
    r"\beval\s*\(\s*(?:base64_decode|gzinflate|str_rot13|decode_base64|MIME::Base64)|"
    r"\beval\s*\(?\s*(?:Base64\.decode64|\[System\.Convert\]::FromBase64String)|"
    r"\bunpack\(\s*['\"]m['\"]|\bexec\.Command\([^)]*base64",
    re.I,
)
_VAR_RE = re.compile(r"^\s*\$(\w+)\s*=\s*(.+)$")
_URL_RE = re.compile(r"https?://[^\s'\"`)<>]+")
_HOSTPORT_RE = re.compile(
    r"['\"]((?:\d{1,3}\.){3}\d{1,3}|[a-z0-9-]+(?:\.[a-z0-9-]+)+\.[a-z]{2,}):\d+['\"]", re.I
)
_SECURITY_OFF_RE = re.compile(
    r"Set-MpPreference\s+-Disable\w+|Add-MpPreference\s+-Exclusion\w+|Set-NetFirewallProfile\b[^\n]*-Enabled\s+False|"
    r"Set-ExecutionPolicy\s+(?:Unrestricted|Bypass)|-ExecutionPolicy\s+Bypass|netsh\s+advfirewall\s+set\s+\w+\s+state\s+off",
    re.I,
)


@dataclass
class GenericFacts(CodeFacts):
    """What a unit of a language without a parser does, for the rules to grade."""

    security_off: list[tuple[int, str]] = field(default_factory=list)


def _decodes_to_code(payload: str) -> bool:
    try:
        raw = base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (ValueError, binascii.Error):
        return False
    return len(raw) >= 8


def generic_facts(text: str, first_line: int = 1, *, powershell: bool = False) -> GenericFacts:
    """Sources, sends and decode-then-run in a unit of a language without a parser.

    Args:
        text: the unit's text.
        first_line: the file line of its first line.
        powershell: the unit is PowerShell (``$x = …`` assignments are followed).
    Returns:
        The facts.
    """
    facts = GenericFacts()
    taints: set[Taint] = set()
    variables: dict[str, set[Taint]] = {}
    send_line = None
    host = None
    posting = False
    for number, whole in enumerate(text.split("\n")):
        line = whole[:4096]  # a minified line: its head says enough
        at = first_line + number
        here: set[Taint] = set()
        for match in _ENV_RE.finditer(line):
            name = next(g for g in match.groups() if g)
            if is_secret_name(name):
                here.add(Taint("env", name))
        if _ENV_ALL_RE.search(line):
            here.add(Taint("env-all", "the whole environment"))
        found = credential_in(line)
        if found:
            here.add(Taint("credential", found))
            facts.reads.append((at, Taint("credential", found)))
        for name, carried in variables.items():
            if f"${name}" in line:
                here |= carried
        assigned = _VAR_RE.match(line)
        if assigned and (powershell or line.lstrip().startswith("$")):
            variables[assigned.group(1)] = set(here)
        taints |= here
        if _SEND_RE.search(line):
            send_line = send_line or at
            posting = posting or bool(_POST_RE.search(line))
            url = _URL_RE.search(line)
            hostport = _HOSTPORT_RE.search(line)
            host = host or (
                host_of(url.group(0)) if url else hostport.group(1) if hostport else None
            )
        encoded = _ENCODED_RE.search(line)
        if (
            encoded
            and _decodes_to_code(encoded.group(1))
            and re.search(r"powershell|pwsh", line, re.I)
        ):
            facts.decode_exec.append((at, "powershell -EncodedCommand"))
        if _DECODE_RUN_RE.search(line):
            facts.decode_exec.append((at, _DECODE_RUN_RE.search(line).group(0)[:60]))  # type: ignore[union-attr]
        off = _SECURITY_OFF_RE.search(line)
        if off:
            facts.security_off.append((at, off.group(0)))
    if send_line is not None and (taints or posting):
        facts.sends.append(Send(send_line, host, "a network call", body=taints))
    return facts
