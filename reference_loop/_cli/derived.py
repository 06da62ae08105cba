"""What ``reference-loop`` answers without click, read off its click commands.

Written by ``python tools/derive_cli.py``: do not edit (a test fails when it is stale).
"""

VERSION = "%(prog)s, version %(version)s\n"

# (entry-point group, the plugins' command names, (name, target) of every entry point)
# the screens were read with; None: the group takes no plugins.
PLUGINS: tuple | None = None

# Each top-level command's help: the group lists a command from it without loading it.
SHORT_HELP: dict[str, str] = {
    "bench": (
        "Compare history arms (none, last, accumulate, ...) over the same task x seed pairs."
    ),
    "check": (
        "The card's Check: attempt 3's prompt must show attempt 1's patch (exit 0 pass, 1 fail)."
    ),
    "run": (
        "Run the loop on a task (exit 0 solved, 1 not solved, 2 usage)."
    ),
    "tasks": (
        "List the sample tasks."
    ),
}

# command path -> (its help options, the help click prints, hidden).
HELP: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "": (
        ('-h', '--help'),
        "Usage: reference-loop [OPTIONS] COMMAND [ARGS]...\n"
        "\n"
        "  The reference carry-the-failure-forward retry loop.\n"
        "\n"
        "Options:\n"
        "  --version   Show the version and exit.\n"
        "  -h, --help  Show this message and exit.\n"
        "\n"
        "Commands:\n"
        "  bench  Compare history arms (none, last, accumulate, ...) over the same...\n"
        "  check  The card's Check: attempt 3's prompt must show attempt 1's patch...\n"
        "  run    Run the loop on a task (exit 0 solved, 1 not solved, 2 usage).\n"
        "  tasks  List the sample tasks.\n",
        False,
    ),
    "bench": (
        ('-h', '--help'),
        "Usage: reference-loop bench [OPTIONS] [COMMAND] [ARGS]...\n"
        "\n"
        "  Compare history arms (none, last, accumulate, ...) over the same task x seed\n"
        "  pairs.\n"
        "\n"
        "  Prints per arm: solved rate, attempts to solve, repeat-patch rate,\n"
        "  injections, prompt size at the last attempt, edit rate, protected-path\n"
        "  violations, replies cut at max tokens and seconds per model call; then the\n"
        "  validity gates and a paired comparison of every arm against `last`. Ctrl-C\n"
        "  or SIGTERM stops within seconds and writes what finished, marked partial.\n"
        "  Exit 0 when every arm is valid, 1 when one is VOID, 2 on a usage error,\n"
        "  130/143 when stopped. Each arm also counts integrity violations (integ):\n"
        "  attempts that gamed the check.\n"
        "\n"
        "Options:\n"
        "  --attempter SPEC                scripted:NAME, cmd:COMMAND, llm:MODEL, or an\n"
        "                                  agent CLI: claude, codex, gemini\n"
        "                                  (claude:MODEL names the model).  [default:\n"
        "                                  scripted:rederive]\n"
        "  --escalate-to SPEC              A second (stronger) attempter; adds the\n"
        "                                  accumulate+escalate arm.\n"
        "  --arms A,B,...                  Arms to run (default: all that apply).\n"
        "                                  Known: none, last, accumulate, accumulate-\n"
        "                                  nopatch, accumulate+replan,\n"
        "                                  accumulate+escalate.\n"
        "  --tasks DIRECTORY               A folder of task folders (or one task\n"
        "                                  folder).\n"
        "  --task NAME|DIR                 A sample task name or task folder;\n"
        "                                  repeatable. Default: all sample tasks.\n"
        "  --seeds INTEGER RANGE           Seeds 0..N-1 per task; every arm runs on the\n"
        "                                  same task x seed pairs.  [default: 5; x>=1]\n"
        "  --max-attempts INTEGER RANGE    [default: 5; x>=1]\n"
        "  --jobs INTEGER RANGE            Runs in parallel (default: 1 for llm:\n"
        "                                  models, 2 otherwise).  [x>=1]\n"
        "  --attempt-timeout SECONDS       Seconds one attempt of a cmd: agent or llm:\n"
        "                                  model may take (default 600); then the\n"
        "                                  agent's process group or the model worker is\n"
        "                                  killed and the attempt fails.\n"
        "  -o, --option KEY VALUE          A model option passed to llm (as `llm -o`),\n"
        "                                  e.g. -o n_ctx 8192 -o max_tokens 512.\n"
        "  --context-tokens INTEGER RANGE  The model's context window, when the model\n"
        "                                  does not report it.  [x>=1]\n"
        "  --edit-format [auto|whole|search-replace|diff]\n"
        "                                  The reply format an llm: model is taught\n"
        "                                  (auto picks by task size).  [default: auto]\n"
        "  --model NAME                    The model an agent preset (claude, codex,\n"
        "                                  gemini) runs, passed with the CLI's own\n"
        "                                  model flag.\n"
        "  --agent-arg ARG                 One more argument for an agent preset's CLI\n"
        "                                  (repeatable, kept in order).\n"
        "  --prompts-dir DIRECTORY         Save what each model attempt sent and got:\n"
        "                                  DIR/ARM/TASK/seed-N/attempt-K.prompt.txt and\n"
        "                                  attempt-K.reply.txt.\n"
        "  --ignore GLOB                   Extra workspace ignore pattern (repeatable),\n"
        "                                  e.g. an agent's history files.\n"
        "  --out FILE                      Write the full results (every run) as JSON.\n"
        "  --plot FILE                     Write a PNG of solved and repeat-patch rate\n"
        "                                  per attempt (needs matplotlib: pip install\n"
        "                                  'chimera-cards[plot]').\n"
        "  --shard K/N                     Run only slice K of N of the task x seed x\n"
        "                                  arm grid (deterministic); combine the\n"
        "                                  slices' --out files with `reference-loop\n"
        "                                  bench merge`.\n"
        "  --json                          Print the results as JSON, not a table.\n"
        "  -h, --help                      Show this message and exit.\n"
        "\n"
        "Commands:\n"
        "  merge  Combine the --out files of `bench --shard K/N` runs into one...\n",
        False,
    ),
    "check": (
        ('-h', '--help'),
        "Usage: reference-loop check [OPTIONS]\n"
        "\n"
        "  The card's Check: attempt 3's prompt must show attempt 1's patch (exit 0\n"
        "  pass, 1 fail).\n"
        "\n"
        "Options:\n"
        "  --task NAME|DIR                 Task that fails three times (default: the\n"
        "                                  sample task flagged so).\n"
        "  --attempter TEXT                [default: scripted:rederive]\n"
        "  --seed INTEGER                  [default: 0]\n"
        "  --history [accumulate|last|none|accumulate-nopatch]\n"
        "                                  Check another history mode (last and none\n"
        "                                  must fail).  [default: accumulate]\n"
        "  --prompts-dir DIRECTORY         Keep the prompts the check looked at.\n"
        "  --json                          Print the check result as JSON.\n"
        "  -h, --help                      Show this message and exit.\n",
        False,
    ),
    "run": (
        ('-h', '--help'),
        "Usage: reference-loop run [OPTIONS]\n"
        "\n"
        "  Run the loop on a task (exit 0 solved, 1 not solved, 2 usage).\n"
        "\n"
        "Options:\n"
        "  --task NAME|DIR                 A sample task name or a task folder (worked\n"
        "                                  on in a temporary copy).\n"
        "  --workspace DIRECTORY           Work in place on this folder (needs --verify\n"
        "                                  and --task-text).\n"
        "  --verify TEXT                   Verify command for --workspace ({python} =\n"
        "                                  this interpreter).\n"
        "  --task-text TEXT                Task text for --workspace.\n"
        "  --timeout SECONDS               Verify timeout in seconds for --workspace.\n"
        "                                  [default: 60.0]\n"
        "  --attempter TEXT                scripted:NAME, cmd:COMMAND, llm:MODEL, or an\n"
        "                                  agent CLI: claude, codex, gemini\n"
        "                                  (claude:MODEL names the model).  [default:\n"
        "                                  scripted:rederive]\n"
        "  --history [accumulate|last|none|accumulate-nopatch]\n"
        "                                  [default: accumulate]\n"
        "  --max-attempts INTEGER RANGE    [default: 5; x>=1]\n"
        "  --on-repeat [none|replan|escalate]\n"
        "                                  What to change when a failure signature\n"
        "                                  repeats.  [default: none]\n"
        "  --escalate-to TEXT              Attempter spec used by --on-repeat escalate.\n"
        "  --prompts-dir DIRECTORY         Write the exact prompt of attempt N to\n"
        "                                  DIR/attempt-N.txt.\n"
        "  --cards QUERY                   Put the approved skill cards matching QUERY\n"
        "                                  in the prompt (through chimera-cards'\n"
        "                                  retrieval gate).\n"
        "  --store FILE                    Card store for --cards (default: chimera-\n"
        "                                  cards' store).\n"
        "  -k INTEGER RANGE                At most this many cards with --cards.\n"
        "                                  [default: 5; 1<=x<=100]\n"
        "  --model NAME                    The model an agent preset (claude, codex,\n"
        "                                  gemini) runs, passed with the CLI's own\n"
        "                                  model flag.\n"
        "  --agent-arg ARG                 One more argument for an agent preset's CLI\n"
        "                                  (repeatable, kept in order).\n"
        "  --protect GLOB                  Also protect paths matching GLOB\n"
        "                                  (repeatable; the tests and the files the\n"
        "                                  verify command names are protected already).\n"
        "                                  An attempt that changes one is reverted and\n"
        "                                  fails.\n"
        "  --sandbox                       Run the verifier and a cmd: attempter under\n"
        "                                  bubblewrap: private PID namespace, the\n"
        "                                  workspace the only writable path, no\n"
        "                                  network.\n"
        "  --must-pass TEST_ID             A test that must pass (repeatable; with the\n"
        "                                  task's must_pass). Default: every test\n"
        "                                  collected on the untouched tree.\n"
        "  --json                          Print the run as JSON.\n"
        "  -h, --help                      Show this message and exit.\n"
        "\n"
        "Advanced options:\n"
        "  --candidates DIRECTORY          Folder of candidate-fix overlays for\n"
        "                                  scripted attempters with --workspace.\n"
        "  --seed INTEGER                  [default: 0]\n"
        "  --budget INTEGER RANGE          Character budget for the rendered history.\n"
        "                                  [default: 12000; x>=1]\n"
        "  --planner TEXT                  Planner used by --on-repeat replan (and\n"
        "                                  escalate, once escalated).  [default:\n"
        "                                  scripted]\n"
        "  --events FILE                   Write every event as a JSON line to FILE.\n"
        "  --cards-in [every|first]        Cards in every prompt (each attempt is a\n"
        "                                  fresh call) or only the first.  [default:\n"
        "                                  every]\n"
        "  -o, --option KEY VALUE          A model option passed to llm (as `llm -o`),\n"
        "                                  e.g. -o n_ctx 8192 -o max_tokens 512.\n"
        "  --context-tokens INTEGER RANGE  The model's context window, when the model\n"
        "                                  does not report it.  [x>=1]\n"
        "  --edit-format [auto|whole|search-replace|diff]\n"
        "                                  The reply format an llm: model is taught\n"
        "                                  (auto picks by task size).  [default: auto]\n"
        "  --sandbox-net                   With --sandbox, keep the network.\n"
        "  --verify-format [auto|pytest|exit-status]\n"
        "                                  How the verdict is read: auto (a pytest\n"
        "                                  command is judged by its test report),\n"
        "                                  pytest, or exit-status (the exit status\n"
        "                                  alone, labelled so).  [default: auto]\n"
        "  --result-file [junit]           The verify command writes JUnit XML to\n"
        "                                  {result_file} (node --test, jest, cargo\n"
        "                                  nextest, gotestsum): judge by it.\n"
        "  --workspace-engine [git|fast]   How the workspace stores and compares files:\n"
        "                                  git (git's own add, diff-files, cat-file) or\n"
        "                                  fast (a hand-written index and pack path in\n"
        "                                  front of it). Default:\n"
        "                                  $REFERENCE_LOOP_WORKSPACE, else fast.\n",
        False,
    ),
    "tasks": (
        ('-h', '--help'),
        "Usage: reference-loop tasks [OPTIONS]\n"
        "\n"
        "  List the sample tasks.\n"
        "\n"
        "Options:\n"
        "  --json      Print the tasks as JSON.\n"
        "  -h, --help  Show this message and exit.\n",
        False,
    ),
    "bench merge": (
        ('-h', '--help'),
        "Usage: reference-loop bench merge [OPTIONS] FILES...\n"
        "\n"
        "  Combine the --out files of `bench --shard K/N` runs into one result: the\n"
        "  same table, plot and paired statistics as one run. Files made with different\n"
        "  settings or code are refused (exit 2); missing slices make the result\n"
        "  partial (exit 1).\n"
        "\n"
        "Options:\n"
        "  --out FILE   Write the merged results as JSON.\n"
        "  --plot FILE  Write the PNG of the merged results (needs matplotlib).\n"
        "  --json       Print the results as JSON, not a table.\n"
        "  -h, --help   Show this message and exit.\n",
        False,
    ),
}

# command path -> (body, bound arguments, ((click-only parameter, default), ...),
# ((name, opts, kind, flag, multiple, nargs, required, default), ...)).
COMMANDS: dict[str, tuple] = {
}
