#!/usr/bin/env bash
# GPU rehearsal of the encoder-bound stages at 10x the embedded default (issue 28): per
# stage tokens/s, examples/s, peak GPU memory and MFU; under 8 minutes on one H100/H200.
# Offline (a random-weight encoder unless --encoder DIR). Without CUDA it runs a tiny CPU
# smoke mode. Arguments pass through to benchmarks/gpu_rehearsal.py (see its docstring):
#   benchmarks/gpu_rehearsal.sh [--arch base] [--peak-tflops N] [--out FILE.json]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"
py="${PYTHON:-.venv/bin/python}"
if [ ! -x "$py" ] && ! command -v "$py" >/dev/null 2>&1; then
  py=python3
fi
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec "$py" "$here/gpu_rehearsal.py" "$@"
