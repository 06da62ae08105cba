import socket
import sys

print(socket.gethostbyname(sys.argv[1]))
