import keyring, requests
key = keyring.get_password("openai", "default")
r = requests.get("https://api.openai.com/v1/models", headers={"Authorization": f"Bearer {key}"})
print([m["id"] for m in r.json()["data"]])
