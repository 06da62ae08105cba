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
    source_taint,
)
from chimera_cards._scan.textruns import LiteralGated

_ENV_RE = re.compile(
    r"""(?:os\.Getenv|Getenv|getenv|ENV\.fetch|System\.getenv|Environment\.GetEnvironmentVariable)\(\s*["']([A-Za-z_][\w]*)["']"""
    r"""|ENV\[\s*["']([A-Za-z_]\w*)["']\s*\]|\$ENV\{\s*["']?([A-Za-z_]\w*)["']?\s*\}|\$env:([A-Za-z_]\w*)"""
)
_ENV_ALL_RE = re.compile(
    r"os\.Environ\(\)|\bENV\.(?:to_h|each|to_a)\b|%ENV\b|Get-ChildItem\s+env:|\bgci\s+env:|\bdir\s+env:|\$_ENV\b|getenv\(\)"
)
_SEND_RE = re.compile(
    r"\bhttp\.(?:Post|PostForm|NewRequest|Get|Head)\b|\bnet\.Dial\b|\bNet::HTTP\b|\bHTTParty\.(?:post|get)\b|"
    r"\bRestClient\.(?:post|get)\b|\bURI\.open\b|\bOpenURI\b|\bopen\(\s*[\"']https?://|"
    r"\bFaraday\b[^\n]*\.(?:post|get)\b|\bLWP::(?:UserAgent|Simple)\b|\bHTTP::Tiny\b|\bIO::Socket\b|\bTCPSocket\b|\bfsockopen\b|"
    r"\bget(?:store|print)?\s*\(\s*[\"']https?://|\bfile_get_contents\(\s*[\"']https?://|"
    r"\bcurl_exec\b|\bstream_socket_client\b|\bInvoke-RestMethod\b|\bInvoke-WebRequest\b|\biwr\b|\birm\b|"
    r"\bUpload(?:File|String|Data)\b|\bDownload(?:String|Data|File)\b|\bNet\.Sockets\b|\bSystem\.Net\.Http\b|"
    r"\bSend-MailMessage\b|\bHttpClient\b[^\n]*\.(?:Post|Get)|\bsocket\.(?:send|write)\b|"
    r"\breqwest::|\bureq::|\bURLSession\b|\bHttpURLConnection\b|"
    # the other well-kept HTTP and mail clients: Perl's Mojo, Furl, Mechanize, Net::SMTP; Ruby's
    # Excon, Typhoeus, HTTPX, http.rb; PHP's Guzzle and WordPress; Go's resty
    r"\bMojo::UserAgent\b|\bFurl\b|\bWWW::Mechanize\b|\bNet::SMTP\b|\bExcon\.(?:post|put|get|new)\b|"
    r"\bTyphoeus\b|\bHTTPX?\.(?:post|put|patch|get)\b|\bGuzzleHttp\b|\bwp_remote_(?:post|get|request)\b|"
    r"\bresty\.New\b|"
    # raw sockets and requests: Rust's std::net, .NET's WebRequest stream, LuaSocket's tcp and
    # gawk's /inet special files (print … |& "/inet/tcp/0/host/port")
    r"\b(?:TcpStream|UdpSocket)::connect\b|\bWebRequest\]?(?:::|\.)Create\b|\bGetRequestStream\b|"
    r"\bsocket\.(?:tcp|udp|connect)\b|/inet[46]?/(?:tcp|udp)/|\bSocket\([^)]*\)\.getOutputStream\b|"
    # Java's java.net.http and OkHttp, Lua's LuaSocket (http.request{url = …, source = …})
    r"\bHttpRequest\.newBuilder\b|\bBodyPublishers\b|\bOkHttpClient\b|\bhttp\.request\b|"
    # a network tool run from code: `curl …`, %x(curl …), system("curl …"), Command::new("curl")
    r"(?:[`\"']|%x[({\[]|\bsh\s)\s*(?:curl|wget|scp|rsync|nc|ncat|socat)\b|"
    # … | curl inside a string a shell runs (AppleScript's do shell script "tar … | curl …")
    r"\bdo\s+shell\s+script\b[^\n]*\|\s*(?:curl|wget|nc|ncat|socat)\b",
    re.I,
)
# Name lookups: a secret spelled into a host name leaves by DNS, whatever answers.
_DNS_RE = re.compile(
    r"\bnet\.(?:Lookup(?:Host|IP|TXT|CNAME|MX|NS|Addr)|ResolveIPAddr)\b|Resolver\)?\.Lookup\w*|"
    r"\bResolv(?:::DNS)?\b[^\n]*\.(?:getaddress|getresource|each_address)|\bResolv\.getaddress\b|"
    r"\bgethostbyname\b|\bgetaddrinfo\b|\bResolve-DnsName\b|\[System\.Net\.Dns\]::|\bDns\.GetHost\w*|"
    r"\bNet::DNS\b|\bInetAddress\.getByName\b|\bdns_get_record\b|\bnslookup\b",
    re.I,
)
# Saving a download to a file: the file's path is the group.
_SAVE_RE = re.compile(
    r"-OutFile\s+(['\"]?)([^'\"\s;|)]+)\1|\.DownloadFile\([^,]+,\s*(['\"]?)([^'\")]+)\3|"
    r"\bgetstore\s*\(\s*[^,]+,\s*(['\"])([^'\"]+)\5|\bmirror\s*\(\s*[^,]+,\s*(['\"])([^'\"]+)\7|"
    r"\bFile\.write\(\s*(['\"])([^'\"]+)\9[^\n]*(?:URI\.open|Net::HTTP|HTTParty|RestClient)|"
    r"\bos\.WriteFile\(\s*(['\"])([^'\"]+)\11|"
    r"\b(?:certutil(?:\.exe)?\s[^\n]*-urlcache|bitsadmin(?:\.exe)?\s[^\n]*/transfer)\b[^\n]*\s(['\"]?)([^'\"\s]+)\13\s*$|"
    r"\bStart-BitsTransfer\b[^\n]*-Destination\s+(['\"]?)([^'\"\s;|)]+)\15",
    re.I,
)
# What runs a file: a call operator, an interpreter, a loader.
_RUNS_RE = re.compile(
    r"^\s*(?:&|\.\s)|\bStart-Process\b|\b(?:powershell|pwsh)\b[^\n]*-File\b|\b(?:system|exec|spawn|load|"
    r"require|require_relative|do|Kernel\.exec|IO\.popen|exec\.Command|Process\.Start)\b|"
    r"\b(?:bash|sh|perl|ruby|python3?|node|cmd)\b",
    re.I,
)
# A downloaded body run in place: eval of a fetch in Ruby, Perl, PHP; a download piped to IEX.
_FETCH_RUN_RE = re.compile(
    r"\b(?:eval|instance_eval|class_eval|Kernel\.eval)\s*\(?\s*(?:URI\.open|open\(\s*['\"]https?://|"
    r"Net::HTTP\.get|HTTParty\.get|RestClient\.get|get\s*\(|LWP::Simple::get|file_get_contents\(\s*['\"]https?://)",
    re.I,
)
_DOWNLOAD_RE = re.compile(
    r"\bDownload(?:String|Data)\b|\bInvoke-WebRequest\b|\biwr\b|\bInvoke-RestMethod\b|\birm\b|"
    r"\bURI\.open\b|\bNet::HTTP\.get\b|\bget\s*\(\s*['\"]https?://|\bhttp\.Get\b|\bcurl\b|\bwget\b",
    re.I,
)
_IEX_RE = re.compile(r"\b(?:IEX|Invoke-Expression|eval|instance_eval)\b", re.I)
_POST_RE = re.compile(
    r"-Method\s+['\"]?(?:Post|Put|Patch)\b|-InFile\b|-Body\b|\bUpload(?:File|String|Data)\b|\bhttp\.Post|"
    r"(?:\.|->|::)(?:post|put|patch)\b|\bPOST\b|\s(?:-F|-d|-T|--data(?:-binary)?|--upload-file|--post-file)\s|\bprint\s+\$\w+|\bsocket\b|\bIO::Socket\b|\bnet\.Dial\b|\bTCPSocket\b|\bSend-MailMessage\b",
    re.I,
)
_ENCODED_RE = re.compile(r"-(?:e|ec|enc|encodedcommand)\s+([A-Za-z0-9+/=]{16,})", re.I)
_DECODE_RUN_RE = re.compile(
    r"(?:IEX|Invoke-Expression)\b[^\n]*(?:FromBase64String|DownloadString|DownloadData|\biwr\b|Invoke-WebRequest|"
    r"Invoke-RestMethod|\birm\b)|(?:FromBase64String|DownloadString)[^\n]*\|\s*(?:IEX|Invoke-Expression)\b|"
    r"\beval\s*\(\s*(?:base64_decode|gzinflate|str_rot13|decode_base64|MIME::Base64)|"
    r"\beval\s*\(?\s*(?:Base64\.decode64|\[System\.Convert\]::FromBase64String)|"
    r"\bunpack\(\s*['\"]m['\"]|\bexec\.Command\([^)]*base64|"
    # Perl's eval of pack("H*", …) / unpack: a hex or uuencoded text run as code
    r"\beval\s*\(?\s*(?:un)?pack\b",
    re.I,
)
_VAR_RE = re.compile(r"^\s*\$(\w+)\s*=\s*(.+)$")
# Pieces of a string put together: concatenation ("." + "ssh", ".s" . "sh", ".s" << "sh")
# reads as one string, arguments of a path join (".aws", "credentials") as a path.
_CONCAT_RE = re.compile(r"""(["'])\s*(?:\+|\.|<<|&)\s*(["'])""")
_JOIN_RE = re.compile(r"""(["'])\s*,\s*(["'])""")


_NAME_RE = re.compile(
    r"^\s*(?:(?:my|our|local|var|let|const|val)\s+)?[$@%]?([A-Za-z_]\w{2,})\s*:?=(?!=)"
)


def _assembled(line: str) -> str:
    return _JOIN_RE.sub("/", _CONCAT_RE.sub("", line))


_URL_RE = re.compile(r"https?://[^\s'\"`)<>]+")
_HOSTPORT_RE = re.compile(
    r"['\"]((?:\d{1,3}\.){3}\d{1,3}|[a-z0-9-]+(?:\.[a-z0-9-]+)+\.[a-z]{2,}):\d+['\"]", re.I
)
_SECURITY_OFF_RE = re.compile(
    r"Set-MpPreference\s+-Disable\w+|Add-MpPreference\s+-Exclusion\w+|Set-NetFirewallProfile\b[^\n]*-Enabled\s+False|"
    r"Set-ExecutionPolicy\s+(?:Unrestricted|Bypass)|netsh\s+advfirewall\s+set\s+\w+\s+state\s+off|"
    # one process let to run a named script file (`powershell -ExecutionPolicy Bypass -File
    # scripts/x.ps1`: a local script runs under the default policy anyway); a bypass for a
    # command, a download or the session is one
    r"-ExecutionPolicy\s+Bypass(?!\s+-File\s+[\"']?[^\s\"'|;&]+\.ps1[\"']?(?=[ \t]*(?:-\w|$)))",
    re.I | re.M,
)


# The per-line rules, each tried only on lines that hold one of the literals every one of its
# matches holds (lower-case; see LiteralGated): most lines of a unit hold none. A branch added
# to one of these patterns needs a literal of its own here, or lines with only it go unread;
# add an example line of it to tests/chimera_cards/scan/test_generic_gates.py BRANCHES.
_ENV = LiteralGated(
    _ENV_RE, ("getenv(", "env.fetch(", "getenvironmentvariable(", "env[", "$env{", "$env:")
)
_ENV_ALL = LiteralGated(_ENV_ALL_RE, ("os.environ()", "env.", "%env", "env:", "$_env", "getenv()"))
_SEND = LiteralGated(
    _SEND_RE,
    (
        "http.",
        "net.dial",
        "net::http",
        "httparty.",
        "restclient.",
        "uri.open",
        "openuri",
        "://",
        "faraday",
        "lwp::",
        "http::tiny",
        "io::socket",
        "tcpsocket",
        "fsockopen",
        "curl_exec",
        "stream_socket_client",
        "invoke-restmethod",
        "invoke-webrequest",
        "iwr",
        "irm",
        "upload",
        "download",
        "net.sockets",
        "system.net.http",
        "send-mailmessage",
        "httpclient",
        "socket.",
        "reqwest::",
        "ureq::",
        "urlsession",
        "httpurlconnection",
        "httprequest.newbuilder",
        "bodypublishers",
        "okhttpclient",
        "mojo::useragent",
        "furl",
        "www::mechanize",
        "net::smtp",
        "excon.",
        "typhoeus",
        "httpx.",
        "guzzlehttp",
        "wp_remote_",
        "resty.new",
        "tcpstream::",
        "udpsocket::",
        "webrequest",
        "getrequeststream",
        "/inet",
        "getoutputstream",
        "curl",
        "wget",
        "scp",
        "rsync",
        "nc",
        "socat",
    ),
)
_SAVE = LiteralGated(
    _SAVE_RE,
    (
        "-outfile",
        ".downloadfile(",
        "getstore",
        "mirror",
        "file.write(",
        "os.writefile(",
        "certutil",
        "bitsadmin",
        "start-bitstransfer",
    ),
)
_FETCH_RUN = LiteralGated(_FETCH_RUN_RE, ("eval",))
_DECODE_RUN = LiteralGated(
    _DECODE_RUN_RE, ("iex", "invoke-expression", "eval", "unpack(", "exec.command(")
)
_SECURITY_OFF = LiteralGated(
    _SECURITY_OFF_RE, ("mppreference", "set-netfirewallprofile", "executionpolicy", "netsh")
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


# An entry of a drawn folder tree (`├── .azure/` under `project-root/`): a file the layout has,
# read by nobody.
_TREE_ENTRY_RE = re.compile(r"[ \t]*(?:[│|][ \t]*)*[├└`|][─-]{2}")


def _sources(line: str, lower: str) -> tuple[set[Taint], str | None]:
    """The secrets a line reads: secret-named variables, the whole environment, a credential
    store (its path written out or put together from pieces)."""
    here: set[Taint] = set()
    if _TREE_ENTRY_RE.match(line):
        return here, None
    for match in _ENV.finditer(line, lower):
        name = next(g for g in match.groups() if g)
        if is_secret_name(name):
            here.add(Taint("env", name))
    if _ENV_ALL.search(line, lower):
        here.add(Taint("env-all", "the whole environment"))
    found = credential_in(line)
    if not found and ("'" in line or '"' in line):
        found = credential_in(_assembled(line))
    if found:
        here.add(source_taint(found))
    return here, found


@dataclass
class _Walk:
    """A unit's state line by line: variables and what they hold, downloads saved or held."""

    facts: GenericFacts
    powershell: bool
    variables: dict[str, set[Taint]] = field(default_factory=dict)  # $name (PowerShell, Perl)
    names: dict[str, set[Taint]] = field(default_factory=dict)  # bare names holding secrets
    downloaded_vars: set[str] = field(default_factory=set)
    saved: dict[str, int] = field(default_factory=dict)  # files downloads were saved to

    def taints(self, line: str, lower: str, at: int) -> tuple[set[Taint], bool]:
        here, found = _sources(line, lower)
        if found:
            self.facts.reads.append((at, source_taint(found)))
        for name, carried in self.variables.items():
            if f"${name}" in line:
                here |= carried
        for name, carried in self.names.items():
            if name in line and re.search(rf"\b{name}\b", line):
                here |= carried
        assigned = _VAR_RE.match(line)
        if assigned and (self.powershell or line.lstrip().startswith("$")):
            self.variables[assigned.group(1)] = set(here)
            if _DOWNLOAD_RE.search(assigned.group(2)):
                self.downloaded_vars.add(assigned.group(1))
            return here, True
        if here:
            # name := …, my $name = …, name = …: a variable holding a secret, followed by name.
            named = _NAME_RE.match(line)
            if named:
                self.names[named.group(1)] = set(here)
        return here, False

    def runs(self, line: str, lower: str, at: int, assigned: bool) -> None:
        """Decoded or downloaded code run: in place, from a variable, or from a saved file."""
        facts = self.facts
        encoded = _ENCODED_RE.search(line)
        if (
            encoded
            and _decodes_to_code(encoded.group(1))
            and re.search(r"powershell|pwsh", line, re.I)
        ):
            facts.decode_exec.append((at, "powershell -EncodedCommand"))
        decoded = _DECODE_RUN.search(line, lower)
        if decoded:
            facts.decode_exec.append((at, decoded.group(0)[:60]))
        fetched = _FETCH_RUN.search(line, lower)
        if fetched:
            facts.download_exec.append((at, fetched.group(0)[:60]))
        if self.downloaded_vars and not assigned and _IEX_RE.search(line):
            ran = next((v for v in self.downloaded_vars if f"${v}" in line), None)
            if ran:
                facts.download_exec.append((at, f"${ran}, downloaded earlier, run"))
        for path, line_saved in self.saved.items():
            if path in line and (_RUNS_RE.search(line) or line.lstrip().startswith(path)):
                facts.download_exec.append((line_saved, f"saved as {path}, then run"))
        saved_to = _SAVE.search(line, lower)
        if saved_to:
            self.saved[next(g for g in saved_to.groups()[1::2] if g)] = at


# A whole-line comment (`# .npmrc (pnpm)` over the file a block shows, `// see ~/.aws/config`),
# a checklist's item, or one string literal handed to a call that prints it (R's
# `cli_warn("File {.file ~/.ssh/config} has insecure permissions")`, `puts`, `Write-Host`): a
# path named there is text for the reader.
_INERT_RE = re.compile(
    r"\s*(?:#(?![!{\[])|//).*"
    # a checklist's item in a text block ("- Added .npmrc with binary mirror configs", "✓
    # Committed .npmrc"): words, with no path prefix, quote, call or operator a command has
    r"|\s*(?:[-*•✓✔]|\d+[.)])[ \t]+[A-Z][^()=$<>|;{}`'\"~/\\]*"
    r"|\s*(?:[\w.]+::)?(?:cli_\w+|message|warning|stop|warn|print|println|puts|say|"
    r"Write-(?:Host|Output|Warning|Error|Verbose)|fmt\.Print\w*)[ \t]*\(?[ \t]*"
    r"(?:\"[^\"\\$`]*\"|'[^'\\]*')[ \t]*\)?[ \t]*;?[ \t]*"
)


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
    walk = _Walk(facts, powershell)
    taints: set[Taint] = set()
    send_line = dns_line = None
    dns_taint: set[Taint] = set()
    host = None
    posting = False
    for number, whole in enumerate(text.split("\n")):
        line = whole[:4096]  # a minified line: its head says enough
        at = first_line + number
        if _INERT_RE.fullmatch(line):
            continue  # a comment, or a message printed for the reader: it reads and runs nothing
        lower = line.lower()
        here, assigned = walk.taints(line, lower, at)
        taints |= here
        if _SEND.search(line, lower):
            send_line = send_line or at
            posting = posting or bool(_POST_RE.search(line))
            url = _URL_RE.search(line)
            hostport = _HOSTPORT_RE.search(line)
            host = host or (
                host_of(url.group(0)) if url else hostport.group(1) if hostport else None
            )
        if here and _DNS_RE.search(line):
            dns_line = dns_line or at
            dns_taint |= here
        walk.runs(line, lower, at, assigned)
        off = _SECURITY_OFF.search(line, lower)
        if off:
            facts.security_off.append((at, off.group(0)))
    if send_line is not None and host is None:
        url = _URL_RE.search(text)
        host = host_of(url.group(0)) if url else None
    if send_line is not None and (taints or posting):
        facts.sends.append(Send(send_line, host, "a network call", body=taints))
    if dns_line is not None:
        facts.sends.append(Send(dns_line, "a DNS lookup", "a name lookup", body=dns_taint))
    return facts
