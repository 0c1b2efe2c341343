#!/usr/bin/env bash
# A short run of each libFuzzer target from seeds generated here: fuzz/run.sh <dir of the fuzz binaries>.
# EMBER_FUZZ_SECONDS sets the time per target (default 20). Crash inputs land in <dir>/artifacts.
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
seconds=${EMBER_FUZZ_SECONDS:-20}
python=${EMBER_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$here/make_seeds.py" "$work"
mkdir -p "$bin/artifacts"
for target in safetensors checkpoint fx_graph; do
  # -malloc_limit_mb: no single allocation may come near it for inputs of at most -max_len bytes,
  # so hitting it means a size was taken from the input unchecked.
  status=0
  "$bin/${target}_fuzz" "$work/$target" -dict="$here/$target.dict" -max_total_time="$seconds" -max_len=16384 \
    -rss_limit_mb=512 -malloc_limit_mb=64 -timeout=10 -artifact_prefix="$bin/artifacts/${target}_" \
    -print_final_stats=1 > "$work/$target.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$work/$target.log"
    echo "${target}_fuzz failed (exit $status); the input is in $bin/artifacts"
    exit 1
  fi
  echo "${target}_fuzz: $(grep -E 'DONE' "$work/$target.log" | tail -n 1)"
done
