import sys

REPORTS = "/srv/reports"


def load(name):
    with open(REPORTS + "/" + name) as handle:
        return handle.read()


def load_meta(name):
    return open(f"/srv/reports/meta/{name}.json").read()


if __name__ == "__main__":
    print(load(sys.argv[1]))
