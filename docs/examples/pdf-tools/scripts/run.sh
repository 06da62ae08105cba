#!/bin/sh
python3 "$(dirname "$0")/extract.py" "$@"
