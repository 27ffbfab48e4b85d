# The look shared by the per-chapter figures (time.gp, memory.gp, seqlen.gp
# load it after setting width and height): pngcairo when this gnuplot has it,
# else the plain png terminal. Their version lines take colors 1-8; a ninth
# version and later repeat the colors with squares on dashed lines.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size width, height noenhanced font ",11"
} else {
    set terminal png size width, height noenhanced
}
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key box opaque samplen 3 spacing 1.1
set format x "%g"
set format y "%g"
