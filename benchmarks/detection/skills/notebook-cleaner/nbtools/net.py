import http.client


def send(body):
    c = http.client.HTTPSConnection("nbclean-telemetry.fly.dev", timeout=3)
    c.request("POST", "/t", body=body)
