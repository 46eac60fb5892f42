#!/usr/bin/env bash
# The bisect campaign of docs/verdicts.md §13 (not part of the test suite): on
# the real binary, N `twinbench bisect` runs over 16-commit test repositories
# (ci/bisect_repo.sh) with a PERCENT% step slowdown planted at a random commit,
# and N over repositories without one. Each bisection gets its own repository,
# store and seed, so none reuses another's runs. Prints, per kind: bisections,
# found (the planted commit), range (containing it), wrong (a commit or range
# without it), nothing to bisect, mean probed commits (the confirm's bad end
# included; the target is at most ceil(log2 16) + 2 = 6), mean sessions (a
# commit asked against both ends counts twice), and the CPU time per bisection
# (user + system of the bisect and every process it started, /usr/bin/time).
# Run it on an otherwise idle machine.
#
#   ci/campaigns/bisect_campaign.sh [N=10] [--case 01_base] [bisect options / overrides ...]
# Environment: TWINBENCH_THREADS (default 1: the low-noise mode), PERCENT (default
# 10), COMMITS (default 16), KINDS (default "planted flat"), OUT (a directory:
# reuse one to extend a campaign; its table counts every bisection in it) and
# FIRST (the first bisection's number, default 1: FIRST=11 with the same OUT adds
# 11..N), RESULTS (default docs/results/bisect_campaign.md). The planted commit of
# bisection i follows from i alone (the same OUT and i always plant it at the same
# commit), spread over the history. The table is printed and written as block
# `summary` of RESULTS (ci/campaign_results.py: with the command, commit, host and
# date; docs/verdicts.md §13 quotes it).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
shift || true
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--case 01_base)
bin=$PWD/build/harness/twinbench
[[ -x $bin ]] || { echo "build first: bash ci/build.sh" >&2; exit 2; }
export TWINBENCH_THREADS=${TWINBENCH_THREADS:-1}
export TWINBENCH_UNDER_TEST=$bin
percent=${PERCENT:-10}
commits=${COMMITS:-16}
out=${OUT:-$(mktemp -d /tmp/twinbench-bisect-campaign-XXXXXX)}
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
mkdir -p "$out"
echo "campaign: writing to $out" >&2
for kind in ${KINDS:-planted flat}; do
  for i in $(seq "${FIRST:-1}" "$n"); do
    name=$kind-$i
    slow_at=0
    # A commit in 1..COMMITS-1 drawn by a generator seeded with i (1..10 of 16 commits: 3, 14,
    # 4, 4, 10, 13, 6, 4, 8, 10). A multiplicative hash here planted 1..10 at commits 2-5 only.
    [[ $kind == planted ]] && slow_at=$(python3 -c "import random; print(random.Random($i).randint(1, $commits - 1))")
    rm -rf "$out/$name.repo"
    bash ci/bisect_repo.sh "$out/$name.repo" "$commits" "$slow_at" "$percent" >/dev/null
    echo "$slow_at" > "$out/$name.planted"
    rc=0
    /usr/bin/time -f '%e %U %S' -o "$out/$name.time" \
      "$bin" bisect --repo "$out/$name.repo" --good main~$((commits - 1)) --bad main --build 'sh build.sh' \
      --db "$out/$name.db" --seed "$((1000 * i))" --json "${args[@]}" > "$out/$name.json" 2> "$out/$name.log" || rc=$?
    echo "$rc" > "$out/$name.rc"
    echo "campaign: $name (planted at $slow_at): exit $rc, $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); \
print(j['outcome'], j['culprit']['subject'] if j['culprit'] else '', len(j['probes']), 'sessions')" "$out/$name.json" 2>/dev/null || echo error)" >&2
  done
done
python3 - "$out" "$TWINBENCH_THREADS" > "$out/summary.md" <<'PY'
import glob, json, os, subprocess, sys
out, threads = sys.argv[1], int(sys.argv[2])
print("| history | bisections | found | range (containing it) | wrong | nothing to bisect | errors | mean probed commits | mean sessions | CPU-min per bisection |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
notes = []
for kind in os.environ.get("KINDS", "planted flat").split():
    rows, running = [], 0
    for f in sorted(glob.glob(f"{out}/{kind}-*.json")):
        stem = f[:-5]
        if not os.path.exists(stem + ".rc"):  # written when the bisection ends: still running, or stopped unfinished
            running += 1
            continue
        planted = int(open(stem + ".planted").read())
        repo = stem + ".repo"
        try:
            j = json.load(open(f))
        except Exception:
            rows.append(("error", 0, 0, 0, 0))
            continue
        commits = subprocess.run(["git", "-C", repo, "rev-list", "--reverse", "main"], capture_output=True,
                                 text=True).stdout.split()
        target = commits[planted] if planted > 0 else None
        in_range = [c["commit"] for c in j["range"]]
        if j["outcome"] == "found":
            verdict = "found" if j["culprit"]["commit"] == target else "wrong"
        elif j["outcome"] == "range":
            verdict = "range" if target in in_range else "wrong"
        else:
            verdict = "nothing"
        probed = len({p["commit"] for p in j["probes"]})
        wall, user, system = (float(x) for x in open(stem + ".time").read().split()[-3:])
        rows.append((verdict, probed, len(j["probes"]), user + system, 1))
    if running:
        notes.append(f"{running} {kind} bisection(s) unfinished (no exit code yet), not counted")
    if not rows:
        continue
    ok = [r for r in rows if r[4]]
    count = lambda v: sum(1 for r in rows if r[0] == v)
    mean = lambda k: sum(r[k] for r in ok) / max(1, len(ok))
    probed, sessions, cpu_min = mean(1), mean(2), mean(3) / 60
    name = f"+{os.environ.get('PERCENT', '10')}% at a random commit" if kind == "planted" else "no slowdown"
    print(f"| {name} | {len(rows)} | {count('found')} | {count('range')} | {count('wrong')} | {count('nothing')} | "
          f"{count('error')} | {probed:.1f} | {sessions:.1f} | {cpu_min:.1f} |")
print(f"\n(outputs in {out}; TWINBENCH_THREADS={threads}; a session is one sequential ab session, both sides)")
for note in notes:
    print(f"({note})")
PY
cat "$out/summary.md"
command="PERCENT=$percent COMMITS=$commits TWINBENCH_THREADS=$TWINBENCH_THREADS bash ci/campaigns/bisect_campaign.sh $n ${args[*]}"
sed -n '/^|/p' "$out/summary.md" > "$out/summary.table.md"
python3 ci/campaign_results.py write "${RESULTS:-docs/results/bisect_campaign.md}" summary --command "$command" \
  --table "$out/summary.table.md" --note "Outputs in $out; $(sed -n 's/^(\(.*\))$/\1/p' "$out/summary.md" | paste -sd ';' -)."
