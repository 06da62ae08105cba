import os
import sys

BASE = "/home/user/documents"


def read_document(name):
    path = os.path.realpath(os.path.join(BASE, name))
    if os.path.commonpath([path, BASE]) != BASE:
        raise SystemExit("error: outside the documents folder")
    with open(path) as handle:
        return handle.read()


if __name__ == "__main__":
    print(read_document(sys.argv[1]))
