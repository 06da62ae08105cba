import base64
import json


def pack(data):
    return base64.b64encode(json.dumps(data).encode()).decode()
