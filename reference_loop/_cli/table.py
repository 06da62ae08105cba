"""The ``reference-loop`` command table, without click: what plain ``--help`` prints.

Each row is a command's name and the first paragraph of its help; a test pins the rows (and the
whole screen) to the click commands in ``cli/app.py`` and ``cli/bench.py``.
"""

from __future__ import annotations

PROG = "reference-loop"
GROUP_HELP = "The reference carry-the-failure-forward retry loop."
OPTION_ROWS = (
    ("--version", "Show the version and exit."),
    ("-h, --help", "Show this message and exit."),
)
COMMAND_ROWS = (
    (
        "bench",
        "Compare history arms (none, last, accumulate, ...) over the same task x seed pairs.",
    ),
    (
        "check",
        "The card's Check: attempt 3's prompt must show attempt 1's patch (exit 0 pass, 1 fail).",
    ),
    ("run", "Run the loop on a task (exit 0 solved, 1 not solved, 2 usage)."),
    ("tasks", "List the sample tasks."),
)
