# Time vs batch at S1 (d 2048, N 32, L 512, log-log): one line per version,
# the floor dashed (max of bytes / copy rate and exps / exp2 rate, from the
# run's own probes), official selective_scan_fn times dash-dotted when
# plots/data holds them. draw.sh sets: chapter, out, note (a line under the
# title: which versions the figure draws, or empty), the gnuplot data files
# (blocks headed by their titles) with their block counts:
# versions/nversions, floors/nfloors, official/nofficial, and the look of each
# version block: colors, points, widths, dashes (words, in block order).
width = 1100; height = 620
load "plots/style.gp"
set output out
set title chapter . ": time vs batch at S1 (d 2048, N 32, L 512)" . (note eq "" ? "" : "\n" . note)
set xlabel "batch"
set ylabel "ms (median)"
set logscale x 2
set logscale y 10
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set key outside right top

plot_cmd = "plot for [i=0:nversions-1] versions index i using 1:2 with linespoints " . version_look \
    . " title columnheader(1)"
if (nfloors > 0) {
    plot_cmd = plot_cmd . ", for [i=0:nfloors-1] floors index i using 1:2" \
        . " with lines dt i+2 lw 2 lc rgb 'black' title columnheader(1)"
}
if (nofficial > 0) {
    plot_cmd = plot_cmd . ", for [i=0:nofficial-1] official index i using 1:2" \
        . " with linespoints dt 4+i lw 2 pt 6+2*i lc rgb '#555555' title columnheader(1)"
}
eval plot_cmd
