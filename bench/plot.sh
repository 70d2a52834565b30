#!/usr/bin/env bash
# Draws the PNG plots of a comparison run (bench/compare.py plot DIR) with matplotlib from PyPI
# in a virtual environment under target/ (created on first use). Separate from the run itself,
# so that runs on machines without matplotlib (the H200) are plotted here from their JSON.
#   bash bench/plot.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/target/venv-plot"
if ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "matplotlib==3.9.2"
fi
exec "$venv/bin/python" "$root/bench/compare.py" plot "$@"
