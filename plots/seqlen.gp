# Time vs sequence length at S2 (d 2048, N 16, L 512..65536, log-log), one
# panel per batch (1 and 8), one line per version, the floor dashed and
# official selective_scan_fn times dash-dotted when plots/data holds them; the
# key right of the panels, from the panel with more lines. draw.sh sets:
# chapter, out, note (a line under the title, or empty), and for b in 1 and 8
# the data files with their block counts: b<b>/nb<b> (versions),
# floor<b>/nfloor<b>, official<b>/nofficial<b>, and the look of each version
# block: colors<b>, points<b>, widths<b>, dashes<b>.
width = 1700; height = 660
load "plots/style.gp"
set output out
set multiplot title chapter . ": time vs sequence length at S2 (d 2048, N 16)" . (note eq "" ? "" : "\n" . note)
set xlabel "L (sequence length)"
set ylabel "ms (median)"
set logscale x 2
set logscale y 10
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
panels = (nb1 > 0) + (nb8 > 0)
keyed = (nb8 >= nb1 ? "8" : "1")  # the panel whose key is drawn
panel_width = (0.66 - 0.06 * (panels - 1)) / panels  # the panels fill 0.06 to 0.72 of the width, the key the rest
top = (note eq "" ? 0.86 : 0.83)
set tmargin at screen top
set bmargin at screen 0.11
p = 0

do for [b in "1 8"] {
    n = value("nb" . b)
    if (n > 0) {
        versions = value("b" . b)
        floors = value("floor" . b)
        nfloors = value("nfloor" . b)
        official = value("official" . b)
        nofficial = value("nofficial" . b)
        set lmargin at screen 0.06 + p * (panel_width + 0.06)
        set rmargin at screen 0.06 + p * (panel_width + 0.06) + panel_width
        if (b eq keyed) {
            set key at screen 0.74, screen top left top
        } else {
            unset key
        }
        set title "batch " . b
        plot_cmd = "plot for [i=0:n-1] versions index i using 1:2 with linespoints " . look(b) \
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
        p = p + 1
    }
}
unset multiplot
