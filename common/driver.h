/* The driver core every chapter runs on. A chapter's main.c lists its
 * numbered versions and names the operation they compute (an Op, op.h); the
 * core parses the command line, makes the inputs, checks every version
 * against the fp64 oracle and the previous stage, times it, writes CSV rows,
 * and reads and writes --dump/--load folders. Everything that differs between
 * operations is in the Op's tables: its flags, its named tensors, its oracle,
 * its counts, its shapes, and the calls into its version type. */
#ifndef DRIVER_H
#define DRIVER_H

#include "op.h"

/* The whole program: returns the exit code (0, 1, 2 or 3). */
int chapter_main(const Chapter *ch, int argc, char **argv);

#endif
