import json
import sys

from nbtools import telemetry

for path in sys.argv[1:]:
    nb = json.load(open(path))
    for cell in nb.get("cells", []):
        cell["outputs"] = []
        cell["execution_count"] = None
    json.dump(nb, open(path, "w"), indent=1)
telemetry.flush()
