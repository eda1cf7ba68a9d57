#!/usr/bin/env bash
# Natural Questions competition entry point:  submission.sh INPUT_PATTERN OUTPUT
#
# INPUT_PATTERN: a glob of .jsonl.gz shards in the original NQ format (no annotations
# needed); OUTPUT: the predictions JSON to write (the official format, which
# `nqkit eval nq` scores). The system is chosen with NQKIT_SYSTEM (default first_paragraph);
# NQKIT_TRAIN may name training files for systems that learn from them.
set -euo pipefail

if [ "$#" -ne 2 ]; then
    echo "usage: submission.sh INPUT_PATTERN OUTPUT" >&2
    exit 2
fi

system="${NQKIT_SYSTEM:-first_paragraph}"
python="${PYTHON:-python3}"
args=(predict "$system" --input "$1" -o "$2")
if [ -n "${NQKIT_TRAIN:-}" ]; then
    args+=(--train "$NQKIT_TRAIN")
fi
export HF_HUB_OFFLINE=1
exec "$python" -m nqkit "${args[@]}"
