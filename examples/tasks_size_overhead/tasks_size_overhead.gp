# SPDX-License-Identifier: LGPL-2.1-or-later
# The speedup of tasks_size_overhead's runs against the length of a task, one
# curve per number of CPU workers (tasks_size_overhead.sh writes the data:
# task length in us, then the speedup with 1, 2, ... workers).
#   gnuplot -e "datafile='tasks_size_overhead.data'; ncpus=2" tasks_size_overhead.gp
if (!exists("datafile")) datafile = "tasks_size_overhead.data"
if (!exists("outfile")) outfile = "tasks_size_overhead.png"
if (!exists("ncpus")) ncpus = 1
set terminal png noenhanced size 900,600
set output outfile
set title "Speedup against task length (tasks_size_overhead)"
set xlabel "task length (us)"
set ylabel "speedup"
set logscale x 2
set key top left
set grid
set yrange [0:ncpus + 1]
plot for [c = 1:ncpus] datafile using 1:(column(c + 1)) with linespoints title sprintf("%d CPU%s", c, c > 1 ? "s" : ""), \
     for [c = 1:ncpus] c with lines dashtype 2 linecolor c notitle
