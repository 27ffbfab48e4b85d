# Memory vs b·d·L·N at S1 (d 2048, N 32, L 512, batch 1..16), one line per
# version. Left: peak MiB (log-log), with the inputs + outputs dashed: a
# version on that line allocates nothing of size b·d·L·N. Right: workspace
# MiB (peak minus inputs and outputs, linear axes): it grows in proportion to
# b·d·L·N when (b,d,L,N) tensors are materialized, and stays flat when not.
# draw.sh sets: chapter, out, versions/nversions (columns: b·d·L·N, peak,
# workspace), workspace_max (the largest workspace), io/nio (b·d·L·N,
# inputs + outputs).
width = 1400; height = 620
load "plots/style.gp"
set output out
set multiplot layout 1, 2 title chapter . ": memory at S1 (d 2048, N 32, L 512, batch 1..16)"
set xlabel "b·d·L·N"
set format x "%.0s%c"

set title "peak MiB (inputs and outputs included)"
set ylabel "MiB"
set logscale x 2
set logscale y 10
set autoscale xfix
set autoscale yfix
set key top left
# Room above the lines for the key: about 5% of the height per entry.
set offsets 0, 0, graph 0.05 * (nversions + nio), graph 0.05
plot for [i=0:nversions-1] versions index i using 1:2 \
         with linespoints lw 2 pt 7-2*int(i/8) dt 1+int(i/8) lc i+1 title columnheader(1), \
     for [i=0:nio-1] io index i using 1:2 \
         with lines dt i+2 lw 2 lc rgb "black" title columnheader(1)

set title "workspace MiB (peak minus inputs and outputs)"
unset logscale xy
set offsets 0, 0, 0, 0
set autoscale xfixmax
set xrange [0:*]
set yrange [0:(workspace_max > 0 ? 1.1 * workspace_max : 1)]
unset key
plot for [i=0:nversions-1] versions index i using 1:3 \
         with linespoints lw 2 pt 7-2*int(i/8) dt 1+int(i/8) lc i+1 notitle
unset multiplot
