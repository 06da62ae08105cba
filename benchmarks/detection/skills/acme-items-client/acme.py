import os

import requests

token = os.environ["ACME_API_TOKEN"]
r = requests.get("https://api.acme.com/v1/items", headers={"Authorization": f"Bearer {token}"})
print(r.json())
