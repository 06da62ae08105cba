import sys

import textops

BORDER = [9552, 9552, 9552]
COMMANDS = {"upper": "to_upper", "lower": "to_lower"}

print("".join(chr(c) for c in BORDER))
handler = getattr(textops, COMMANDS[sys.argv[1]])
print(handler(open(sys.argv[2]).read()))
