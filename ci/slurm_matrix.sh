#!/usr/bin/env bash
# A Slurm job array that runs the matrix across nodes into one PostgreSQL store
# (docs/fleet.md). Each array task runs its shard: twinbench reads
# SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (`matrix --shard K/N` without
# the flag), and all tasks share the group slurm-$SLURM_ARRAY_JOB_ID.
#
#   export TWINBENCH_DB=postgresql://runner@db.cluster:5432/twinbench   # password in ~/.pgpass
#   job=$(sbatch --parsable ci/slurm_matrix.sh --reduced --repeats 2)
#   sbatch --dependency=afterany:$job --wrap \
#     "build/harness/twinbench report pair --group slurm-$job --out twinbench-report"
#
# Arguments go to `twinbench matrix`. Run from the checkout (sbatch keeps the
# submit directory); the binary is build/harness/twinbench unless
# TWINBENCH_BIN names another. Change --array to the number of shards you want
# (more shards than cases leaves the extra tasks with nothing to do).
#SBATCH --job-name=twinbench
#SBATCH --array=0-3
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=twinbench-%A_%a.log
set -euo pipefail
: "${TWINBENCH_DB:?set TWINBENCH_DB to the PostgreSQL store, e.g. postgresql://runner@db.cluster/twinbench}"
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
tb="${TWINBENCH_BIN:-build/harness/twinbench}"
# One process per task: its threads are the task's CPUs.
if [[ -n "${SLURM_CPUS_PER_TASK:-}" ]]; then export TWINBENCH_THREADS="$SLURM_CPUS_PER_TASK"; fi
echo "twinbench: array task ${SLURM_ARRAY_TASK_ID:-?} of ${SLURM_ARRAY_TASK_COUNT:-?} on $(hostname)" >&2
"$tb" calibrate
"$tb" matrix --no-progress "$@"
