#!/bin/sh
# screenshot.sh renders a kprof profile as an HTML flame graph
# (kprof report --html) and photographs the page with headless Chromium.
#
# Usage: reports/testdata/screenshot.sh [PROFILE [OUT.png]]
#
# PROFILE defaults to reports/testdata/json.kprof, a real profile of the
# encoding/json evaluation workload, made with
#
#	kprof build -o json ./bench/workloads/json
#	KPROF_MODE=sample KPROF_GRAN=1000 KPROF_OUT=json.kprof ./json -n 1
#
# and OUT.png to reports/testdata/flamegraph.png. ZOOM=N photographs the
# page zoomed into node N (the page's #n=N fragment). Chromium comes from
# CHROMIUM, else chromium on PATH (apt-get install chromium).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
profile=${1:-$root/reports/testdata/json.kprof}
out=${2:-$root/reports/testdata/flamegraph.png}
chromium=${CHROMIUM:-chromium}

if ! command -v "$chromium" >/dev/null 2>&1; then
	echo "screenshot.sh: $chromium not found (apt-get update && apt-get install -y chromium)" >&2
	exit 2
fi
case $out in
/*) ;;
*) out=$(pwd)/$out ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

(cd "$root" && go build -o "$tmp/kprof" ./cmd/kprof)
"$tmp/kprof" report --html "$tmp/flamegraph.html" "$profile"

# No network, no first-run or background work: the page is self-contained.
if ! "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
	--no-first-run --disable-background-networking --disable-component-update \
	--disable-sync --user-data-dir="$(mktemp -d "$tmp/chromium.XXXXXX")" \
	--screenshot="$out" --window-size=1200,700 \
	"file://$tmp/flamegraph.html${ZOOM:+#n=$ZOOM}" >"$tmp/chromium.log" 2>&1; then
	cat "$tmp/chromium.log" >&2
	exit 1
fi
echo "screenshot.sh: wrote $out"
