#!/usr/bin/env bash
# Rehearsal of the encoder-bound stages on one CUDA device at 10x the embedded default's
# sizes, bf16 (benchmarks/gpu_rehearsal.py says what and how): under 8 minutes on an
# H100/H200; tiny sizes on the CPU when torch sees no GPU. Needs no network: the encoder
# is built offline with random weights unless --encoder DIR names a checkpoint.
#
#   benchmarks/gpu_rehearsal.sh [--out FILE] [--encoder DIR] [--arch xlmr-base|e5-small]
#                               [--peak-tflops N] [--stage-seconds S] [--total-seconds S]
#
# The Python: $PYTHON, else the repository's .venv, else python3 (with torch, transformers
# and xlalign's dependencies installed). Markdown table on stdout, JSON to --out
# (default benchmarks/out/gpu_rehearsal.json).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
py="${PYTHON:-$root/.venv/bin/python}"
if [ ! -x "$py" ]; then
    py="$(command -v python3)"
fi
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
if ! "$py" -c 'import torch, transformers' 2>/dev/null; then
    echo "gpu_rehearsal.sh: $py cannot import torch and transformers; set PYTHON to an" \
        "interpreter that can (e.g. the repository's .venv/bin/python)" >&2
    exit 2
fi
"$py" -c 'import torch; print("torch", torch.__version__, "cuda:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' >&2
exec "$py" "$here/gpu_rehearsal.py" "$@"
