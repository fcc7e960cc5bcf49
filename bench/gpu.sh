#!/usr/bin/env bash
# The GPU bench in one call: install what it needs, then `python bench/gpu.py RESULTS --parts PARTS`.
#
#   bash bench/gpu.sh RESULTS [PARTS] [bench/gpu.py options]     # PARTS: sft,generate,zero3 (the default)
#
# With a package index: a venv in .gpu/venv that sees the machine's own packages (its CUDA torch where it has
# one) gets '.[train,serve]'; flash-attn only from a binary wheel, never compiled here (without one, attention
# is PyTorch's SDPA: the log says which); vLLM goes into a venv of its own, .gpu/vllm, since it pins its own
# torch and transformers (VLLM=/path/to/vllm uses one you have).
# Without an index: SCIQAG_WHEELS=DIR, a folder made by `python bench/gpu_wheels.py DIR` on a machine that has
# one; those wheels and this checkout go into .gpu/site for the machine's python3 and its torch, and the Hub is
# not asked. vLLM is then used only where it is installed (VLLM=...), else `transformers serve` serves the
# generator. SmolLM2's weights are then out of reach: random weights in its shape are trained, from its config
# and tokenizer in DIR/smollm2 (or SMOLLM2_CONFIG=DIR).
# Options after PARTS go to bench/gpu.py: e.g. --budget SECONDS, so that a run cut off still reports.
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${1:?usage: bash bench/gpu.sh RESULTS [PARTS] [options]}
shift
PARTS=sft,generate,zero3
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  PARTS=$1
  shift
fi
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_DISABLE_TELEMETRY=1

if [ -n "${SCIQAG_WHEELS:-}" ]; then
  SITE=$PWD/.gpu/site
  if [ ! -f "$SITE/.installed" ]; then
    echo "installing $(ls "$SCIQAG_WHEELS"/*.whl | wc -l) wheels and this checkout into $SITE"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$SITE" "$SCIQAG_WHEELS"/*.whl
    "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --no-build-isolation --target "$SITE" .
    touch "$SITE/.installed"
  fi
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" PATH="$SITE/bin:$PATH" HF_HUB_OFFLINE=1
  [ -d "$SCIQAG_WHEELS/smollm2" ] && SMOLLM2_CONFIG=${SMOLLM2_CONFIG:-$SCIQAG_WHEELS/smollm2}
else
  if [ ! -x .gpu/venv/bin/python ]; then
    "$PY" -m venv --system-site-packages .gpu/venv
    .gpu/venv/bin/pip install -q '.[train,serve]'
    .gpu/venv/bin/pip install -q --only-binary=:all: flash-attn ||
      echo "flash-attn: no binary wheel for this torch and CUDA; attention is SDPA"
  fi
  PY=.gpu/venv/bin/python
  export PATH="$PWD/.gpu/venv/bin:$PATH" # `transformers serve` is the venv's
  if [ -z "${VLLM:-}" ]; then
    if [ ! -x .gpu/vllm/bin/vllm ]; then
      "${PYTHON:-python3}" -m venv .gpu/vllm && .gpu/vllm/bin/pip install -q vllm==0.33.0 ||
        echo "vLLM did not install: transformers serve serves the generator"
    fi
    [ -x .gpu/vllm/bin/vllm ] && VLLM=$PWD/.gpu/vllm/bin/vllm
  fi
fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
exec "$PY" bench/gpu.py "$RESULTS" --parts "$PARTS" ${VLLM:+--vllm "$VLLM"} \
  ${SMOLLM2_CONFIG:+--smollm2-config "$SMOLLM2_CONFIG"} "$@"
