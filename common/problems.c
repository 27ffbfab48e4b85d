/* The problems a run works on: the op's built-in check cases and benchmark
 * sets, or the grid the command line gives (problems.h). */
#include "problems.h"

bool sizes_given(const Op *op, const Args *a) {
    if (a->given & (ARG_BATCH | ARG_SEQLEN | ARG_SEQLENS | ARG_DIM | ARG_DSTATE | ARG_GROUPS)) return true;
    for (int k = 0; k < op->nflags; k++)
        if ((a->op_given & (1u << k)) && op->flags[k].shape) return true;
    return false;
}

/* Appends batch x seqlen on base (batch outer; an empty list keeps base's value). */
static void add_grid(Problem base, const int64_t *batch, int nbatch, const int64_t *seqlen, int nseqlen,
                     Problem *out, int *n) {
    for (int i = 0; i < (nbatch ? nbatch : 1); i++)
        for (int j = 0; j < (nseqlen ? nseqlen : 1) && *n < MAX_PROBLEMS; j++) {
            Problem p = base;
            if (nbatch) p.batch = batch[i];
            if (nseqlen) p.seqlen = seqlen[j];
            out[(*n)++] = p;
        }
}

/* The grid --batch x --seqlen on base, the other sizes the command line gives
 * replacing base's. */
int command_line_grid(const Op *op, Problem base, bool bench, const Args *a, Problem *out) {
    if (op->command_line_base) op->command_line_base(&base, a, bench);
    if (a->dim) base.dim = a->dim;
    if (a->dstate) base.dstate = a->dstate;
    if (a->groups) base.groups = a->groups;
    const char *split_flag = "--dim";  // what the groups divide: --dim, or the op's flag that says so
    int64_t split = base.dim;
    for (int k = 0; k < op->nflags; k++) {
        const OpFlag *f = &op->flags[k];
        if (f->kind == OPT_SEQLEN) continue;
        if (a->op_given & (1u << k)) base.opt[f->slot] = a->opt[f->slot];
        if (f->groups_split && base.opt[f->slot]) split_flag = f->flag, split = base.opt[f->slot];
    }
    /* A size the user gave against a group count the user did not: say the
     * groups are the default, not a value typed. */
    if (!(a->given & ARG_GROUPS) && base.groups > 1 && split % base.groups != 0)
        die_usage("%s %lld is not a multiple of %lld, the default --groups here: give --groups", split_flag,
                  (long long)split, (long long)base.groups);
    if (a->nseqs) {  // one packed problem: the sequences end to end on one row
        if (a->nseqlen) die_usage("--seqlens packs its sequences into one problem: give it without --seqlen");
        if (a->nbatch && (a->nbatch > 1 || a->batch[0] != 1))
            die_usage("--seqlens: the packed sequences lie on one row, so --batch can only be 1");
        base.batch = 1;
        base.nseq = a->nseqs;
        base.seqlens = a->seqlens;
        base.seqlen = 0;
        for (int k = 0; k < a->nseqs; k++) base.seqlen += a->seqlens[k];
        out[0] = base;
        return 1;
    }
    int n = 0;
    add_grid(base, a->batch, a->nbatch, a->seqlen, a->nseqlen, out, &n);
    return n;
}

/* Whether a built-in problem is of the form the command line picks: each
 * op flag marked picks that was given (e.g. --form m1) must hold its value. */
bool picked(const Op *op, const Problem *p, const Args *a) {
    for (int k = 0; k < op->nflags; k++) {
        const OpFlag *f = &op->flags[k];
        if (f->picks && (a->op_given & (1u << k)) && p->opt[f->slot] != a->opt[f->slot]) return false;
    }
    return true;
}

static int list_length(const int64_t *x) {
    int n = 0;
    while (n < 8 && x[n]) n++;
    return n;
}

/* --bench: the chapter's sets (quick: the op's short list), or with sizes
 * given the grid on the op's bench_base. */
int bench_problems(const Session *se, const Args *a, bool quick, Problem *out) {
    const Op *op = se->op;
    if (sizes_given(op, a)) return command_line_grid(op, op->bench_base, true, a, out);
    int n = 0;
    for (int k = 0; k < (quick ? op->nquick : op->nbench); k++) {
        const BenchGrid *g = quick ? &op->quick[k] : &op->bench[k];
        if (!picked(op, &g->base, a)) continue;
        if (quick || (se->ch->bench_sets & (1u << k)))
            add_grid(g->base, g->batch, list_length(g->batch), g->seqlen, list_length(g->seqlen), out, &n);
    }
    return n;
}

/* The flag options apply to every problem; exit 2 on the first one the op
 * does not accept, before any work. */
void with_flags(const Op *op, const Args *a, Problem *problems, int n) {
    for (int i = 0; i < n; i++) {
        Problem *p = &problems[i];
        if (a->no_z) p->has_z = false;
        if (a->no_D) p->has_D = false;
        if (a->no_bias) p->has_bias = false;
        if (a->no_softplus) p->softplus = false;
        if (a->h0) p->has_h0 = true;
        TensorSpec t[MAX_TENSORS];
        problem_table(op, p, t);
    }
}
