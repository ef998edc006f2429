#!/bin/sh
# Runs the ABI probe built against Debian's libfabric 1.17 headers and the one built against ours,
# and fails on any difference.  Usage: abi_test.sh PROBE_DEBIAN PROBE_OURS
set -u
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

"$1" > "$tmp/debian.txt" || { echo "FAIL: $1 exited with $?"; exit 1; }
"$2" > "$tmp/ours.txt" || { echo "FAIL: $2 exited with $?"; exit 1; }

lines=$(wc -l < "$tmp/debian.txt")
if [ "$lines" -lt 2000 ]; then
	echo "FAIL: the probe printed only $lines lines; expected more than 2000"
	exit 1
fi

# Both probes come from the same source, so line N names the same item in both outputs.
# Each line is name=value; the name may itself contain '=' (e.g. "(a == b)"), the value not.
awk -v ours="$tmp/ours.txt" '
	function name(s) { return match(s, /=[^=]*$/) ? substr(s, 1, RSTART - 1) : s }
	function value(s) { return match(s, /=[^=]*$/) ? substr(s, RSTART + 1) : "" }
	{
		if ((getline o < ours) <= 0)
			o = name($0) "=<missing>"
		if ($0 != o) {
			printf "DIFF %s: debian=%s ours=%s\n", name($0), value($0), value(o)
			bad++
		}
	}
	END {
		while ((getline o < ours) > 0) {
			printf "DIFF extra line in ours: %s\n", o
			bad++
		}
		if (bad) {
			printf "FAIL: %d of %d items differ\n", bad, NR
			exit 1
		}
		printf "PASS: %d items equal\n", NR
	}' "$tmp/debian.txt"
