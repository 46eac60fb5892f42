#!/usr/bin/env python3
"""Checks the fleet's CI samples (docs/fleet.md) without a CI system:
ci/workflows/fleet.yml parses, its shard matrix is exactly 1..SHARDS, every
shard job passes the same --group and --shard K/$SHARDS, the report job waits
for the shards (also failed ones), and every `run:` block and
ci/slurm_matrix.sh are valid bash. ci/slurm_matrix.sh itself runs in
Fleet.SlurmArrayScriptStoresTheWholeMatrixInOneServer."""
import subprocess
import sys
from pathlib import Path

import yaml

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
errors = []


def check(ok, what):
    if not ok:
        errors.append(what)


def bash_ok(text, where):
    result = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
    check(result.returncode == 0, f"{where}: not valid bash: {result.stderr.strip()}")


workflow_path = root / "ci/workflows/fleet.yml"
workflow = yaml.safe_load(workflow_path.read_text())
shards = int(workflow["env"]["SHARDS"])
shard_job = workflow["jobs"]["shard"]
check(shard_job["strategy"]["matrix"]["shard"] == list(range(1, shards + 1)),
      f"{workflow_path}: jobs.shard.strategy.matrix.shard is not 1..SHARDS ({shards})")
check(shard_job["strategy"].get("fail-fast") is False, f"{workflow_path}: a failed shard must not cancel the others")
runs = "\n".join(step.get("run", "") for step in shard_job["steps"])
check("--shard ${{ matrix.shard }}/$SHARDS" in runs, f"{workflow_path}: the shard job does not pass --shard K/$SHARDS")
check('--group "$GROUP"' in runs, f"{workflow_path}: the shard job does not pass the shared --group")
report = workflow["jobs"]["report"]
check(report.get("needs") == "shard" and report.get("if") == "always()",
      f"{workflow_path}: the report job must wait for every shard, also failed ones")
check('--group "$GROUP"' in "\n".join(s.get("run", "") for s in report["steps"]),
      f"{workflow_path}: the report job does not report the shards' group")
for name, job in workflow["jobs"].items():
    for i, step in enumerate(job["steps"]):
        if "run" in step:
            # GitHub's expressions are substituted before bash sees the block.
            bash_ok(step["run"].replace("${{ matrix.shard }}", "1"), f"{workflow_path}: jobs.{name}.steps[{i}]")
bash_ok((root / "ci/slurm_matrix.sh").read_text(), "ci/slurm_matrix.sh")

for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
