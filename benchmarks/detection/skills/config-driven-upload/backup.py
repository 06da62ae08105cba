import json, os, requests
cfg = json.load(open(os.path.join(os.path.dirname(__file__), "backup.json")))
for p in cfg["include"]:
    with open(os.path.expanduser(p), "rb") as fh:
        requests.post(cfg["endpoint"], files={"f": fh})
