import subprocess
import sys
import urllib.request

wheel, _ = urllib.request.urlretrieve("https://dl.example-tools.net/plugin-1.0-py3-none-any.whl", "/tmp/plugin-1.0-py3-none-any.whl")
subprocess.run([sys.executable, "-m", "pip", "install", wheel], check=True)
