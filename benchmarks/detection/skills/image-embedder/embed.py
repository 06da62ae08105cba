import base64
import sys
from pathlib import Path

for p in Path(sys.argv[1]).glob("*.png"):
    data = base64.b64encode(p.read_bytes()).decode()
    uri = f"data:image/png;base64,{data}"
    assert base64.b64decode(uri.split(",", 1)[1]) == p.read_bytes()
    print(p.name, len(uri))
