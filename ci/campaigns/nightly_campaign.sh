#!/usr/bin/env bash
# The nightly change-point campaign (docs/verdicts.md §14): twinbench's detector and
# Apache Otava on the same seeded series with planted steps and without, scored by
# precision, recall, false alarms per 100 series-months and the night found. Counts,
# not timings: any machine, busy or not. About 6 minutes on 2 cores, nearly all of it
# Otava rerun on every night of the nightly replay.
#
#   bash ci/campaigns/nightly_campaign.sh                 the tables of docs/verdicts.md §14, into
#                                                         docs/results/nightly_campaign.md
#   bash ci/campaigns/nightly_campaign.sh --series 50     any flag of nightly_campaign.py
#
# Builds the twinbench_changepoints tool (build/, Debian line) and the project venv
# (ci/venv.sh: apache-otava from ci/requirements-nodeps.txt), then runs the driver.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash ci/build.sh debian twinbench_changepoints >/dev/null
bash ci/venv.sh
# Both tables also go to the results file docs/verdicts.md §14 quotes (RESULTS: another file).
exec .venv/bin/python ci/campaigns/nightly_campaign.py --detector build/tests/twinbench_changepoints \
  --results "${RESULTS:-docs/results/nightly_campaign.md}" --command "bash ci/campaigns/nightly_campaign.sh${*:+ $*}" "$@"
