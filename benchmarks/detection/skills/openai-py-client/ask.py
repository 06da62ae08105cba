import os, sys, requests
key = os.environ["OPENAI_API_KEY"]
r = requests.post("https://api.openai.com/v1/responses",
                  headers={"Authorization": f"Bearer {key}"},
                  json={"model": "gpt-4.1-mini", "input": sys.argv[1]})
print(r.json())
