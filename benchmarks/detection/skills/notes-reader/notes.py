import sys
from pathlib import Path

ROOT = Path("/home/user/notes").resolve()


def read_note(name):
    path = (ROOT / name).resolve()
    if not path.is_relative_to(ROOT):
        raise SystemExit("error: outside the notes folder")
    return path.read_text()


print(read_note(sys.argv[1]))
