"""What ``chimera-cards`` answers without click, read off its click commands.

Written by ``python tools/derive_cli.py``: do not edit (a test fails when it is stale).
"""

VERSION = "%(prog)s, version %(version)s\n"

# (entry-point group, the plugins' command names, (name, target) of every entry point)
# the screens were read with; None: the group takes no plugins.
PLUGINS: tuple | None = ('chimera_cards.commands', ('demo',), (('demo', 'reference_loop._plugins.commands:register_commands'),))

# Each top-level command's help: the group lists a command from it without loading it.
SHORT_HELP: dict[str, str] = {
    "demo": (
        "Run the main job end to end in a throwaway folder, checking every step."
    ),
    "lint": (
        "Lint skills: a SKILL.md file (the card alone), a skill folder, or a folder of them."
    ),
    "scan": (
        "Scan skills with our scan and any other scanners that write SARIF."
    ),
    "scanner": (
        "Other scanners (any command that writes SARIF) that scan and import can run."
    ),
    "hash": (
        "Print each skill's SKILL.md SHA-256 and its bundle digest over every file."
    ),
    "import": (
        "Import SOURCE: skill folders, an archive, a git repository, or a URL."
    ),
    "list": (
        "List every stored version (name, status, provenance, digest, import time, origin)."
    ),
    "show": (
        "Show one card version: metadata, origin, findings, and the history of its versions."
    ),
    "export": (
        "Write a skill's whole folder byte-identical, exec bits kept, plus approvals.jsonl."
    ),
    "lock": (
        "Write a lockfile pinning every active skill to its bundle digest (every file)."
    ),
    "verify": (
        "Re-hash every blob, check every version against the audit log, walk the hash chain."
    ),
    "audit": (
        "Print the append-only audit log (each entry holds the hash of the one before it)."
    ),
    "review": (
        "The queue of pending versions, or (NAME) everything needed to decide on one."
    ),
    "approve": (
        "Sign an approval of NAME's version with this digest."
    ),
    "reject": (
        "Sign a rejection: the version (and any later import of the same bytes) stays rejected."
    ),
    "retire": (
        "Withdraw a version from use. Not a security verdict (that is reject)."
    ),
    "keys": (
        "Reviewer signing keys (Ed25519)."
    ),
    "trust": (
        "The store's trust list of reviewer keys, and how many must approve (threshold)."
    ),
    "install": (
        "Write each NAME's approved bundle, byte for byte, into an agent's skills folder."
    ),
    "check": (
        "One line per skill folder: ok, modified (naming files), revoked, unknown, missing or\n    unpinned (with --lockfile)."
    ),
    "sync": (
        "Make a skills folder equal to the approved set: NAMEs, a --lockfile, or every usable skill."
    ),
    "uninstall": (
        "Remove skill folders (and links) this tool installed; a link's target is left alone."
    ),
    "adopt": (
        "Import every skill a project's agent folders hold, as npx skills left them."
    ),
    "outdated": (
        "List the skills (default: all) whose origin now holds bytes the store does not have."
    ),
    "update": (
        "Re-fetch each skill (default: all) from its recorded origin and import what changed."
    ),
    "agents": (
        "List the agents this tool can install for, with their project and user skill folders."
    ),
    "path": (
        "Print where the store lives (or, with --agent, where that agent reads skills)."
    ),
    "match": (
        "Approved cards for QUERY (one or more words), ready for a prompt. Pending, rejected,\n    retired or tampered cards are never shown (a pending one that would have matched is named on\n    stderr). Exit 1 when nothing matches, like grep."
    ),
    "prompt": (
        "Print <available_skills> for every installed skill whose bytes check calls ok."
    ),
    "serve": (
        "Serve approved skills to agents: only versions that verify now, re-hashed on every read."
    ),
    "exec": (
        "Run COMMAND seeing only the skills check calls ok: exec -- claude"
    ),
    "hook": (
        "The commands agents' hooks run before a skill loads (Claude Code, Gemini CLI)."
    ),
}

# command path -> (its help options, the help click prints, hidden).
HELP: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "": (
        ('-h', '--help'),
        "Usage: chimera-cards [OPTIONS] COMMAND [ARGS]...\n\n  Skill cards as dependencies: lint, hash, import, review, approve, install,\n  serve.\n\nOptions:\n  --version   Show the version and exit.\n  -h, --help  Show this message and exit.\n\nTry it:\n  demo  Run the main job end to end in a throwaway folder, checking...\n\nInspect skills:\n  lint     Lint skills: a SKILL.md file (the card alone), a skill...\n  scan     Scan skills with our scan and any other scanners that write...\n  scanner  Other scanners (any command that writes SARIF) that scan and...\n  hash     Print each skill's SKILL.md SHA-256 and its bundle digest...\n\nStore:\n  import  Import SOURCE: skill folders, an archive, a git repository,...\n  list    List every stored version (name, status, provenance, digest,...\n  show    Show one card version: metadata, origin, findings, and the...\n  export  Write a skill's whole folder byte-identical, exec bits kept,...\n  lock    Write a lockfile pinning every active skill to its bundle...\n  verify  Re-hash every blob, check every version against the audit...\n  audit   Print the append-only audit log (each entry holds the hash...\n\nReview:\n  review   The queue of pending versions, or (NAME) everything needed...\n  approve  Sign an approval of NAME's version with this digest.\n  reject   Sign a rejection: the version (and any later import of the...\n  retire   Withdraw a version from use.\n  keys     Reviewer signing keys (Ed25519).\n  trust    The store's trust list of reviewer keys, and how many must...\n\nInstall:\n  install    Write each NAME's approved bundle, byte for byte, into an...\n  check      One line per skill folder: ok, modified (naming files),...\n  sync       Make a skills folder equal to the approved set: NAMEs, a...\n  uninstall  Remove skill folders (and links) this tool installed; a...\n  adopt      Import every skill a project's agent folders hold, as npx...\n  outdated   List the skills (default: all) whose origin now holds bytes...\n  update     Re-fetch each skill (default: all) from its recorded origin...\n  agents     List the agents this tool can install for, with their...\n  path       Print where the store lives (or, with --agent, where that...\n\nUse approved skills:\n  match   Approved cards for QUERY (one or more words), ready for a...\n  prompt  Print <available_skills> for every installed skill whose...\n  serve   Serve approved skills to agents: only versions that verify...\n  exec    Run COMMAND seeing only the skills check calls ok: exec --...\n  hook    The commands agents' hooks run before a skill loads (Claude...\n",
        False,
    ),
    "demo": (
        ('-h', '--help'),
        "Usage: chimera-cards demo [OPTIONS]\n\n  Run the main job end to end in a throwaway folder, checking every step.\n\n  Lint, import by path and by URL, review, approve, match, and run the loop\n  with the cards (exit 0 all expectations met, 1 any failed).\n\nOptions:\n  --keep DIRECTORY                Run in this new or empty folder and keep it\n                                  (store, key, prompts, workspace); default: a\n                                  temporary folder, removed at the end.\n  --history [accumulate|last|none|accumulate-nopatch]\n                                  The loop's history mode; 'last' is the\n                                  overwrite bug, and the demo's own check then\n                                  fails (exit 1).  [default: accumulate]\n  --max-attempts INTEGER RANGE    Attempts for the loop step (at least 3).\n                                  [default: 5; x>=3]\n  --json                          Print JSON.\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "lint": (
        ('-h', '--help'),
        "Usage: chimera-cards lint [OPTIONS] PATHS...\n\n  Lint skills: a SKILL.md file (the card alone), a skill folder, or a folder\n  of them.\n\n  A folder is linted as import would store it: the card, every other text\n  file's hidden-instruction scan, scripts as code, binaries listed; each\n  finding names its file. Exit 0 when no errors, 1 when errors were found, 2\n  on usage errors or unreadable input. The hidden-instruction scan runs in\n  every profile.\n\nOptions:\n  --profile [agent-skills|chimera]\n                                  agent-skills (default): the Agent Skills\n                                  specification; chimera: also the five\n                                  sections and Chimera's frontmatter.\n                                  [default: agent-skills]\n  --strict                        Deprecated: same as --profile chimera.\n  --lenient                       Deprecated: same as --profile agent-skills.\n  --format [text|json|sarif]      [default: text]\n  --json                          Same as --format json.\n  --min-severity [error|warning|info]\n                                  List findings of this severity and above\n                                  (text default: warning; json and sarif list\n                                  everything unless given). Counts always\n                                  count everything.\n  -v, --verbose                   List info findings too (--min-severity\n                                  info).\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "scan": (
        ('-h', '--help'),
        "Usage: chimera-cards scan [OPTIONS] PATHS...\n\n  Scan skills with our scan and any other scanners that write SARIF.\n\n  PATHS: SKILL.md files, skill folders, folders of them. Each --scanner runs\n  over each skill folder; a scanner that fails or times out counts as an error\n  (fail closed). --format sarif writes one SARIF 2.1.0 log with a run per\n  tool. Exit 0 when no errors, 1 when errors were found, 2 on usage errors.\n\nOptions:\n  --scanner NAME                  Also run this scanner (a preset such as\n                                  'cisco', or one configured with `chimera-\n                                  cards scanner set` or in --scanners-file);\n                                  repeatable.\n  --scanners-file FILE            YAML or JSON file of scanners ('scanners:\n                                  {NAME: {command: ...}}'); default\n                                  $CHIMERA_CARDS_SCANNERS_FILE.\n  --profile [agent-skills|chimera]\n                                  The card profile for our lint. [default:\n                                  agent-skills]\n  --format [text|json|sarif]      [default: text]\n  --store FILE                    Store file (default:\n                                  $CHIMERA_CARDS_HOME/cards.db, else the XDG\n                                  data dir).\n  --json                          Print JSON.\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "scanner": (
        ('-h', '--help'),
        "Usage: chimera-cards scanner [OPTIONS] COMMAND [ARGS]...\n\n  Other scanners (any command that writes SARIF) that scan and import can run.\n\nOptions:\n  -h, --help  Show this message and exit.\n\nCommands:\n  list    List the scanners a name can mean: presets, the store's, and a...\n  remove  Forget scanner NAME configured in the store.\n  set     Configure scanner NAME in the store: a command line with {dir}...\n",
        False,
    ),
    "hash": (
        ('-h', '--help'),
        "Usage: chimera-cards hash [OPTIONS] PATHS...\n\n  Print each skill's SKILL.md SHA-256 and its bundle digest over every file.\n\n  PATHS: skill folders, collections, archives, SKILL.md files.\n\n  Each is printed as `import --digest` takes it, prefixed: `skill_md:HEX` pins\n  SKILL.md alone, `digest:HEX` the whole skill (and so do the other digests\n  --format prints). docs/bundles.md defines each digest.\n\nOptions:\n  --json                          Print each skill's hashes and its manifest.\n  --format [chimera|digest|npx|skill_digest|all]\n                                  chimera: the SKILL.md file's SHA-256 and our\n                                  bundle digest; digest, npx (npx skills'\n                                  computedHash), skill_digest (the Agent\n                                  Skills proposal): that digest alone,\n                                  prefixed; all: the three digests.  [default:\n                                  chimera]\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "import": (
        ('-h', '--help'),
        "Usage: chimera-cards import [OPTIONS] SOURCE\n\n  Import SOURCE: skill folders, an archive, a git repository, or a URL.\n\n  SOURCE: a skill folder, a folder of skills, a SKILL.md, an archive (.zip,\n  .skill, .tar.gz; path or URL), a git repository (path or URL; --ref),\n  owner/repo[@skill] or a code host's web URL (…/tree/REF/PATH), a site\n  publishing /.well-known/agent-skills, or a SKILL.md URL.\n\n  Every file of each skill is stored as one bundle. One line per skill. Exit 0\n  when every skill imported (or was already present), 1 when any was refused,\n  2 for a usage error.\n\n  Each --scanner runs over every new skill's files; its findings are stored\n  with the version (shown by `review`), and an error among them, or a scanner\n  that fails, holds it pending.\n\nOptions:\n  --lockfile FILE       Refuse any skill whose name and digest are not pinned\n                        in this lockfile.\n  --digest DIGEST       Pin the skill: it must have this digest, or nothing is\n                        stored. Our bundle digest (HEX or digest:HEX), npx's\n                        computedHash (npx:HEX), a skill_digest (sha256-...),\n                        or the SKILL.md file's own SHA-256 (skill_md:HEX, or\n                        skill_md:sha256-BASE64 as SRI writes it), as `hash\n                        --format` prints them.\n  --ref REF             Read SOURCE as a git repository at this branch, tag or\n                        commit.\n  --skill NAME          Import only this skill out of a collection, archive or\n                        repository.\n  --plugin NAME         Import only this plugin's skills out of a Claude Code\n                        marketplace.\n  --list                Show the skills SOURCE holds (name, folder, plugin,\n                        digest); import nothing.\n  --taint               Mark the import tainted (held pending for review).\n  --timeout SECONDS     Seconds allowed for fetching a URL.  [default: 10.0]\n  --scanner NAME        Also run this scanner (a preset such as 'cisco', or\n                        one configured with `chimera-cards scanner set` or in\n                        --scanners-file); repeatable.\n  --scanners-file FILE  YAML or JSON file of scanners ('scanners: {NAME:\n                        {command: ...}}'); default\n                        $CHIMERA_CARDS_SCANNERS_FILE.\n  --store FILE          Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                        else the XDG data dir).\n  --json                Print JSON.\n  -h, --help            Show this message and exit.\n",
        False,
    ),
    "list": (
        ('-h', '--help'),
        "Usage: chimera-cards list [OPTIONS]\n\n  List every stored version (name, status, provenance, digest, import time,\n  origin).\n\n  With --installed: every skill folder of every agent, with agent, folder,\n  version and state.\n\nOptions:\n  --status [active|pending|rejected|retired]\n                                  Only this status.\n  --installed                     Instead: every skill folder of every agent\n                                  (project and user-wide), with its state.\n  --store FILE                    Store file (default:\n                                  $CHIMERA_CARDS_HOME/cards.db, else the XDG\n                                  data dir).\n  --json                          Print JSON.\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "show": (
        ('-h', '--help'),
        "Usage: chimera-cards show [OPTIONS] NAME\n\n  Show one card version: metadata, origin, findings, and the history of its\n  versions.\n\nOptions:\n  --digest DIGEST  A version's digest (or its first 6+ hex digits); default\n                   the active one.\n  --store FILE     Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                   XDG data dir).\n  --json           Print JSON.\n  -h, --help       Show this message and exit.\n",
        False,
    ),
    "export": (
        ('-h', '--help'),
        "Usage: chimera-cards export [OPTIONS] NAME\n\n  Write a skill's whole folder byte-identical, exec bits kept, plus\n  approvals.jsonl.\n\n  Its active, approved version by default.\n\nOptions:\n  -o, --output DIRECTORY  Directory; the skill's folder is written to\n                          DIR/NAME/.  [required]\n  --digest DIGEST         Export the version with this digest (or its first 6+\n                          hex digits), not the active one.\n  --unapproved            Also export a version that is not approved (pending,\n                          rejected, retired).\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "lock": (
        ('-h', '--help'),
        "Usage: chimera-cards lock [OPTIONS]\n\n  Write a lockfile pinning every active skill to its bundle digest (every\n  file).\n\nOptions:\n  -o, --output FILE       Lockfile to write (default: cards.lock; skills-\n                          lock.json with --format npx).\n  --format [chimera|npx]  chimera: `name digest:DIGEST` lines; npx: the\n                          skills-lock.json npx skills reads (its computedHash,\n                          with our digest beside it).  [default: chimera]\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "verify": (
        ('-h', '--help'),
        "Usage: chimera-cards verify [OPTIONS]\n\n  Re-hash every blob, check every version against the audit log, walk the hash\n  chain.\n\n  Also compares the schema (tables, indexes, triggers, views) with the one\n  this code creates, and the log's end with the heads kept outside it (the\n  head file, --expect-head). Exit 1 naming each problem if anything was\n  tampered with. The outcome is itself audited.\n\nOptions:\n  --expect-head HEX  An audit head kept elsewhere (`audit head` printed it):\n                     fail unless the log holds it.\n  --store FILE       Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                     the XDG data dir).\n  --json             Print JSON.\n  -h, --help         Show this message and exit.\n",
        False,
    ),
    "audit": (
        ('-h', '--help'),
        "Usage: chimera-cards audit [OPTIONS] [head]\n\n  Print the append-only audit log (each entry holds the hash of the one before\n  it).\n\n  `audit head` prints the hash of its newest entry: keep it elsewhere (a CI\n  log, a commit) and give it to `verify --expect-head` to prove nothing was\n  cut off the log's end.\n\nOptions:\n  --reset       With `head`: re-anchor the head file to the log as it is now\n                (after looking into a rollback); the reset is itself recorded\n                in the log.\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "review": (
        ('-h', '--help'),
        "Usage: chimera-cards review [OPTIONS] [NAME]\n\n  The queue of pending versions, or (NAME) everything needed to decide on one.\n\nOptions:\n  --digest DIGEST      Review this version (its digest or 12+ digits of it;\n                       default: the newest pending).\n  --files              Also print every file in full (an update shows the diff\n                       against the last approved version instead).\n  --expiring DURATION  With no NAME: also list active versions whose approvals\n                       expire within DURATION (default 14d; with --json, the\n                       output becomes {pending, expiring}).\n  --store FILE         Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                       the XDG data dir).\n  --json               Print JSON.\n  -h, --help           Show this message and exit.\n",
        False,
    ),
    "approve": (
        ('-h', '--help'),
        "Usage: chimera-cards approve [OPTIONS] NAME\n\n  Sign an approval of NAME's version with this digest.\n\nOptions:\n  --key NAME|FILE         Your private key: the NAME given to `keys generate`,\n                          or the key file.  [required]\n  --digest DIGEST         The version you reviewed: its bundle digest as\n                          `review` prints it (12+ digits do), or the SKILL.md\n                          SHA-256 of a one-file skill.  [required]\n  --note TEXT             A note kept in the signed statement.\n  --accept FINDING-ID     Accept this error finding as read (repeat for each);\n                          kept in the signed statement.\n  --allow-downgrade       The version is older than what the name has been:\n                          move the name back to it (the approval says so,\n                          signed).\n  --expires DURATION      The approval stops counting after this long (90d,\n                          12h, 2w; `never`). Default: the trust file's\n                          `expires`, else never.\n  --passphrase-file FILE  File holding the key's passphrase.\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "reject": (
        ('-h', '--help'),
        "Usage: chimera-cards reject [OPTIONS] NAME\n\n  Sign a rejection: the version (and any later import of the same bytes) stays\n  rejected.\n\nOptions:\n  --key NAME|FILE         Your private key: the NAME given to `keys generate`,\n                          or the key file.  [required]\n  --digest DIGEST         The version you reject: its bundle digest (12+\n                          digits do), as for approve.  [required]\n  --reason TEXT           Why (kept in the signed statement).  [required]\n  --passphrase-file FILE  File holding the key's passphrase.\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "retire": (
        ('-h', '--help'),
        "Usage: chimera-cards retire [OPTIONS] NAME\n\n  Withdraw a version from use. Not a security verdict (that is reject).\n\nOptions:\n  --digest DIGEST  Retire this version (default: the active one).\n  --reason TEXT    Why it is withdrawn.\n  --store FILE     Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                   XDG data dir).\n  --json           Print JSON.\n  -h, --help       Show this message and exit.\n",
        False,
    ),
    "keys": (
        ('-h', '--help'),
        "Usage: chimera-cards keys [OPTIONS] COMMAND [ARGS]...\n\n  Reviewer signing keys (Ed25519).\n\nOptions:\n  -h, --help  Show this message and exit.\n\nCommands:\n  generate  Make a key pair: KEYFILE (0600) and KEYFILE.pub; the new key...\n  list      The private keys `--key NAME` finds here, and whether the...\n",
        False,
    ),
    "trust": (
        ('-h', '--help'),
        "Usage: chimera-cards trust [OPTIONS] COMMAND [ARGS]...\n\n  The store's trust list of reviewer keys, and how many must approve\n  (threshold).\n\nOptions:\n  -h, --help  Show this message and exit.\n\nCommands:\n  add        Trust PUBKEY (a .pub file or the key text) as NAME.\n  export     Write the trust list and threshold to TRUST_FILE, for a...\n  list       The trusted keys and the threshold.\n  remove     Stop trusting NAME's key; its approvals no longer count.\n  sync       Make the trust list and threshold equal to TRUST_FILE (a...\n  threshold  Show, or set to K, how many distinct trusted reviewers must...\n",
        False,
    ),
    "install": (
        ('-h', '--help'),
        "Usage: chimera-cards install [OPTIONS] NAMES...\n\n  Write each NAME's approved bundle, byte for byte, into an agent's skills\n  folder.\n\n  Pending, rejected or retired versions are refused; nothing is written unless\n  every NAME can be installed.\n\nOptions:\n  --to DIRECTORY  The skills folder (each skill goes to DIR/NAME/).\n  --agent TEXT    For this agent (see `chimera-cards agents`); repeat for\n                  several, '*' for every agent detected here.\n  --global        With --agent: its user-wide folder.\n  --force         Replace folders and links this tool did not make, and\n                  installed folders changed since (the changes are lost).\n  --link          As npx skills does: one copy in .agents/skills, a link to it\n                  in each other agent's folder.\n  --store FILE    Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                  XDG data dir).\n  --json          Print JSON.\n  -h, --help      Show this message and exit.\n",
        False,
    ),
    "check": (
        ('-h', '--help'),
        "Usage: chimera-cards check [OPTIONS] [DIRS]...\n\n  One line per skill folder: ok, modified (naming files), revoked, unknown,\n  missing or unpinned (with --lockfile).\n\n  A folder that is a link is checked at its target (`ok NAME ->\n  .agents/skills/NAME`); a link leaving the project is reported, never\n  followed. Without a store every folder is unknown. Exit 0 only when every\n  skill is ok: the command to run in CI on `.claude/skills`.\n\nOptions:\n  --agent TEXT                Check this agent's skills folder (repeat for\n                              several; '*': every detected agent).\n  --global                    With --agent: its user-wide folder.\n  --all                       Every agent folder that exists here.\n  --trust-file FILE           Judge approvals against this trust file's keys\n                              and threshold, not the store's.\n  --lockfile FILE             Also verify it: our lockfile's digests (a folder\n                              it does not pin is unpinned, a pin with no\n                              folder missing), or npx's skills-lock.json\n                              computedHash.\n  --store FILE                Store file (default:\n                              $CHIMERA_CARDS_HOME/cards.db, else the XDG data\n                              dir).\n  --json                      Print JSON.\n  --format [text|json|sarif]  text (default), json (same as --json), or sarif\n                              (SARIF 2.1.0, for code scanning).\n  -h, --help                  Show this message and exit.\n",
        False,
    ),
    "sync": (
        ('-h', '--help'),
        "Usage: chimera-cards sync [OPTIONS] [NAMES]...\n\n  Make a skills folder equal to the approved set: NAMEs, a --lockfile, or\n  every usable skill.\n\n  Installs what is missing, replaces what was upgraded, removes what this tool\n  installed and is no longer approved; folders it did not install are never\n  touched. With --lockfile the folder is made exactly the lock, as npm ci\n  makes node_modules: what this tool installed and the lock does not pin is\n  removed too, and exit 1 when any pin is not installed or kept, or a folder\n  it did not install is not pinned, naming why for each.\n\nOptions:\n  --to DIRECTORY   The skills folder (each skill goes to DIR/NAME/).\n  --agent TEXT     For this agent (see `chimera-cards agents`); repeat for\n                   several, '*' for every agent detected here.\n  --global         With --agent: its user-wide folder.\n  --lockfile FILE  Make the folder hold exactly the bundles this lockfile\n                   pins: what it does not pin is removed (a folder this tool\n                   did not install is named, and the sync fails).\n  --dry-run        Print the plan; change nothing.\n  --store FILE     Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                   XDG data dir).\n  --json           Print JSON.\n  -h, --help       Show this message and exit.\n",
        False,
    ),
    "uninstall": (
        ('-h', '--help'),
        "Usage: chimera-cards uninstall [OPTIONS] NAMES...\n\n  Remove skill folders (and links) this tool installed; a link's target is\n  left alone.\n\nOptions:\n  --to DIRECTORY  The skills folder (each skill goes to DIR/NAME/).\n  --agent TEXT    For this agent (see `chimera-cards agents`); repeat for\n                  several, '*' for every agent detected here.\n  --global        With --agent: its user-wide folder.\n  --force         Remove a folder even if this tool did not install it.\n  --json          Print JSON.\n  -h, --help      Show this message and exit.\n",
        False,
    ),
    "adopt": (
        ('-h', '--help'),
        "Usage: chimera-cards adopt [OPTIONS] [ROOT]\n\n  Import every skill a project's agent folders hold, as npx skills left them.\n\n  Each folder becomes a version whose source is what npx's lock records\n  (update fetches from there, never from the folder); a remote one is held for\n  review. Exit 1 when something could not be adopted (a link out, a lock entry\n  with no folder, files npx did not record).\n\nOptions:\n  --global      The user-wide agent folders and ~/.agents/.skill-lock.json.\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "outdated": (
        ('-h', '--help'),
        "Usage: chimera-cards outdated [OPTIONS] [NAMES]...\n\n  List the skills (default: all) whose origin now holds bytes the store does\n  not have.\n\n  Nothing is imported. Exit 1 when something changed upstream (or could not be\n  fetched).\n\nOptions:\n  --timeout SECONDS  Seconds allowed for each fetch.  [default: 10.0]\n  --store FILE       Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                     the XDG data dir).\n  --json             Print JSON.\n  -h, --help         Show this message and exit.\n",
        False,
    ),
    "update": (
        ('-h', '--help'),
        "Usage: chimera-cards update [OPTIONS] [NAMES]...\n\n  Re-fetch each skill (default: all) from its recorded origin and import what\n  changed.\n\n  New bytes become a new version, held pending like any network import;\n  `review NAME` shows the per-file diff against the approved one. Exit 1 if an\n  origin could not be fetched, or went back to bytes that must not be used\n  (downgrade, rejected).\n\nOptions:\n  --timeout SECONDS  Seconds allowed for each fetch.  [default: 10.0]\n  --store FILE       Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                     the XDG data dir).\n  --json             Print JSON.\n  -h, --help         Show this message and exit.\n",
        False,
    ),
    "agents": (
        ('-h', '--help'),
        "Usage: chimera-cards agents [OPTIONS]\n\n  List the agents this tool can install for, with their project and user skill\n  folders.\n\n  A `*` marks the agents detected on this machine (their home folder exists).\n\nOptions:\n  --json      Print JSON.\n  -h, --help  Show this message and exit.\n",
        False,
    ),
    "path": (
        ('-h', '--help'),
        "Usage: chimera-cards path [OPTIONS]\n\n  Print where the store lives (or, with --agent, where that agent reads\n  skills).\n\nOptions:\n  --agent TEXT  Print this agent's skills folder instead.\n  --global      With --agent: its user-wide folder.\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "match": (
        ('-h', '--help'),
        "Usage: chimera-cards match [OPTIONS] QUERY...\n\n  Approved cards for QUERY (one or more words), ready for a prompt. Pending,\n  rejected, retired or tampered cards are never shown (a pending one that\n  would have matched is named on stderr). Exit 1 when nothing matches, like\n  grep.\n\nOptions:\n  -k INTEGER RANGE             At most this many cards.  [default: 5;\n                               1<=x<=100]\n  --level INTEGER RANGE        1: name, description, triggers; 2: + the body.\n                               [default: 2; 1<=x<=2]\n  --format [cards|skills-xml]  cards: <skill-card> text for the reference\n                               loop; skills-xml: the Agent Skills\n                               <available_skills> block pointing at the\n                               installed SKILL.md (needs --to or --agent).\n                               [default: cards]\n  --to DIRECTORY               With skills-xml: the skills folder they are\n                               installed in.\n  --agent TEXT                 With skills-xml: the agent they are installed\n                               for.\n  --global                     With --agent: its user-wide folder.\n  --store FILE                 Store file (default:\n                               $CHIMERA_CARDS_HOME/cards.db, else the XDG data\n                               dir).\n  --json                       Print JSON.\n  -h, --help                   Show this message and exit.\n",
        False,
    ),
    "prompt": (
        ('-h', '--help'),
        "Usage: chimera-cards prompt [OPTIONS] [DIRS]...\n\n  Print <available_skills> for every installed skill whose bytes check calls\n  ok.\n\n  The same block `agentskills to-prompt` prints for those folders; a skill\n  that is modified, revoked or unknown is left out and named in one `note:`\n  line on stderr.\n\nOptions:\n  --agent TEXT       This agent's skills folder.\n  --global           With --agent: its user-wide folder.\n  --trust-file FILE  Judge approvals against this trust file's keys and\n                     threshold, not the store's.\n  --store FILE       Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                     the XDG data dir).\n  --json             Print JSON.\n  -h, --help         Show this message and exit.\n",
        False,
    ),
    "serve": (
        ('-h', '--help'),
        "Usage: chimera-cards serve [OPTIONS]\n\n  Serve approved skills to agents: only versions that verify now, re-hashed on\n  every read.\n\n  A pending, rejected, revoked or tampered version is absent; an approval or a\n  tamper shows on the next request, without a restart. With --from, only\n  folders check calls ok are served.\n\nOptions:\n  --mcp                     Serve the MCP Skills extension.\n  --from DIRECTORY          Serve the skills in this agent folder that check\n                            calls ok (default: the store).\n  --agent TEXT              Like --from, that agent's skills folder.\n  --global                  With --agent: its user-wide folder.\n  --transport [stdio|http]  stdio, or streamable HTTP on --host/--port.\n                            [default: stdio]\n  --host TEXT               Loopback address (http).  [default: 127.0.0.1]\n  --port INTEGER RANGE      TCP port (0: a free one).  [0<=x<=65535]\n  --trust-file FILE         Judge approvals against this trust file's keys and\n                            threshold, not the store's.\n  --store FILE              Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                            else the XDG data dir).\n  -h, --help                Show this message and exit.\n",
        False,
    ),
    "exec": (
        ('-h', '--help'),
        "Usage: chimera-cards exec [OPTIONS] [COMMAND]...\n\n  Run COMMAND seeing only the skills check calls ok: exec -- claude\n\nOptions:\n  --agent AGENT      The agent started: any, claude, codex, gemini (all\n                     agents' folders are judged).\n  --dry-run          Judge and print the view; start nothing.\n  --keep-commands    Show .claude/commands as they are.\n  --trust-file FILE  Judge approvals against this trust file's keys and\n                     threshold, not the store's.\n  --store FILE       Store file (default: $CHIMERA_CARDS_HOME/cards.db, else\n                     the XDG data dir).\n  --json             Print JSON.\n  -h, --help         Show this message and exit.\n",
        False,
    ),
    "hook": (
        ('-h', '--help'),
        "Usage: chimera-cards hook [OPTIONS] COMMAND [ARGS]...\n\n  The commands agents' hooks run before a skill loads (Claude Code, Gemini\n  CLI).\n\nOptions:\n  -h, --help  Show this message and exit.\n\nCommands:\n  claude  Run as Claude Code's PreToolUse hook: block a skill whose bytes...\n  gemini  Run as Gemini CLI's BeforeTool hook: block a skill whose bytes...\n",
        False,
    ),
    "scanner list": (
        ('-h', '--help'),
        "Usage: chimera-cards scanner list [OPTIONS]\n\n  List the scanners a name can mean: presets, the store's, and a scanners\n  file's.\n\nOptions:\n  --scanners-file FILE  YAML or JSON file of scanners ('scanners: {NAME:\n                        {command: ...}}'); default\n                        $CHIMERA_CARDS_SCANNERS_FILE.\n  --store FILE          Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                        else the XDG data dir).\n  --json                Print JSON.\n  -h, --help            Show this message and exit.\n",
        False,
    ),
    "scanner remove": (
        ('-h', '--help'),
        "Usage: chimera-cards scanner remove [OPTIONS] NAME\n\n  Forget scanner NAME configured in the store.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "scanner set": (
        ('-h', '--help'),
        "Usage: chimera-cards scanner set [OPTIONS] NAME\n\n  Configure scanner NAME in the store: a command line with {dir} (and {output}\n  if it writes its SARIF log to a file rather than printing it).\n\nOptions:\n  --command TEXT          The command line, with {dir}.\n  --preset TEXT           Start from a preset's settings (e.g. cisco).\n  --timeout SECONDS       Seconds before it counts as failed.\n  --level LEVEL=SEVERITY  Map a SARIF level (error, warning, note, none) to a\n                          severity (error, warning, info); repeatable. An\n                          error holds the version.\n  --on-import             Run it on every import into this store (update too),\n                          not only when named.\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "keys generate": (
        ('-h', '--help'),
        "Usage: chimera-cards keys generate [OPTIONS] NAME\n\n  Make a key pair: KEYFILE (0600) and KEYFILE.pub; the new key joins the\n  store's trust list.\n\nOptions:\n  -o, --output FILE       Private key file (default:\n                          $CHIMERA_CARDS_HOME/keys/NAME.key).\n  --passphrase-file FILE  File holding the key's passphrase.\n  --store FILE            Store file (default: $CHIMERA_CARDS_HOME/cards.db,\n                          else the XDG data dir).\n  --json                  Print JSON.\n  -h, --help              Show this message and exit.\n",
        False,
    ),
    "keys list": (
        ('-h', '--help'),
        "Usage: chimera-cards keys list [OPTIONS]\n\n  The private keys `--key NAME` finds here, and whether the store trusts each\n  one.\n\n  Looked for as keys/NAME.key beside the store in use, then beside the default\n  store (where `keys generate` writes them).\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust add": (
        ('-h', '--help'),
        "Usage: chimera-cards trust add [OPTIONS] NAME PUBKEY\n\n  Trust PUBKEY (a .pub file or the key text) as NAME.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust export": (
        ('-h', '--help'),
        "Usage: chimera-cards trust export [OPTIONS] TRUST_FILE\n\n  Write the trust list and threshold to TRUST_FILE, for a team's git\n  repository.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust list": (
        ('-h', '--help'),
        "Usage: chimera-cards trust list [OPTIONS]\n\n  The trusted keys and the threshold.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust remove": (
        ('-h', '--help'),
        "Usage: chimera-cards trust remove [OPTIONS] NAME\n\n  Stop trusting NAME's key; its approvals no longer count.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust sync": (
        ('-h', '--help'),
        "Usage: chimera-cards trust sync [OPTIONS] TRUST_FILE\n\n  Make the trust list and threshold equal to TRUST_FILE (a team's file kept in\n  git).\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "trust threshold": (
        ('-h', '--help'),
        "Usage: chimera-cards trust threshold [OPTIONS] [K]\n\n  Show, or set to K, how many distinct trusted reviewers must approve a\n  version.\n\nOptions:\n  --store FILE  Store file (default: $CHIMERA_CARDS_HOME/cards.db, else the\n                XDG data dir).\n  --json        Print JSON.\n  -h, --help    Show this message and exit.\n",
        False,
    ),
    "hook claude": (
        ('-h', '--help'),
        "Usage: chimera-cards hook claude [OPTIONS]\n\n  Run as Claude Code's PreToolUse hook: block a skill whose bytes are not\n  approved.\n\n  Reads the hook's JSON on stdin. Exit 2 (the call is blocked; the one stderr\n  line is shown to the model) unless check would call the skill ok. Bad input,\n  a missing store or any failure blocks too, unless --fail-open. As a\n  SessionStart hook it reports drift.\n\nOptions:\n  --install                       Write the hooks into .claude/settings.json\n                                  (merged; other hooks are kept).\n  --settings FILE                 With --install: this settings file (default:\n                                  ./.claude/settings.json).\n  --global                        With --install: the user-wide settings file\n                                  (every project of this user).\n  --managed                       With --install: the administrator's settings\n                                  file, which no project can turn off\n                                  (/etc/...).\n  --event [auto|pre-tool-use|session-start|user-prompt]\n                                  Which hook event the input is (default: its\n                                  hook_event_name).\n  --fail-open                     Warn instead of blocking when the hook\n                                  fails.\n  --deadline SECONDS              Block past this many seconds (default 10).\n  --trust-file FILE               Judge approvals against this trust file's\n                                  keys and threshold, not the store's.\n  --store FILE                    Store file (default:\n                                  $CHIMERA_CARDS_HOME/cards.db, else the XDG\n                                  data dir).\n  --json                          With --install: print what was written as\n                                  JSON (a hook run answers the agent in its\n                                  own JSON).\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "hook gemini": (
        ('-h', '--help'),
        "Usage: chimera-cards hook gemini [OPTIONS]\n\n  Run as Gemini CLI's BeforeTool hook: block a skill whose bytes are not\n  approved.\n\n  Reads the hook's JSON on stdin. Exit 2 (the call is blocked; the one stderr\n  line is shown to the model) unless check would call the skill ok. Bad input,\n  a missing store or any failure blocks too, unless --fail-open. As a\n  SessionStart hook it reports drift.\n\nOptions:\n  --install                       Write the hooks into .gemini/settings.json\n                                  (merged; other hooks are kept).\n  --settings FILE                 With --install: this settings file (default:\n                                  ./.gemini/settings.json).\n  --global                        With --install: the user-wide settings file\n                                  (every project of this user).\n  --managed                       With --install: the administrator's settings\n                                  file, which no project can turn off\n                                  (/etc/...).\n  --event [auto|pre-tool-use|session-start|user-prompt]\n                                  Which hook event the input is (default: its\n                                  hook_event_name).\n  --fail-open                     Warn instead of blocking when the hook\n                                  fails.\n  --deadline SECONDS              Block past this many seconds (default 10).\n  --trust-file FILE               Judge approvals against this trust file's\n                                  keys and threshold, not the store's.\n  --store FILE                    Store file (default:\n                                  $CHIMERA_CARDS_HOME/cards.db, else the XDG\n                                  data dir).\n  --json                          With --install: print what was written as\n                                  JSON (a hook run answers the agent in its\n                                  own JSON).\n  -h, --help                      Show this message and exit.\n",
        False,
    ),
}

# command path -> (body, bound arguments, ((click-only parameter, default), ...),
# ((name, opts, kind, flag, multiple, nargs, required, default), ...)).
COMMANDS: dict[str, tuple] = {
    "install": (
        "chimera_cards._cli.plain:install_body",
        {},
        (),
        (
            ('names', (), ('text',), False, False, -1, True, ()),
            ('to', ('--to',), ('path', False, True, True), False, False, 1, False, None),
            ('agent', ('--agent',), ('text',), False, True, 1, False, ()),
            ('global_', ('--global',), ('flag',), True, False, 1, False, False),
            ('force', ('--force',), ('flag',), True, False, 1, False, False),
            ('link', ('--link',), ('flag',), True, False, 1, False, False),
            ('store_path', ('--store',), ('path', True, False, True), False, False, 1, False, None),
            ('as_json', ('--json',), ('flag',), True, False, 1, False, False),
        ),
    ),
    "check": (
        "chimera_cards._cli.plain:check_body",
        {},
        (),
        (
            ('dirs', (), ('path', False, True, True), False, False, -1, False, ()),
            ('agent', ('--agent',), ('text',), False, True, 1, False, ()),
            ('global_', ('--global',), ('flag',), True, False, 1, False, False),
            ('all_', ('--all',), ('flag',), True, False, 1, False, False),
            ('trust_file', ('--trust-file',), ('path', True, False, True), False, False, 1, False, None),
            ('lockfile', ('--lockfile',), ('path', True, False, True), False, False, 1, False, None),
            ('store_path', ('--store',), ('path', True, False, True), False, False, 1, False, None),
            ('as_json', ('--json',), ('flag',), True, False, 1, False, False),
            ('fmt', ('--format',), ('text',), False, False, 1, False, None),
        ),
    ),
    "hook claude": (
        "chimera_cards._cli.plain:hook_body",
        {'agent': 'claude'},
        (('install_', False), ('settings_path', None), ('global_', False), ('managed', False), ('as_json', False)),
        (
            ('install_', ('--install',), ('flag',), True, False, 1, False, False),
            ('settings_path', ('--settings',), ('path', True, False, True), False, False, 1, False, None),
            ('global_', ('--global',), ('flag',), True, False, 1, False, False),
            ('managed', ('--managed',), ('flag',), True, False, 1, False, False),
            ('event', ('--event',), ('choice', ('auto', 'pre-tool-use', 'session-start', 'user-prompt')), False, False, 1, False, 'auto'),
            ('fail_open', ('--fail-open',), ('flag',), True, False, 1, False, False),
            ('deadline', ('--deadline',), ('text',), False, False, 1, False, None),
            ('trust_file', ('--trust-file',), ('path', True, False, True), False, False, 1, False, None),
            ('store_path', ('--store',), ('path', True, False, True), False, False, 1, False, None),
            ('as_json', ('--json',), ('flag',), True, False, 1, False, False),
        ),
    ),
    "hook gemini": (
        "chimera_cards._cli.plain:hook_body",
        {'agent': 'gemini'},
        (('install_', False), ('settings_path', None), ('global_', False), ('managed', False), ('as_json', False)),
        (
            ('install_', ('--install',), ('flag',), True, False, 1, False, False),
            ('settings_path', ('--settings',), ('path', True, False, True), False, False, 1, False, None),
            ('global_', ('--global',), ('flag',), True, False, 1, False, False),
            ('managed', ('--managed',), ('flag',), True, False, 1, False, False),
            ('event', ('--event',), ('choice', ('auto', 'pre-tool-use', 'session-start', 'user-prompt')), False, False, 1, False, 'auto'),
            ('fail_open', ('--fail-open',), ('flag',), True, False, 1, False, False),
            ('deadline', ('--deadline',), ('text',), False, False, 1, False, None),
            ('trust_file', ('--trust-file',), ('path', True, False, True), False, False, 1, False, None),
            ('store_path', ('--store',), ('path', True, False, True), False, False, 1, False, None),
            ('as_json', ('--json',), ('flag',), True, False, 1, False, False),
        ),
    ),
}
