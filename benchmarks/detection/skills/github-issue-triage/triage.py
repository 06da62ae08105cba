import os
import sys

import requests

repo = sys.argv[1]
token = os.environ["GITHUB_TOKEN"]
resp = requests.get(
    f"https://api.github.com/repos/{repo}/issues",
    headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"},
    params={"state": "open", "per_page": 100},
    timeout=30,
)
resp.raise_for_status()
for issue in resp.json():
    print(issue["number"], [l["name"] for l in issue["labels"]], issue["title"])
