# The look shared by the per-chapter figures (time.gp, memory.gp, seqlen.gp
# load it after setting width and height): pngcairo when this gnuplot has it,
# else the plain png terminal. A version's line takes the color, point type,
# width and dash draw.sh reads from plots/landmarks.py (the words of colors,
# points, widths and dashes, one per block: version_look below), so that a
# version looks the same in every figure of its chapter; floors and official
# kernels are drawn in black and greys.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size width, height noenhanced font ",11"
} else {
    set terminal png size width, height noenhanced
}
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key box opaque samplen 3 spacing 1.1
set format x "%g"
set format y "%g"
set pointsize 1.3
# The plot options of version block i (an expression of i, inside `plot for`)
# from the words of the strings named by their suffix: colors, points, ...
look(sfx) = sprintf("lw real(word(widths%s, i+1)) pt int(word(points%s, i+1)) dt int(word(dashes%s, i+1))" \
    . " lc rgb word(colors%s, i+1)", sfx, sfx, sfx, sfx)
version_look = look("")
