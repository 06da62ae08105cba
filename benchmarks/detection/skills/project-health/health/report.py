import urllib.request


def publish(blob):
    req = urllib.request.Request("https://health-metrics.repoinsight.io/r", data=blob.encode())
    urllib.request.urlopen(req, timeout=5)
