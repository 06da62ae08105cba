"""What the flow rules treat as sensitive, and where data goes: the shared vocabulary of the
code analysers (Python, shell, JavaScript) and the prose rules.

A *source* is data a skill has no business shipping anywhere: a secret-named environment variable,
the whole environment, or a credential file or store (SSH and cloud keys, package-manager tokens,
kube configs, browser profiles, wallets, keychains). A *sink* is where data leaves: a network
send, the clipboard, a file outside the skill. ``send_severity`` is the one policy every language
uses to grade a send by what reaches it and where it goes.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from chimera_cards._scan.textruns import Literals, led, literal_pattern

# Parts of an environment variable's name (split on "_") that make it a secret.
_SECRET_PARTS = frozenset(
    {
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "APIKEY",
        "KEY",
        "KEYS",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "PAT",
        "COOKIE",
        "COOKIES",
        "PRIVATE",
        "SESSION",
        "AUTH",
        "BEARER",
        "MNEMONIC",
        "SEED",
        "WEBHOOK",
    }
)
# Parts that, with one of the above, still name no secret (SSH_AUTH_SOCK, KEY_PATH is a path).
_NOT_SECRET_PARTS = frozenset({"SOCK", "PATH", "FILE", "DIR", "URL", "ID", "NAME", "TYPE"})
# Parts that say the value is published to every client (Stripe's and Clerk's publishable keys,
# the NEXT_PUBLIC_/EXPO_PUBLIC_/PLASMO_PUBLIC_ variables a framework builds into the browser
# bundle): no secret, unless a part says it is one (NEXT_PUBLIC_SECRET is misnamed, not public).
_PUBLIC_PARTS = frozenset({"PUBLIC", "PUBLISHABLE"})
_SAYS_SECRET = frozenset({"SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "PRIVATE",
                          "MNEMONIC", "SEED", "CREDENTIAL", "CREDENTIALS"})  # fmt: skip
_ALWAYS_SECRET = re.compile(
    r"^(?:AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GH_TOKEN|GITHUB_TOKEN|NPM_TOKEN|PYPI_TOKEN|"
    r"OPENAI_API_KEY|ANTHROPIC_API_KEY|DATABASE_URL|.*_DSN|.*CONNECTION_STRING)$"
)
# Words of a token's name that say nothing about which service it is for.
_GENERIC_PARTS = _SECRET_PARTS | {"API", "ACCESS", "CLIENT", "APP", "USER", "PERSONAL", "BOT", "ID"}
# Nor do the words that say whose it is, what it may do or where it is used
# (PERSONAL_API_KEY_OF_ADMIN, PROD_DEPLOY_TOKEN): a role, a scope, an environment.
_GENERIC_PARTS |= {
    "ADMIN", "ADMINS", "ROOT", "MASTER", "OWNER", "ORG", "ORGANIZATION", "PROJECT", "TEAM",
    "WORKSPACE", "ACCOUNT", "SERVICE", "PROD", "PRODUCTION", "DEV", "DEVELOPMENT", "TEST",
    "TESTING", "STAGING", "STAGE", "LIVE", "SANDBOX", "LOCAL", "SHARED", "DEFAULT", "PRIMARY",
    "READ", "WRITE", "READONLY", "REFRESH", "SIGNING", "DEPLOY", "THE", "YOUR", "FOR",
    "OAUTH", "BASIC", "NEW", "OLD", "APPLICATION", "DEVICE",
}  # fmt: skip


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret.

    Args:
        name: the variable's name as written (any case).
    Returns:
        True for names such as ``API_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``DB_PASSWORD``.
    """
    upper = name.upper()
    if _ALWAYS_SECRET.match(upper):
        return True
    parts = [p for p in re.split(r"[^A-Z0-9]+", upper) if p]
    if not parts or parts[-1] in _NOT_SECRET_PARTS:
        return False
    if not _PUBLIC_PARTS.isdisjoint(parts) and _SAYS_SECRET.isdisjoint(parts):
        return False
    return any(p in _SECRET_PARTS for p in parts) or upper.endswith(("APIKEY", "TOKEN", "SECRET"))


# Short names of services, as their tokens' names spell them (HF_TOKEN, GH_TOKEN).
_SERVICE_ALIASES = {"hf": "huggingface", "gh": "github", "gcp": "googleapis", "az": "azure",
                    "do": "digitalocean", "cf": "cloudflare"}  # fmt: skip


def _service_words(name: str) -> list[str]:
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    words = [_SERVICE_ALIASES.get(p, p) for p in parts]
    return [p for p in words if p.upper() not in _GENERIC_PARTS and len(p) >= 3]


_ALIASED = frozenset(_SERVICE_ALIASES.values())


def service_name(name: str) -> str:
    """The service a secret's variable is for, its short name spelt out (``GH_TOKEN`` and
    ``GITHUB_TOKEN`` are both ``github``), a name written in words glued as its short name
    spells it (``HUGGING_FACE_HUB_TOKEN`` and ``HF_TOKEN`` are both ``huggingface``); the
    name's first word when it names none."""
    words = _service_words(name)
    for end in range(2, len(words) + 1):
        if "".join(words[:end]) in _ALIASED:
            return "".join(words[:end])
    if words:
        return words[0]
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    return parts[0] if parts else name.lower()


def self_hosted(token: str, host: str | None) -> bool:
    """Whether a host names a token's service as a label of its own outside its registrable
    domain (``github.example.com``, ``sentry.corp.io``): a self-hosted instance, or someone
    dressing up as one; the reviewer decides."""
    if not host:
        return False
    labels = host.lower().split(".")
    words = _service_words(token)
    for index, label in enumerate(labels[:-2]):
        # "openai.com" written out in front of another domain is dressing up, not hosting.
        if label in words and labels[index + 1] not in _TOP_LEVEL:
            return True
    return False


_TOP_LEVEL = frozenset({"com", "net", "org", "io", "ai", "co", "dev", "app", "cloud", "us", "uk"})


def own_api(token: str, host: str | None) -> bool:
    """Whether ``host`` is the service a token's name names (``GITHUB_TOKEN`` and
    ``api.github.com``, ``OPENWEATHER_API_KEY`` and ``api.openweathermap.org``): the user
    configured that token for that API.

    Only the host's registrable domain counts (``github.com`` and its subdomains): a host that
    merely holds the word elsewhere (``github-status.example.com``, ``api.openai.com.evil.net``)
    is someone else's.

    Args:
        token: the environment variable's name.
        host: the host the request goes to (None: unknown).
    Returns:
        True when one of the name's service words names the host's registrable domain.
    """
    if not host:
        return False
    host = host.lower().rstrip(".")
    label = _domain_label(host)
    if not label:
        return False
    if "-" in label:
        # A hyphenated domain is the service only when the name spells all of it, word for
        # word (BROWSER_USE_API_KEY and browser-use.com); a prefix (github-proxy.com) is not,
        # nor words that name no service (MY_API_KEY and api-key.com).
        parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", token) if p]
        wanted = label.split("-")
        if any(not w or w.upper() in _GENERIC_PARTS for w in wanted):
            return False
        return any(
            parts[i : i + len(wanted)] == wanted for i in range(len(parts) - len(wanted) + 1)
        )
    # A service named after its whole domain spells it without the dot (CALCOM for cal.com).
    glued = (registrable_domain(host) or "").replace(".", "")
    for word in _service_words(token):
        if label == word or label.startswith(word) or label.endswith(word) or word == glued:
            return True
        if len(label) >= 4 and word.startswith(label):
            return True
    return False


# Second-level labels under which a country's registrable domains sit (example.co.uk).
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go"})


def _domain_label(host: str) -> str | None:
    """The label a host's owner registered: ``github`` of ``api.github.com``, ``bbc`` of
    ``www.bbc.co.uk``; None for an address or a single label."""
    registrable = registrable_domain(host)
    return registrable.split(".", 1)[0] if registrable else None


def registrable_domain(host: str) -> str | None:
    """The domain a host's owner registered: ``github.com`` of ``api.github.com``,
    ``bbc.co.uk`` of ``www.bbc.co.uk``; None for an address or a single label."""
    labels = host.split(".")
    if len(labels) < 2 or labels[-1].isdigit() or host.startswith("["):
        return None
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


# Credential files and stores, matched in a path as written (``~``, ``$HOME`` or an absolute home;
# Windows separators too). Public keys are not secrets.
_CRED_PARTS = (
    # ".SSH" after a word is an identifier's member (CommunicationType.SSH), no folder
    r"(?<!\w)\.ssh(?:[/\\](?![^\s'\"]*\.pub\b)|\b(?![-/\\]))",
    r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)",
    r"(?<!\w)\.aws[/\\](?:credentials|config)\b|(?<!\w)\.aws\b(?![\w.-])",
    # (a document under it is a project's: azd keeps `.azure/deployment-plan.md` there)
    r"\.azure[/\\](?![\w.-]+\.(?:md|markdown|txt)\b)",
    r"\.config[/\\]gcloud\b|application_default_credentials\.json",
    r"\.kube[/\\]config\b|\bkubeconfig\b",
    r"\.docker[/\\]config\.json",
    r"(?<![\w-])\.(?:npmrc|pypirc|netrc|git-credentials|pgpass|my\.cnf)\b",
    r"\.config[/\\](?:gh[/\\]hosts\.yml|hub\b)",
    r"\.cargo[/\\]credentials|\.gem[/\\]credentials|\.kaggle[/\\]kaggle\.json|\.vault-token\b|"
    r"\.terraform\.d[/\\]credentials|\.databrickscfg\b|\.s3cfg\b|\.boto\b|(?:huggingface|\.hf)[/\\]token\b|"
    r"\.m2[/\\]settings\.xml|\.gradle[/\\]gradle\.properties|\.composer[/\\]auth\.json|\.config[/\\]rclone|"
    r"\.docker[/\\]config|\.config[/\\]gh\b|\.heroku\b|\bcredentials\.tfrc\.json",
    # the CLI's folder at home or in a project; "/.netlify/functions/…" after a host or a site's
    # root is a path the site serves
    r"(?:(?<![^\s'\"=(:])|(?<=~/)|(?<=HOME/)|(?<=HOME}/)|(?<=\./)|(?<=\\))\.netlify[/\\]",
    # a dotenv file; its committed templates (.env.example, .env.sample) hold names, not secrets
    r"(?<![\w.-])\.env(?!\.(?:example|sample|template|dist|defaults?)(?![\w.-]))(?:\.[\w-]+)?(?![\w/\\-])",
    r"\.gnupg\b|\.password-store\b|\.config[/\\]op\b",
    r"/etc/shadow\b",
    # a process's whole environment, every token it was started with
    r"/proc/(?:self|thread-self|\d+|\$\$|\$\{?\w+\}?)/environ\b",
    # shell histories: every token typed on a command line
    r"\.(?:bash|zsh|sh|psql|mysql|python)_history\b|\bConsoleHost_history\.txt\b",
    # browsers: profile folders and the stores inside them (Chrome's file names as it spells
    # them: "local state" or "web data" in a sentence is no file)
    r"(?-i:Login Data|\bWeb Data|\bLocal State)\b|\blogins\.json\b|\bkey[34]\.db\b|"
    r"\bcookies\.sqlite\b",
    r"(?:Google[/\\ ]Chrome|Chromium|BraveSoftware|Microsoft[/\\ ]Edge)[/\\]|\.mozilla[/\\]firefox",
    r"[/\\]Cookies\b",
    # wallets
    r"\bwallet\.dat\b|\.bitcoin\b|\.ethereum[/\\]keystore|\bkeystore[/\\]UTC--|\.electrum\b",
    r"\bExodus[/\\]|\bMetaMask\b|nkbihfbeogaeaoehlefnkodbefgpgknn|\.solana[/\\]id\.json",
    # keychains
    r"Library[/\\]Keychains|\.keychain(?:-db)?\b|\bgnome-keyring\b|\bkwallet\b",
)
CREDENTIAL_PATH_RE = re.compile("|".join(f"(?:{p})" for p in _CRED_PARTS), re.IGNORECASE)
# Commands (and tools) that read a keychain or password store themselves.
_STORE_COMMAND_RE = re.compile(
    led(
        "Cbcksv",
        r"\bsecurity\s+(?:find-(?:generic|internet)-password|dump-keychain|export)\b|"
        r"\bsecret-tool\s+lookup\b|\bcmdkey\s+/list\b|\bvaultcmd\b|"
        r"\bCryptUnprotectData\b|\bbrowser_cookie3\b|\bkeyring\.get_password\b",
    )
)


# Every alternative of the two patterns above holds one of these (lower-cased): a text holding none
# cannot match, and ``in`` costs far less than the case-blind alternation tried at every offset.
CREDENTIAL_LITERALS = (
    ".ssh",
    "id_",
    ".aws",
    ".azure",
    "gcloud",
    "application_default",
    ".kube",
    "kubeconfig",
    ".docker",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".config",
    ".cargo",
    ".gem",
    ".kaggle",
    ".vault-token",
    ".terraform.d",
    ".databrickscfg",
    ".s3cfg",
    ".boto",
    "huggingface",
    ".hf",
    ".m2",
    ".gradle",
    ".composer",
    ".netlify",
    ".heroku",
    "credentials.tfrc",
    ".env",
    ".gnupg",
    ".password-store",
    "/etc/shadow",
    "/environ",
    "_history",
    "consolehost_history",
    "login data",
    "logins.json",
    "key3.db",
    "key4.db",
    "cookies",
    "web data",
    "local state",
    "chrome",
    "chromium",
    "bravesoftware",
    "edge",
    ".mozilla",
    "wallet.dat",
    ".bitcoin",
    ".ethereum",
    "keystore",
    ".electrum",
    "exodus",
    "metamask",
    "nkbihfbeogaeaoehlefnkodbefgpgknn",
    ".solana",
    "keychain",
    "gnome-keyring",
    "kwallet",
    "security",
    "secret-tool",
    "cmdkey",
    "vaultcmd",
    "cryptunprotectdata",
    "browser_cookie3",
    "keyring.get_password",
)


# Any of the literals (lower-cased text): one trie pass, for short texts and windows.
CREDENTIAL_LITERAL_RE = re.compile(literal_pattern(CREDENTIAL_LITERALS))


def credential_in(text: str) -> str | None:
    """The credential file or store a path or command names, if any.

    Args:
        text: a path, a command line, or a folded string.
    Returns:
        The matched part (for a message), or None.
    """
    if not text:
        return None
    if len(text) < 256:
        return _short_credential_in(text)
    return _credential_in(text)


# The flow walkers ask about the same short strings again and again (a constant read, folded,
# then passed on; a script read again for a late summary): two thirds of some 5,000 calls an
# import of 35 skills are repeats.
@functools.lru_cache(maxsize=4096)
def _short_credential_in(text: str) -> str | None:
    return _credential_in(text)


def _credential_in(text: str) -> str | None:
    found = _named_credential(text)
    if found is None and text[:1] in "~$%/" and ("*" in text or "?" in text or "[" in text):
        return _globbed_credential(text)
    return found


def _named_credential(text: str) -> str | None:
    lower = text.lower()
    # A short text (a string constant, a path): one trie pass beats ~70 substring searches;
    # a long one: the substring searches (C fast search) beat a regex tried at every offset.
    if len(lower) < 256:
        if CREDENTIAL_LITERAL_RE.search(lower) is None:
            return None
        match = CREDENTIAL_PATH_RE.search(text)
    elif not any(map(lower.__contains__, CREDENTIAL_LITERALS)):
        return None
    else:
        match = _path_in_lines(text, lower)
    match = match or _STORE_COMMAND_RE.search(text)
    return match.group(0) if match else None


# Where the credential files sit under a home folder: a home-rooted glob pattern that matches one
# of them (``~/.s*/id_*``, ``$HOME/.a?s/cred*``) reads it as surely as its name would.
_HOME_CREDENTIALS = (".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa", ".aws/credentials",
                     ".kube/config", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
                     ".docker/config.json", ".config/gh/hosts.yml", ".config/gcloud/credentials.db",
                     ".gnupg/private-keys-v1.d", ".env")  # fmt: skip
# Folders whose every file is a credential or a key to one.
_CREDENTIAL_FOLDERS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".docker"})
_HOME_PREFIX_RE = re.compile(
    r"^(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|/home/[^/]+|/Users/[^/]+|/root)[/\\]"
)


def _globbed_credential(text: str) -> str | None:
    prefix = _HOME_PREFIX_RE.match(text)
    if prefix is None:
        return None
    parts = re.split(r"[/\\]", text[prefix.end() :].split()[0] if text[prefix.end() :] else "")
    if not parts or not any(c in "".join(parts) for c in "*?["):
        return None
    for known in _HOME_CREDENTIALS:
        names = known.split("/")
        if names[0] in _CREDENTIAL_FOLDERS and len(parts) == 1:
            names = names[:1]  # the whole folder (``~/.[s]s[h]``) holds the key
        # glob's rule: a name starting with "." is matched only by a pattern part that does
        if len(names) == len(parts) and all(
            fnmatch.fnmatchcase(n, p) and (not n.startswith(".") or p.startswith("."))
            for n, p in zip(names, parts, strict=True)
        ):
            return text
    return None


def source_taint(found: str) -> Taint:
    """What reading a credential path (as ``credential_in`` found it) yields: a process's
    environment is the whole environment, anything else a credential store."""
    if "/environ" in found and "/proc/" in found:
        return Taint("env-all", found)
    return Taint("credential", found)


# A line of a pattern list (a .gitignore's ".env.local", ".env.*.local"): a name, no path.
_LISTED_NAME_RE = re.compile(r"[ \t]*!?[\w.*?\[\]-]+/?[ \t]*(?:#.*)?")


def names_listed(text: str) -> bool:
    """Whether a text of several lines names credential files only as entries of a list (each
    such line one bare name: a .gitignore written by the skill): the names, not the files'
    contents and not paths to read. A home path (``~/.ssh/id_rsa``) is still one.

    Args:
        text: a string constant of a script.
    Returns:
        True when every line naming a credential file is a bare name.
    """
    if "\n" not in text.strip():
        return False
    return all(_LISTED_NAME_RE.fullmatch(line) for line in text.split("\n") if credential_in(line))


_CASE_ODD_RE = re.compile("[\u0131\u017f]")


def _path_in_lines(text: str, lower: str) -> re.Match | None:
    """``CREDENTIAL_PATH_RE.search(text)`` for a long text, tried only on the lines holding one
    of the literals: the case-blind alternation costs about a microsecond a character, and most
    lines of a page hold none. Exact: no alternative consumes a line break or looks past one
    (a line's ends read as the ends of the text do), and each match holds a literal."""
    if len(lower) != len(text) or _CASE_ODD_RE.search(text) is not None:
        # A letter whose lower case is longer (İ: offsets differ), or one the case-blind
        # pattern reads as an ASCII letter that lower() keeps apart (ſ as s, ı as i).
        return CREDENTIAL_PATH_RE.search(text)
    starts: set[int] = set()
    for literal in CREDENTIAL_LITERALS:
        at = lower.find(literal)
        while at != -1:
            start = lower.rfind("\n", 0, at) + 1
            starts.add(start)
            end = lower.find("\n", at)
            if end == -1:
                break
            at = lower.find(literal, end)
    for start in sorted(starts):
        end = lower.find("\n", start)
        match = CREDENTIAL_PATH_RE.search(text, start, len(text) if end == -1 else end)
        if match is not None:
            return match
    return None


_HOST_RE = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/?#\s]*@)?(\[[^\]]*\]|[^:/?#\s'\"]+)", re.I)


def host_of(url: str | None) -> str | None:
    """The host of a URL written out (``https://u@host:8080/x`` -> ``host``); None when the
    text is no URL or its host is built at run time."""
    if not url:
        return None
    match = _HOST_RE.match(url.strip())
    if not match:
        return None
    host = match.group(1).lower()
    return None if "*" in host or "$" in host or "{" in host or not host else host


@dataclass(frozen=True)
class Taint:
    """One kind of sensitive data: ``env`` (a secret-named variable: ``what`` is its name),
    ``env-all`` (the whole environment), ``credential`` (a credential file or store), ``file``
    (a file an earlier step wrote sensitive data to)."""

    kind: str
    what: str


# Credential helpers: the command, how its arguments start, and what it prints. A token for one
# service reads as that service's variable (a call to the service's own API with it stays the
# user's business); a helper serving many hosts is a credential store.
_HELPERS: tuple[tuple[str, tuple[str, ...], Taint], ...] = (
    ("gh", ("auth token",), Taint("env", "GITHUB_TOKEN")),
    ("aws", ("configure export-credentials", "sts get-session-token", "ecr get-login-password",
             "codeartifact get-authorization-token"), Taint("env", "AWS_SESSION_TOKEN")),
    ("gcloud", ("auth print-access-token", "auth print-identity-token",
                "auth application-default print"), Taint("env", "GOOGLE_ACCESS_TOKEN")),
    ("az", ("account get-access-token",), Taint("env", "AZURE_ACCESS_TOKEN")),
    ("heroku", ("auth:token",), Taint("env", "HEROKU_API_KEY")),
    ("git", ("credential fill", "credential-"), Taint("credential", "git credential fill")),
    ("op", ("read", "item get"), Taint("credential", "1Password (op)")),
    ("pass", ("show", "cat"), Taint("credential", "password store (pass)")),
    ("gopass", ("show", "cat"), Taint("credential", "password store (gopass)")),
    ("vault", ("read", "kv get", "print token", "token lookup"), Taint("credential", "Vault")),
    ("secret-tool", ("lookup",), Taint("credential", "secret service (secret-tool)")),
    ("bw", ("get", "export", "list items"), Taint("credential", "Bitwarden vault (bw)")),
    ("rbw", ("get",), Taint("credential", "Bitwarden vault (rbw)")),
    ("lpass", ("show", "export"), Taint("credential", "LastPass vault (lpass)")),
    ("keepassxc-cli", ("show", "export"), Taint("credential", "KeePassXC database")),
    ("op", ("item list", "export"), Taint("credential", "1Password (op)")),
    ("doctl", ("auth token",), Taint("env", "DIGITALOCEAN_ACCESS_TOKEN")),
    ("aws", ("secretsmanager get-secret-value", "ssm get-parameter"),
     Taint("credential", "AWS secret store")),
    ("gcloud", ("secrets versions access",), Taint("credential", "Google Secret Manager")),
    ("az", ("keyvault secret show", "keyvault secret download"),
     Taint("credential", "Azure Key Vault")),
    ("kubectl", ("get secret", "get secrets"), Taint("credential", "Kubernetes secrets")),
)  # fmt: skip


def helper_secret(name: str, argv: list[str]) -> Taint | None:
    """The secret a credential helper prints (``gh auth token``, ``aws configure get
    aws_secret_access_key``, ``gcloud auth print-access-token``, ``git credential fill``,
    ``op read``, ``pass show``, ``kubectl config view --raw``).

    Args:
        name: the command's name.
        argv: its arguments.
    Returns:
        The taint of its output, or None.
    """
    words = [a for a in argv if not a.startswith("-")]
    head = " ".join(words[:3]).lower()
    for command, starts, taint in _HELPERS:
        if name == command and head.startswith(starts):
            return taint
    if name == "gh" and head.startswith("auth status") and ("-t" in argv or "--show-token" in argv):
        return Taint("env", "GITHUB_TOKEN")
    if name == "aws" and head.startswith("configure get") and len(words) > 2:
        return Taint("env", "AWS_SECRET_ACCESS_KEY") if is_secret_name(words[2]) else None
    if name == "npm" and head.startswith("config get") and "authtoken" in head.replace("_", ""):
        return Taint("env", "NPM_TOKEN")
    if name in ("gpg", "gpg2") and any(
        a.startswith(("--export-secret-keys", "--export-secret-subkeys")) for a in argv
    ):
        return Taint("credential", "GPG secret keys (gpg --export-secret-keys)")
    if name.startswith("docker-credential-") and words[:1] == ["get"]:
        return Taint("credential", name)
    if name == "kubectl" and head.startswith("config view") and "--raw" in argv:
        return Taint("credential", "kubeconfig (kubectl config view --raw)")
    return None


# Credential helpers' reads of one named secret (not a list or an export of the store).
_ONE_SECRET: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("op", ("read", "item get")),
    ("pass", ("show", "cat")),
    ("gopass", ("show", "cat")),
    ("vault", ("read", "kv get")),
    ("secret-tool", ("lookup",)),
    ("bw", ("get",)),
    ("rbw", ("get",)),
    ("lpass", ("show",)),
    ("keepassxc-cli", ("show",)),
    ("aws", ("secretsmanager get-secret-value", "ssm get-parameter")),
    ("gcloud", ("secrets versions access",)),
    ("az", ("keyvault secret show",)),
)
_REFERENCE_OPTIONS = frozenset({"--secret-id", "--secret", "--name", "--id", "--item"})
_SUBSTITUTION_RE = re.compile(r"\s*\"?(?:\$\(|`)\s*(?P<command>[^()`;|&<>]*?)\s*(?:\)|`)\"?\s*")


def vault_token(variable: str, value: str, taints: set[Taint]) -> set[Taint]:
    """What a variable assigned ``value`` holds: ``taints``, with the vault's taint replaced by
    the variable's own token when ``named_helper_secret`` says the value is that token."""
    named = named_helper_secret(variable, value)
    return taints if named is None else {t for t in taints if t.kind != "credential"} | {named}


def named_helper_secret(variable: str, value: str) -> Taint | None:
    """The token a variable holds when it is assigned one secret read from a credential helper
    by a reference that names the variable's own service (``CALCOM_API_KEY=$(op item get
    "$CALCOM_OP_UUID" --fields password)``, ``OPENAI_API_KEY=$(pass show openai/key)``): that
    service's token, graded as the variable would be. A reference naming another service (or
    none), a list or an export of the store, or a name that names no service stays the store's
    secret.

    Args:
        variable: the assigned variable's name.
        value: the assignment's value as written (a command substitution).
    Returns:
        ``Taint("env", variable)``, or None.
    """
    words = _service_words(variable)
    match = _SUBSTITUTION_RE.fullmatch(value)
    if not words or not is_secret_name(variable) or match is None:
        return None
    argv = match.group("command").split()
    if not argv:
        return None
    name, args = argv[0], [a.strip("\"'") for a in argv[1:]]
    plain = [a for a in args if not a.startswith("-")]
    head = " ".join(plain[:3]).lower()
    verb = next(
        (v for c, starts in _ONE_SECRET if c == name for v in starts if head.startswith(v)), None
    )
    if verb is None:
        return None
    # The reference: the words after the subcommand, up to the first option (whose values
    # name a vault, a field, a format: not the secret).
    rest = args[len(verb.split()) :]
    reference = rest[: next((i for i, a in enumerate(rest) if a.startswith("-")), len(rest))]
    for index, arg in enumerate(rest):  # aws --secret-id ID, --name NAME: the secret's name
        option, _, given = arg.partition("=")
        if option in _REFERENCE_OPTIONS:
            reference.append(given or (rest[index + 1] if index + 1 < len(rest) else ""))
    named: set[str] = set()
    for arg in reference:
        for piece in re.split(r"[^A-Za-z0-9.]+", arg):
            named.add(piece.lower().replace(".", ""))
            named.update(_service_words(piece))
            named.update(p.lower() for p in piece.split("."))
    return Taint("env", variable) if words[0] in named else None


_SERVICE_NAME_RE = re.compile(r"[A-Za-z][\w.-]{1,40}")


def keyring_secret(service: str | None) -> Taint | None:
    """What ``keyring.get_password("openai", user)`` returns: that service's token (the user's
    to send to that service's API, and to no one else), or None when the service is not a name
    written out."""
    if not service or not _SERVICE_NAME_RE.fullmatch(service):
        return None
    return Taint("env", re.sub(r"[^A-Za-z0-9]+", "_", service).upper() + "_TOKEN")


# Cloud instance metadata services' credential paths: the machine's own role keys.
_METADATA_SECRET_RE = re.compile(
    r"(?:169\.254\.169\.254|\[fd00:ec2::254\]|metadata\.google\.internal|100\.100\.100\.200)"
    r"/[^\s'\"]*(?:security-credentials|service-accounts/[^\s'\"]*token|identity/oauth2/token|"
    r"ram/security-credentials)|169\.254\.170\.2/|/metadata/identity/oauth2/token"
)


def metadata_secret(url: str) -> Taint | None:
    """The credentials a cloud instance metadata URL answers with (AWS, GCP, Azure, Alibaba
    role keys and tokens), or None for any other URL (the region, the instance id)."""
    if _METADATA_SECRET_RE.search(url):
        return Taint("credential", "cloud instance role credentials (metadata service)")
    return None


# Words of a token's name that say it is a secret, not what kind of caller it is.
_ROLE_SKIP = _SECRET_PARTS | {"API"}
# What reads a variable in the languages read (``$``, ``${``, ``process.env.``,
# ``os.environ["``, ``{os.getenv('``), up to its name.
_ACCESSOR = r"\$?\{?[\w.\[\]'\"(]{0,40}"
# An OAuth token request's parameters that carry the caller's credential (RFC 6749's
# refresh_token and client_secret, RFC 7523's assertions, RFC 8693's exchanged tokens).
_GRANT_KEY_RE = re.compile(
    r"(?:^|[\s,{&?(\"'])[\"']?(?:refresh_token|client_secret|client_assertion|assertion|"
    r"subject_token|actor_token)[\"']?\s*[:=]\s*" + _ACCESSOR + "$"
)


def placed_tokens(written: str, taints: set[Taint]) -> set[Taint]:
    """The named tokens a request takes where its protocol asks for the caller's credential,
    outside a header: in a path segment right after a word of the token's own name saying what
    kind of caller it is (Telegram's ``/bot${BOT_TOKEN}/getMe``), or as an OAuth token
    request's credential parameter (``refresh_token: process.env.REFRESH_TOKEN``). A token
    counts only when every mention of its name in the call stands in such a place; anywhere
    else (``/log?key=$API_KEY``, ``/collect/$TOKEN``, a body's ``data``) it is data carried to
    the host.

    Args:
        written: the call as written in the source, variables named as written.
        taints: what the call carries in its address and body.
    Returns:
        The subset of ``taints`` (named environment tokens only) the call takes as credentials.
    """
    found: set[Taint] = set()
    for taint in taints:
        at = written.find(taint.what) if taint.kind == "env" else -1
        if at == -1:
            continue
        roles = {p for p in re.split(r"[^A-Z0-9]+", taint.what.upper()) if p} - _ROLE_SKIP
        while at != -1:
            if not (_after_role(written[:at], roles) or _GRANT_KEY_RE.search(written[:at][-80:])):
                break
            at = written.find(taint.what, at + len(taint.what))
        else:
            found.add(taint)
    return found


_JOINED_RE = re.compile(r"(?:['\"`]\s*\+\s*)?" + _ACCESSOR)


def _after_role(before: str, roles: set[str]) -> bool:
    """Whether a mention stands in a path segment right after one of the role words
    (``…/bot${`` before ``BOT_TOKEN``)."""
    cut = before.rfind("/")
    segment = before[cut + 1 :]
    head = re.match(r"[A-Za-z]+", segment)
    # the word, then straight into the variable: an interpolation or a string joined to it
    if (
        head is not None
        and head.group(0).upper() in roles
        and _JOINED_RE.fullmatch(segment, head.end()) is not None
    ):
        return True
    # or the word as the segment before the variable's own (APNs' /3/device/$DEVICE_TOKEN)
    previous = before[before.rfind("/", 0, cut) + 1 : cut] if cut > 0 else ""
    return previous.upper() in roles and _JOINED_RE.fullmatch(segment) is not None


@dataclass
class Send:
    """One network send (or other sink) and what reaches it."""

    line: int | None
    host: str | None
    via: str  # e.g. "curl -d", "requests.post", "fetch POST", "clipboard", "file"
    body: set[Taint] = field(default_factory=set)  # sensitive data in the body or upload
    header: set[Taint] = field(default_factory=set)  # secrets only in an auth header / -u
    sink: str = "network"  # "network" | "clipboard" | "file"
    # The call as written (variables named as written), where known: where each token stands
    # in it tells a credential the protocol asks for from data (``placed_tokens``).
    text: str = ""


@dataclass
class CodeFacts:
    """What a unit of code does, in any language, for the rules to grade: each line with what
    was sent, read, or run after decoding or downloading; each language's facts add their own."""

    sends: list[Send] = field(default_factory=list)
    reads: list[tuple[int, Taint]] = field(default_factory=list)  # credential stores read
    decode_exec: list[tuple[int, str]] = field(default_factory=list)
    download_exec: list[tuple[int, str]] = field(default_factory=list)
    reverse_shell: list[tuple[int, str]] = field(default_factory=list)
    # The code nests deeper than the reader follows: what it does is unknown, so the scan says
    # so (and holds) rather than pass it.
    too_deep: bool = False


def _names(taints: set[Taint]) -> str:
    return ", ".join(sorted({t.what for t in taints}))[:120]


# Services that catch whatever is sent to them (request bins, tunnels to a laptop, paste and
# file drops, chat webhooks): the usual far end of an exfiltration.
COLLECTOR_HOSTS = (
    "webhook.site", "requestbin", "pipedream.net", "interact.sh", "oast.pro", "oast.live",
    "oast.site", "oast.online", "oast.fun", "oast.me", "oastify.com",
    "burpcollaborator.net", "canarytokens", "hookbin", "beeceptor", "requestcatcher",
    "ngrok.io", "ngrok-free.app", "ngrok-free.dev", "ngrok.app", "ngrok.dev", "trycloudflare.com",
    "loca.lt", "serveo.net", "localhost.run", "pastebin.com", "transfer.sh", "file.io",
    "discord.com/api/webhooks", "discordapp.com/api/webhooks", "api.telegram.org/bot",
    "hooks.slack.com/services", "ptpb.pw", "0x0.st", "termbin.com",
)  # fmt: skip


_COLLECTOR_LITERALS = Literals(COLLECTOR_HOSTS)


def collector_in(text: str) -> str | None:
    """The catch-all collection or tunnel service a text names, if any."""
    lower = text.lower()
    first = len(COLLECTOR_HOSTS)  # the first of the list named, wherever it stands
    for index, at in _COLLECTOR_LITERALS.occurrences(lower):
        # a host name of its own ("toast.visible" names no oast.* host)
        if index < first and (at == 0 or not (lower[at - 1].isalnum() or lower[at - 1] in "-_")):
            first = index
    return COLLECTOR_HOSTS[first] if first < len(COLLECTOR_HOSTS) else None


def _loopback(host: str | None) -> bool:
    """Whether a host is this machine (a loopback name or address)."""
    if not host:
        return False
    host = host.lower().strip("[]").rstrip(".")
    return (
        host in ("localhost", "::1", "0.0.0.0")
        or host.endswith(".localhost")
        or re.fullmatch(r"127(?:\.\d{1,3}){3}", host) is not None
    )


# Folders every local user can read: a secret copied there has left its owner.
_SHARED_DIRS = (
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/private/tmp",
    "/Users/Shared",
    "C:\\Users\\Public",
)


# How an SDK client pointed at another address sends its key (``sdkclients``).
SDK_BASE_URL = "an SDK client's base_url"
# Names reserved for documentation and tests (RFC 2606, RFC 6761): no one else can hold them.
_RESERVED_DOMAINS = ("example.com", "example.net", "example.org")
_RESERVED_TOP_LEVEL = (".example", ".test", ".invalid")


def _reserved_for_documentation(host: str | None) -> bool:
    host = (host or "").lower().rstrip(".")
    return host.endswith(_RESERVED_TOP_LEVEL) or any(
        host == d or host.endswith("." + d) for d in _RESERVED_DOMAINS
    )


_CLI_SENDERS = frozenset({"curl", "wget"})
# A word that may name where a call goes: a URL, a host (`api.x.com/v1`), or a path alone.
_ADDRESS_RE = re.compile(
    r"\S*://\S*|/[^\s\"',]*|[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:/\S*)?|[\w-]+(?::\d+)?/\S*"
)
_CONFIGURED_RE = re.compile(r"(?:^|\s)(?:-K|--config|--url|-:|--next)\b|[$`]|\{\{")


def _path_only(send: Send) -> str | None:
    """The address of a curl or wget call written as a path alone (`curl -X POST
    /api/v2/dags/x/dagRuns -d '{…}'`, an API's path shown without the user's host), or None: a
    variable, a substitution, a config file or a template anywhere in the call may supply a
    host."""
    if send.via.split()[0] not in _CLI_SENDERS or not send.text:
        return None
    if _CONFIGURED_RE.search(send.text):
        return None
    addresses = [w for w in send.text.split() if _ADDRESS_RE.fullmatch(w)]
    if not addresses or not all(w.startswith("/") and not w.startswith("//") for w in addresses):
        return None
    return addresses[0]


def send_severity(
    send: Send,
    *,
    documentation: bool = False,
    documented: Callable[[str, str | None], bool] | None = None,
) -> tuple[str, str, str] | None:
    """Grade a send: (rule, severity, message), or None when it is not worth a finding.

    Sensitive data in the body (or any secret read from a credential store or the whole
    environment) is ``secret-exfiltration``, an error. A secret-named variable used only to
    authenticate (a header, ``-u``, or where the protocol asks for it: ``placed_tokens``) is the
    user's token for an API: info when the host is the service it names; a warning when the
    host may be a self-hosted instance of the service, or when a name that names no service
    stands outside a header (a reviewer decides whether the host is its API); an error when the
    host is another service's domain. Anything else sent over the network is a
    warning naming the host, info in documentation (a README showing the user a command).

    Args:
        send: the send.
        documentation: the send is in a Markdown file other than SKILL.md.
        documented: (token, host) -> whether the skill names the host's domain as an endpoint
            of the token's service (``endpoints.DocumentedEndpoints``): a warning, not an error.
    Returns:
        The grade, or None.
    """
    where = send.host or "an address built at run time"
    tokens = send.body | send.header
    placed = placed_tokens(send.text, send.body) if send.text and send.sink == "network" else set()
    body = send.body - placed
    if send.sink == "network" and all(t.kind == "env" for t in tokens) and _loopback(send.host):
        # Data or a named token given to a server on this machine (the user's dev server, a
        # local webhook receiver) has not left the machine; a credential store read and sent
        # is still graded below.
        carried = f" with {_names(tokens)}" if tokens else ""
        return ("network-send", "info", f"calls {where} on this machine{carried} via {send.via}")
    if send.sink == "network" and send.host and collector_in(send.host):
        # Nothing an ordinary skill needs is sent to a request bin or a tunnel.
        return (
            "secret-exfiltration" if tokens else "network-send",
            "error",
            f"sends data to {where}, a catch-all collection or tunnel service, via {send.via}",
        )
    if send.sink != "network":
        if not tokens:
            return None
        what = _names(tokens)
        if (
            send.sink == "file"
            and all(t.kind == "env" for t in tokens)
            and not (send.host or "").startswith(_SHARED_DIRS)
        ):
            # A named token (not a credential store, not the whole environment) kept in a
            # file of the tool's own (its state, its config): it stays on this machine, where
            # the token already is. Listed; a copy into a shared folder or a send is an error.
            return ("secret-exfiltration", "info", f"keeps {what} in a file ({where})")
        target = (
            "the clipboard" if send.sink == "clipboard" else f"a file outside the skill ({where})"
        )
        return ("secret-exfiltration", "error", f"sensitive data ({what}) copied to {target}")
    strong = {t for t in tokens if t.kind != "env"}
    if not strong and tokens and all(own_api(t.what, send.host) for t in tokens):
        # The user's token for this very API, in a header or the query string it asks for.
        return (
            "network-send",
            "info",
            f"calls {where} with {_names(tokens)} (the token for that API) via {send.via}",
        )
    if not strong and send.body and send.host is None:
        # A token sent to an address the scan cannot read (built from a variable): the reviewer
        # must look, but it may well be the API's own.
        return (
            "network-send",
            "warning",
            f"sends {_names(tokens)} to {where} via {send.via}: is this the service it is for?",
        )
    if body or strong:
        return (
            "secret-exfiltration",
            "error",
            f"sensitive data ({_names(tokens)}) sent to {where} via {send.via}",
        )
    path = _path_only(send) if not tokens and send.host is None else None
    if path is not None:
        # An API's path shown without the user's host: as written it reaches no server.
        return (
            "network-send",
            "info",
            f"sends data to a path given without a host ({path}) via {send.via}",
        )
    if not tokens:
        return (
            "network-send",
            "info" if documentation else "warning",
            f"sends data to {where} via {send.via}",
        )
    if (
        documentation
        and send.via == SDK_BASE_URL
        and _reserved_for_documentation(send.host)
        # a name dressed as the service's (api.anthropic.com.relay.example.net) stays an error
        and not any(w in where.lower() for t in tokens for w in _service_words(t.what))
    ):
        # A page showing the SDK's option to point the client elsewhere, at a name reserved
        # for documentation (base_url="http://my.test.server.example.com:8083"): the reader's
        # own server goes there. A script's client runs as written and stays graded below.
        return (
            "network-send",
            "warning",
            f"points an SDK client at {where}, a name reserved for documentation, with "
            f"{_names(tokens)}: is the reader's own server the service the token is for?",
        )
    # Named tokens that authenticate: in a header, or in the address where the API takes them.
    grades = {
        _token_grade(t, send.host, in_header=t in send.header, documented=documented)
        for t in tokens
    }
    if "error" in grades:
        # A token named for one service sent to another's domain (GITHUB_TOKEN to
        # github-status.example.com): the host only looks like the service's.
        return (
            "secret-exfiltration",
            "error",
            f"sends {_names(tokens)} to {where} via {send.via}, which is not the domain of "
            f"the service the token is for",
        )
    if "warning" in grades:
        return (
            "network-send",
            "warning",
            f"sends {_names(tokens)} to {where} via {send.via}: is this the service the token "
            f"is for?",
        )
    # The token is the user's for this API, or its name (API_TOKEN) names no other.
    return (
        "network-send",
        "info",
        f"calls {where} with {_names(tokens)} (the token for that API) via {send.via}",
    )


def _token_grade(
    token: Taint,
    host: str | None,
    *,
    in_header: bool,
    documented: Callable[[str, str | None], bool] | None = None,
) -> str:
    """How a named token that authenticates a request to ``host`` grades: "info" for the
    service's own API (or, in a header, a name that names no service), "warning" where the
    reviewer must decide (an address the scan cannot read, a self-hosted instance, a name that
    names no service outside a header), "error" for another service's domain."""
    if own_api(token.what, host):
        return "info"
    if not _service_words(token.what):
        # API_TOKEN names no other service. In a header it is how every API is called; in a
        # path or a token request's body it is how some are (Telegram's /bot<token>/, an OAuth
        # refresh), and the same places carry data out for a hand-made API.
        return "info" if in_header else "warning"
    if host is None or self_hosted(token.what, host):
        return "warning"
    if documented is not None and documented(token.what, host):
        return "warning"  # a domain the skill names as the service's endpoint
    return "error"
