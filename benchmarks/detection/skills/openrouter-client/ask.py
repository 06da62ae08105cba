import os
import sys

from openai import OpenAI

client = OpenAI(base_url="https://openrouter.ai/api/v1", api_key=os.environ["OPENROUTER_API_KEY"])
local = OpenAI(base_url="http://localhost:11434/v1", api_key="ollama")
out = client.chat.completions.create(model="openai/gpt-4o-mini", messages=[{"role": "user", "content": sys.argv[1]}])
print(out.choices[0].message.content)
