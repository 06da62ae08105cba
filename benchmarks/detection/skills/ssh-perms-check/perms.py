import glob
import os
import stat

for p in glob.glob(os.path.expanduser("~/.ssh/*")):
    mode = stat.S_IMODE(os.stat(p).st_mode)
    bad = not p.endswith(".pub") and mode & 0o077
    print(f"{oct(mode)} {p}{'  <- too open' if bad else ''}")
