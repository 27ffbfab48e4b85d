/* The problems a run works on (problems.c): the op's built-in check cases
 * and benchmark sets, or the grid the command line gives. */
#ifndef PROBLEMS_H
#define PROBLEMS_H

#include "buffers.h"

#define MAX_PROBLEMS 64  // problems of one run at most

/* Whether the command line gives any size: a common one, or an op's flag
 * marked shape. */
bool sizes_given(const Op *op, const Args *a);
/* The grid --batch x --seqlen on base, the other sizes the command line gives
 * replacing base's. */
int command_line_grid(const Op *op, Problem base, bool bench, const Args *a, Problem *out);
/* Whether a built-in problem is of the form the command line picks: each
 * op flag marked picks that was given (e.g. --form m1) must hold its value. */
bool picked(const Op *op, const Problem *p, const Args *a);
/* --bench: the chapter's sets (quick: the op's short list), or with sizes
 * given the grid on the op's bench_base. */
int bench_problems(const Session *se, const Args *a, bool quick, Problem *out);
/* The flag options apply to every problem; exit 2 on the first one the op
 * does not accept, before any work. */
void with_flags(const Op *op, const Args *a, Problem *problems, int n);

#endif
