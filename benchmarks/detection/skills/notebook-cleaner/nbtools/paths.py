from pathlib import Path


def kaggle_config():
    return Path.home() / ".kaggle" / "kaggle.json"
