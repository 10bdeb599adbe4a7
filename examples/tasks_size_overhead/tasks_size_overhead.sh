#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs tasks_size_overhead (its options pass through) and plots the speedup
# against task length per number of workers: writes, in the current folder,
# tasks_size_overhead.output (the program's table), tasks_size_overhead.data
# (task length, then speedup with 1, 2, ... workers) and, with gnuplot,
# tasks_size_overhead.png. $TASKS_SIZE_OVERHEAD names the program (default:
# beside this script), $GNUPLOT another gnuplot.
here=$(dirname "$0")
prog=${TASKS_SIZE_OVERHEAD:-$here/tasks_size_overhead}
gnuplot=${GNUPLOT:-gnuplot}
"$prog" "$@" > tasks_size_overhead.output || exit $?
# Speedup of n workers at one length: they ran n times the tasks of "seq".
awk -F'\t' '
/^#/ { next }
/^"seq"/ { for (i = 3; i <= NF; i += 2) if ($i != "") seq[++nsizes] = $i; next }
NF > 1 { ncpus++; for (i = 2; i + 1 <= NF; i += 2) if ($i != "") { k = (i / 2); size[k] = $i; t[ncpus, k] = $(i + 1) } }
END {
	if (ncpus == 0 || nsizes == 0) { print "tasks_size_overhead.sh: the program printed no run" > "/dev/stderr"; exit 1 }
	printf "# length(us)"; for (c = 1; c <= ncpus; c++) printf "\t%d", c; printf "\n"
	for (k = 1; k <= nsizes; k++) {
		printf "%s", size[k]
		for (c = 1; c <= ncpus; c++) printf "\t%f", (t[c, k] > 0 ? c * seq[k] / t[c, k] : 0)
		printf "\n"
	}
	print ncpus > "tasks_size_overhead.ncpus"
}' tasks_size_overhead.output > tasks_size_overhead.data || exit 1
ncpus=$(cat tasks_size_overhead.ncpus) && rm -f tasks_size_overhead.ncpus
if ! command -v "$gnuplot" >/dev/null 2>&1; then
	echo "tasks_size_overhead.sh: gnuplot not found (install gnuplot-nox): the speedups are in tasks_size_overhead.data" >&2
	exit 0
fi
"$gnuplot" -e "datafile='tasks_size_overhead.data'; outfile='tasks_size_overhead.png'; ncpus=$ncpus" "$here/tasks_size_overhead.gp" || exit 1
echo "tasks_size_overhead.png: speedup against task length for 1 to $ncpus workers"
