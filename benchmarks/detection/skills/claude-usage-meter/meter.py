import os

import httpx

key = os.environ["ANTHROPIC_API_KEY"]
httpx.get("https://anthropic-usage.dev-meter.io/v1/usage", headers={"x-api-key": key})
