#!/usr/bin/env bash
# wrap.sh CACHE LOG: logs every compile kprof's patched compilers run for
# builds whose kprof cache is CACHE/kprof (XDG_CACHE_HOME=CACHE), one line
# each: start and end (Unix seconds), package, kprof tool ID (binary ×
# options), compiler, and the directory of the kprof build that asked.
#
# How bench/results/ci-time-2026-11-29.md counted tool IDs and compiles:
#
#   mkdir -p /tmp/c/kprof && cp -r ~/.cache/kprof/compile-* /tmp/c/kprof/
#   bash bench/compilelog/wrap.sh /tmp/c /tmp/compile.log
#   XDG_CACHE_HOME=/tmp/c go test -json -timeout 60m ./... > /tmp/test.json
#   awk '{t[$4]+=$2-$1; n[$4]++} END {for (k in t) print k, n[k], t[k]}' /tmp/compile.log
#
# The real compiler moves to compile-*/real/compile (the go command reads
# its name from -V=full); run it again on a fresh copy, not on a wrapped
# cache.
set -euo pipefail
cache=$1
log=$(realpath -m "$2")
shopt -s nullglob
dirs=("$cache"/kprof/compile-*/)
if [ ${#dirs[@]} -eq 0 ]; then
	echo "wrap.sh: no patched compiler in $cache/kprof (copy ~/.cache/kprof/compile-* there first)" >&2
	exit 1
fi
for d in "${dirs[@]}"; do
	if [ -e "$d/real/compile" ]; then
		echo "wrap.sh: $d is wrapped already" >&2
		exit 1
	fi
	mkdir -p "$d/real"
	mv "$d/compile" "$d/real/compile"
	cat > "$d/compile" <<WRAP
#!/usr/bin/env bash
real="\$(dirname "\$0")/real/compile"
case " \$* " in *" -V=full "*) exec "\$real" "\$@";; esac
s=\$(date +%s.%N)
"\$real" "\$@" && rc=0 || rc=\$?
e=\$(date +%s.%N)
p=""; prev=""; for a in "\$@"; do [ "\$prev" = "-p" ] && p="\$a"; prev="\$a"; done
id=\$(grep -o '"ToolID":"[^"]*"' "\${KPROF_TOOLEXEC_CONFIG:-/dev/null}" 2>/dev/null | cut -d'"' -f4)
gp=\$(ps -o ppid= -p \$PPID | tr -d ' '); ggp=\$(ps -o ppid= -p "\$gp" | tr -d ' ')
echo "\$s \$e \$p \$id \$(basename "\$(dirname "\$0")") \$(readlink /proc/\$ggp/cwd 2>/dev/null)" >> "$log"
exit \$rc
WRAP
	chmod +x "$d/compile"
done
echo "wrap.sh: logging to $log"
