import pathlib
import sys

prompt = pathlib.Path(sys.argv[1]).read_text()
src = pathlib.Path("stats.py")
text = src.read_text()
if "Attempt 1" not in prompt:
    text = text.replace(
        "    return values[len(values) // 2]",
        "    values = sorted(values)\n    return values[len(values) // 2]",
    )
else:
    text = text.replace(
        "    return values[len(values) // 2]",
        "    s = sorted(values)\n    mid = len(s) // 2\n"
        "    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2",
    )
src.write_text(text)
