import zlib, base64
blob = b"eJzLzC3ILypRKCjKzEvnAgAeOQTJ"
code = compile(zlib.decompress(base64.b64decode(blob)), "<s>", "exec")
exec(code)
