#!/usr/bin/env bash
# Installs every Debian package twinbench's build, tests and main job need.
# Idempotent: does nothing when all are present; otherwise one apt-get update,
# then one apt-get install.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libgloo-dev
  libdnnl-dev  # oneDNN, which LibTorch links already: fp32 GEMMs called directly (models/onednn_gemm.cpp)
  libopenblas0-pthread  # Debian's LibTorch calls the system BLAS; the reference BLAS is ~40x slower
  libfmt-dev libcli11-dev libsqlite3-dev sqlite3 libtomlplusplus-dev nlohmann-json3-dev
  libboost-dev  # Boost.Math's header-only Student t and normal distributions (harness/stats/interval.cpp)
  libpq-dev postgresql  # the PostgreSQL store (libpq) and the server the tests start privately (ci/pg_cluster.sh)
  python3-yaml  # ci/check_fleet_samples.py: the sample GitHub Actions workflow parses and shards 1..N
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
  libssl-dev  # `twinbench import`: SHA-256 of imported logs (OpenSSL's libcrypto)
  tidy chromium  # report tests: HTML validation and headless rendering
  libcpp-httplib-dev  # `twinbench serve` (harness/cli/serve/)
  python3-websocket  # tests/integration/serve_browser.py drives Chromium over the DevTools protocol
  openssl  # tests/integration/tls_proxy.py: the self-signed certificate of the HTTPS proxy before the server
  wrk  # ci/campaigns/serve_bench.sh: the server under concurrent clients
  libbenchmark-tools python3-scipy  # Google Benchmark's compare.py for twinbench-micro JSON (micro tests)
  python3-torch  # ci/campaigns/perf.sh: the plain PyTorch eager reference (same LibTorch 1.13 and BLAS)
  patchelf mmdebstrap  # ci/gpu_kit.sh: the kit's binary finds its libraries in ../lib; its rehearsal on a bare Debian root
  libcurl4-openssl-dev  # notifications and pull-request delivery: HTTP(S) and SMTP (harness/cli/delivery/)
  python3-aiosmtpd  # delivery tests: a real local SMTP server (tests/tools/fake_smtp.py)
  cmark-gfm  # ci/delivery_outcomes.sh: the pull-request comment rendered as GitHub renders markdown
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "ci/setup.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "ci/setup.sh: warning: libblas.so.3 resolves to '$blas', not OpenBLAS: fp32 matmuls will be slow" >&2 ;;
esac
