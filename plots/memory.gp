# Memory vs b·d·L·N at S1 (d 2048, N 32, L 512, batch 1..16), one line per
# version. Left: peak MiB (log-log), with the inputs + outputs dashed: a
# version on that line allocates nothing of size b·d·L·N. Right: workspace
# MiB (peak minus inputs and outputs, linear axes): it grows in proportion to
# b·d·L·N when (b,d,L,N) tensors are materialized, and stays flat when not.
# The key right of the panels. draw.sh sets: chapter, out, note (a line under
# the title, or empty), versions/nversions (columns: b·d·L·N, peak,
# workspace), workspace_max (the largest workspace), io/nio (b·d·L·N,
# inputs + outputs), and the look of each version block: colors, points,
# widths, dashes.
width = 1700; height = 640
load "plots/style.gp"
set output out
set multiplot title chapter . ": memory at S1 (d 2048, N 32, L 512, batch 1..16)" . (note eq "" ? "" : "\n" . note)
set xlabel "b·d·L·N"
set format x "%.0s%c"
top = (note eq "" ? 0.86 : 0.83)
set tmargin at screen top
set bmargin at screen 0.11

set lmargin at screen 0.06
set rmargin at screen 0.36
set title "peak MiB (inputs and outputs included)"
set ylabel "MiB"
set logscale x 2
set logscale y 10
set autoscale xfix
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set key at screen 0.74, screen top left top
plot for [i=0:nversions-1] versions index i using 1:2 with linespoints @version_look title columnheader(1), \
     for [i=0:nio-1] io index i using 1:2 \
         with lines dt i+2 lw 2 lc rgb "black" title columnheader(1)

set lmargin at screen 0.42
set rmargin at screen 0.72
set title "workspace MiB (peak minus inputs and outputs)"
unset logscale xy
set offsets 0, 0, 0, 0
set autoscale xfixmax
set xrange [0:*]
set yrange [0:(workspace_max > 0 ? 1.1 * workspace_max : 1)]
unset key
plot for [i=0:nversions-1] versions index i using 1:3 with linespoints @version_look notitle
unset multiplot
