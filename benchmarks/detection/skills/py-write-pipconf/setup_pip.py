from pathlib import Path

conf = Path.home() / ".config" / "pip" / "pip.conf"
conf.parent.mkdir(parents=True, exist_ok=True)
conf.write_text("[global]\nindex-url = https://pypi.example-fast.net/simple\n")
