# Time vs sequence length at S2 (d 2048, N 16, L 512..65536, log-log), one
# panel per batch (1 and 8), one line per version, the floor dashed and
# official selective_scan_fn times dash-dotted when plots/data holds them.
# draw.sh sets: chapter, out, and for b in 1 and 8 the data files with their
# block counts: b<b>/nb<b> (versions), floor<b>/nfloor<b>, official<b>/nofficial<b>.
width = 1500; height = 640
load "plots/style.gp"
set output out
set multiplot layout 1, (nb1 > 0) + (nb8 > 0) \
    title chapter . ": time vs sequence length at S2 (d 2048, N 16)"
set xlabel "L (sequence length)"
set ylabel "ms (median)"
set logscale x 2
set logscale y 10
set autoscale yfix
set key top left

do for [b in "1 8"] {
    n = value("nb" . b)
    if (n > 0) {
        versions = value("b" . b)
        floors = value("floor" . b)
        nfloors = value("nfloor" . b)
        official = value("official" . b)
        nofficial = value("nofficial" . b)
        set title "batch " . b
        # Room above the lines for the key: about 5% of the height per entry.
        set offsets 0, 0, graph 0.05 * (n + nfloors + nofficial), graph 0.05
        plot_cmd = "plot for [i=0:n-1] versions index i using 1:2" \
            . " with linespoints lw 2 pt 7-2*int(i/8) dt 1+int(i/8) lc i+1 title columnheader(1)"
        if (nfloors > 0) {
            plot_cmd = plot_cmd . ", for [i=0:nfloors-1] floors index i using 1:2" \
                . " with lines dt i+2 lw 2 lc rgb 'black' title columnheader(1)"
        }
        if (nofficial > 0) {
            plot_cmd = plot_cmd . ", for [i=0:nofficial-1] official index i using 1:2" \
                . " with linespoints dt 4+i lw 2 pt 6+2*i lc rgb '#555555' title columnheader(1)"
        }
        eval plot_cmd
    }
}
unset multiplot
