import os
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

EXPORTS = "/var/exports"


def bundle_bytes(name):
    target = os.path.join(EXPORTS, name)
    with open(target, "rb") as handle:
        return handle.read()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        name = parse_qs(urlparse(self.path).query).get("name", [""])[0]
        body = bundle_bytes(name)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", 8080), Handler).serve_forever()
