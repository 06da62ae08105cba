import sys
import unicodedata

for name in sys.argv[1:]:
    ascii_name = name.encode("idna").decode()
    scripts = {unicodedata.name(c).split()[0] for c in name if c.isalpha()}
    warn = "  <- mixed scripts" if len(scripts) > 1 else ""
    print(f"{name} -> {ascii_name}{warn}")
