#!/usr/bin/env bash
# The test repository of docs/verdicts.md §10 (the bisect tests and
# ci/campaigns/bisect_campaign.sh): a git history whose "build" is cheap. Every commit
# holds build.sh, which writes ./twinbench: a wrapper around an already-built
# twinbench binary ($TWINBENCH_UNDER_TEST at build time) that sets
# TWINBENCH_TEST_SLOW_OP from the commit's file slow_op, so the commits from
# SLOW_AT on run every training step PERCENT% slower (harness/run/hooks/slowdown.cpp)
# and the ones before it do not (or, with BASE_OP set, carry that value instead:
# a good end made with a test hook, which bisect must refuse as a baseline). The
# wrapper allows the hook explicitly (TWINBENCH_ALLOW_TEST_HOOKS=1).
#
#   ci/bisect_repo.sh DIR COMMITS SLOW_AT PERCENT [BROKEN_AT ...]
#     DIR      created; must not exist
#     COMMITS  history length, the good end included (16: good + 15 commits)
#     SLOW_AT  position (1 .. COMMITS-1) of the commit that makes steps slower; 0: none does
#     PERCENT  the slowdown, an integer percent (10 = +10%)
#     BROKEN_AT positions whose build.sh fails (as `git bisect skip` meets them)
# Build a commit:  (cd worktree && TWINBENCH_UNDER_TEST=/path/to/twinbench sh build.sh)
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n '2,19p' "$0" >&2; exit 2; }
dir=$1 commits=$2 slow_at=$3 percent=$4
shift 4
broken=" $* "
[[ -e $dir ]] && { echo "bisect_repo.sh: $dir exists" >&2; exit 2; }
(( commits >= 2 && slow_at >= 0 && slow_at < commits )) || { echo "bisect_repo.sh: need COMMITS >= 2 and 0 <= SLOW_AT < COMMITS" >&2; exit 2; }
mkdir -p "$dir"
cd "$dir"
git init -q -b main .
git() { command git -c user.name=twinbench -c user.email=twinbench@localhost -c commit.gpgsign=false "$@"; }
for (( i = 0; i < commits; i++ )); do
  if (( slow_at > 0 && i >= slow_at )); then echo "step:$percent" > slow_op; else echo "${BASE_OP:-}" > slow_op; fi
  if [[ $broken == *" $i "* ]]; then
    printf '#!/bin/sh\necho "build.sh: error: commit %s does not build" >&2\nexit 1\n' "$i" > build.sh
  else
    cat > build.sh <<'BUILD'
#!/bin/sh
# A cheap build: a wrapper around an already-built twinbench, slowed as this commit's slow_op says.
[ -x "$TWINBENCH_UNDER_TEST" ] || { echo "build.sh: error: set TWINBENCH_UNDER_TEST to a twinbench binary" >&2; exit 1; }
op=$(cat slow_op)
{
  echo '#!/bin/sh'
  [ -n "$op" ] && echo "TWINBENCH_TEST_SLOW_OP=$op TWINBENCH_ALLOW_TEST_HOOKS=1; export TWINBENCH_TEST_SLOW_OP TWINBENCH_ALLOW_TEST_HOOKS"
  echo "exec '$TWINBENCH_UNDER_TEST' \"\$@\""
} > twinbench
chmod +x twinbench
BUILD
  fi
  echo "$i" > position
  git add -A
  msg="commit $i"
  (( i == slow_at )) && msg="commit $i: every step $percent% slower"
  git commit -q -m "$msg"
done
printf 'twinbench\n' > .git/info/exclude
