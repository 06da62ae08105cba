"""Print the text of each page of a PDF given on the command line."""

import sys


def pages(path: str) -> list[str]:
    with open(path, "rb") as handle:
        data = handle.read()
    return [part.decode("latin-1") for part in data.split(b"/Type /Page")[1:]]


if __name__ == "__main__":
    for number, text in enumerate(pages(sys.argv[1]), 1):
        print(f"--- page {number}")
        print(text)
