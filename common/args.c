/* The one command-line parser. */
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

const char *g_prog = "program";

void die_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(EXIT_USAGE);
}

typedef struct {
    const char *flag;
    unsigned bit;
    const char *help;
} FlagInfo;

static const FlagInfo FLAGS[] = {
    {"--check", ARG_CHECK, "run the checks (default when neither --check nor --bench)"},
    {"--bench", ARG_BENCH, "time the versions at the benchmark shapes"},
    {"--sampled", ARG_SAMPLED, "with --bench: run each GPU version once and check 64 rows, first to last, time nothing (make check-long)"},
    {"--list", ARG_LIST, "list the numbered versions"},
    {"--batch", ARG_BATCH, "B[,B...]  batch sizes"},
    {"--dim", ARG_DIM, "D  channels"},
    {"--dstate", ARG_DSTATE, "N  state size"},
    {"--seqlen", ARG_SEQLEN, "L[,L...]  sequence lengths"},
    {"--seqlens", ARG_SEQLENS, "L,L[,L...]  one packed problem: sequences of these lengths end to end on one row"},
    {"--groups", ARG_GROUPS, "G  groups of B/C"},
    {"--no-z", ARG_NO_Z, "no z gate"},
    {"--no-D", ARG_NO_D, "no D skip term"},
    {"--no-bias", ARG_NO_BIAS, "no delta_bias / dt_bias"},
    {"--no-softplus", ARG_NO_SOFTPLUS, "no softplus on delta / dt"},
    {"--h0", ARG_H0, "give an initial state"},
    {"--seed", ARG_SEED, "S  seed of the random inputs, 0 .. 2^40"},
    {"--reps", ARG_REPS, "R  timed repetitions (>= 20)"},
    {"--csv", ARG_CSV, "FILE  append benchmark rows to FILE"},
    {"--dump", ARG_DUMP, "DIR  write inputs and outputs as .npy + meta.json"},
    {"--load", ARG_LOAD, "DIR  read inputs (and outputs to check) from DIR"},
};
#define NFLAGS (int)(sizeof(FLAGS) / sizeof(FLAGS[0]))

/* The common flags, the op's own after --h0's place. */
static void usage(unsigned allowed, const OpFlag *flags, int nflags, const char *summary,
                  const char *const *csv_tables) {
    printf("%s\n\nusage: %s [VERSION|all] [flags]\n", summary, g_prog);
    for (int i = 0; i < NFLAGS; i++) {
        if (allowed & FLAGS[i].bit) printf("  %-14s %s\n", FLAGS[i].flag, FLAGS[i].help);
        if ((allowed & FLAGS[i].bit) && FLAGS[i].bit == ARG_CSV && csv_tables && csv_tables[0]) {
            printf("  %-14s and writes these tables beside it, replacing them:", "");
            for (int k = 0; k < CSV_MAX_TABLES && csv_tables[k]; k++) printf(" FILE_%s.csv", csv_tables[k]);
            printf("\n  %-14s (FILE_ is FILE without its extension)\n", "");
        }
        if (FLAGS[i].bit == ARG_H0)
            for (int k = 0; k < nflags; k++) printf("  %-14s %s\n", flags[k].flag, flags[k].help);
    }
    printf("  %-14s %s\n", "--help", "this text");
    if (allowed & ARG_BATCH)  // a program whose problems the command line sizes
        printf("\nmemory: before anything is allocated, a problem's host bytes (its inputs in fp32, its outputs\n"
               "        twice) are held against the machine's memory, and its device bytes (the smallest GPU\n"
               "        version's inputs, outputs and workspace) against the GPU's free memory: over either, exit 2\n");
    printf("\nexit codes: 0 all checks passed, 1 a check failed, 2 bad usage or input,\n"
           "            3 passed but the GPU parts were skipped (no usable CUDA device)\n");
}

/* The one reader of a number on the command line: an integer in [lo, hi],
 * the whole of s, else one line naming the flag and the range. */
static int64_t parse_int(const char *flag, const char *s, int64_t lo, int64_t hi) {
    if (!s) die_usage("%s needs a value (try --help)", flag);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0') die_usage("%s: '%s' is not an integer (try --help)", flag, s);
    if (errno == ERANGE || v < lo || v > hi)
        die_usage("%s: '%s' is out of range: need %lld..%lld", flag, s, (long long)lo, (long long)hi);
    return (int64_t)v;
}

/* Sizes: at least 1, at most 2^40. */
static int64_t parse_size(const char *flag, const char *s) { return parse_int(flag, s, 1, (int64_t)1 << 40); }

/* "1,2,4": every item a size, none empty, at most max of them. */
static int parse_list(const char *flag, const char *s, int64_t *out, int max) {
    if (!s) die_usage("%s needs a value (try --help)", flag);
    char buf[32];
    int n = 0;
    for (const char *item = s;; item++) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (len == 0) die_usage("%s: '%.40s' has an empty item", flag, s);
        if (n == max) die_usage("%s: at most %d values", flag, max);
        if (len >= sizeof(buf)) die_usage("%s: '%.*s' is not a size", flag, (int)len, item);
        memcpy(buf, item, len);
        buf[len] = '\0';
        out[n++] = parse_size(flag, buf);
        if (!comma) break;
        item = comma;
    }
    return n;
}

/* The value of one of the op's own flags into a->opt (or a->seqlen). */
static void parse_op_flag(Args *a, const OpFlag *f, const char *val) {
    switch (f->kind) {
    case OPT_SIZE: a->opt[f->slot] = parse_size(f->flag, val); break;
    case OPT_SWITCH: a->opt[f->slot] = 1; break;
    case OPT_SEQLEN:  // counts as --seqlen given
        if (a->given & ARG_SEQLEN) die_usage("%s and --seqlen both give the lengths: give one", f->flag);
        a->given |= ARG_SEQLEN;
        a->nseqlen = parse_list(f->flag, val, a->seqlen, ARGS_MAX_LIST);
        break;
    case OPT_CHOICE: {
        if (!val) die_usage("%s needs one of %s", f->flag, f->choices);
        int k = 1;
        for (const char *w = f->choices;; k++) {
            size_t len = strcspn(w, "|");
            if (strlen(val) == len && strncmp(val, w, len) == 0) break;
            if (!w[len]) die_usage("%s: '%s' is not %s", f->flag, val, f->choices);
            w += len + 1;
        }
        a->opt[f->slot] = k;
        break;
    }
    }
}

void args_parse(Args *a, int argc, char **argv, unsigned allowed, const OpFlag *flags, int nflags,
                const char *summary, const char *const *csv_tables) {
    memset(a, 0, sizeof(*a));
    a->seed = 1234;
    a->reps = 20;
    const char *slash = strrchr(argv[0], '/');
    g_prog = slash ? slash + 1 : argv[0];
    for (int k = 0; k < nflags; k++)  // an op's table that the parser cannot hold is the op's error
        if (k >= 32 || (flags[k].kind != OPT_SEQLEN && (flags[k].slot < 0 || flags[k].slot >= OP_MAX_OPTS)))
            die_usage("%s: the op's flag table is out of range (at most 32 flags, each at an opt index below %d)", flags[k].flag,
                      OP_MAX_OPTS);

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(allowed, flags, nflags, summary, csv_tables);
            exit(EXIT_OK);
        }
        if (arg[0] != '-') {  // VERSION or "all"
            if (!(allowed & ARG_VERSION)) die_usage("unexpected argument '%s' (try --help)", arg);
            if (a->given & ARG_VERSION) die_usage("more than one version given ('%s')", arg);
            a->given |= ARG_VERSION;
            if (strcmp(arg, "all") == 0) { a->version = 0; continue; }
            a->version = (int)parse_int("VERSION", arg, 1, INT_MAX);
            continue;
        }
        int own = -1;  // the op's flag
        for (int k = 0; k < nflags; k++)
            if (strcmp(arg, flags[k].flag) == 0) own = k;
        if (own >= 0) {
            if (a->op_given & (1u << own)) die_usage("%s given twice", arg);
            a->op_given |= 1u << own;
            parse_op_flag(a, &flags[own], val);
            if (flags[own].kind != OPT_SWITCH) i++;
            continue;
        }
        int f = -1;
        for (int k = 0; k < NFLAGS; k++)
            if (strcmp(arg, FLAGS[k].flag) == 0) f = k;
        if (f < 0) die_usage("unknown flag '%s' (try --help)", arg);
        unsigned bit = FLAGS[f].bit;
        if (!(allowed & bit)) die_usage("flag %s is not used by this chapter (try --help)", arg);
        if (a->given & bit) die_usage("%s given twice", arg);
        a->given |= bit;
        switch (bit) {
        case ARG_CHECK: a->check = true; break;
        case ARG_BENCH: a->bench = true; break;
        case ARG_SAMPLED: a->sampled = true; break;
        case ARG_LIST: a->list = true; break;
        case ARG_NO_Z: a->no_z = true; break;
        case ARG_NO_D: a->no_D = true; break;
        case ARG_NO_BIAS: a->no_bias = true; break;
        case ARG_NO_SOFTPLUS: a->no_softplus = true; break;
        case ARG_H0: a->h0 = true; break;
        case ARG_BATCH: a->nbatch = parse_list(arg, val, a->batch, ARGS_MAX_LIST); i++; break;
        case ARG_SEQLEN: a->nseqlen = parse_list(arg, val, a->seqlen, ARGS_MAX_LIST); i++; break;
        case ARG_SEQLENS:
            a->seqlens = malloc(sizeof(int64_t) * ARGS_MAX_SEQS);
            if (!a->seqlens) die_usage("--seqlens: out of memory");
            a->nseqs = parse_list(arg, val, a->seqlens, ARGS_MAX_SEQS);
            i++;
            break;
        case ARG_DIM: a->dim = parse_size(arg, val); i++; break;
        case ARG_DSTATE: a->dstate = parse_size(arg, val); i++; break;
        case ARG_GROUPS: a->groups = parse_size(arg, val); i++; break;
        case ARG_SEED: a->seed = (uint64_t)parse_int(arg, val, 0, (int64_t)1 << 40); i++; break;
        case ARG_REPS:
            a->reps = (int)parse_int(arg, val, 20, 100000); i++;
            break;
        case ARG_CSV: case ARG_DUMP: case ARG_LOAD:
            if (!val || val[0] == '\0') die_usage("%s needs a path", arg);
            if (bit == ARG_CSV) a->csv = val;
            if (bit == ARG_DUMP) a->dump = val;
            if (bit == ARG_LOAD) a->load = val;
            i++;
            break;
        default: die_usage("flag %s not handled", arg);
        }
    }
}
