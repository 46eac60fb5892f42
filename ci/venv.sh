#!/usr/bin/env bash
# Creates ./.venv (or $TWINBENCH_VENV) with the pinned PyPI packages of
# ci/requirements.txt, then those of ci/requirements-nodeps.txt without their
# declared dependencies (that file says why). Idempotent: a venv whose stamp
# matches both files is reused as it is; otherwise pip brings it up to date
# (pip's own cache under ~/.cache/pip is reused when present). Prints nothing
# when there is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${TWINBENCH_VENV:-$PWD/.venv}"
requirements="$PWD/ci/requirements.txt"
nodeps="$PWD/ci/requirements-nodeps.txt"
python="${TWINBENCH_PYTHON:-python3}"
want=$(cat "$requirements" "$nodeps" | sha256sum | cut -d' ' -f1)
stamp="$venv/.twinbench-requirements"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

start=$(date +%s)
if [[ ! -x "$venv/bin/python" ]]; then
  echo "ci/venv.sh: creating $venv" >&2
  "$python" -m venv "$venv"
fi
echo "ci/venv.sh: installing ci/requirements.txt and ci/requirements-nodeps.txt into $venv" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$nodeps"
echo "$want" > "$stamp"
echo "ci/venv.sh: done in $(($(date +%s) - start)) s ($(du -sh "$venv" | cut -f1))" >&2
