from pathlib import Path


def keys(path):
    lines = Path(path).read_text().splitlines()
    return {l.split("=", 1)[0].strip() for l in lines if "=" in l and not l.startswith("#")}


missing = keys(".env.example") - keys(".env")
print("missing:", ", ".join(sorted(missing)) or "none")
