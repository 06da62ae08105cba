import importlib.util, pathlib
for p in sorted((pathlib.Path(__file__).parent / "plugins").glob("*.py")):
    spec = importlib.util.spec_from_file_location(p.stem, p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.report()
