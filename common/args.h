/* The one command line every chapter shares (docs/design.md §5):
 *   build/<chapter> [VERSION|all] [--check] [--bench [--sampled]] [--list] [--batch 1,2,4]
 *     [--dim D] [--dstate N] [--seqlen 512,2048] [--seqlens 1000,37,4096]
 *     [--heads H] [--headdim P]
 *     [--groups G] [--chunk Q] [--no-z] [--no-D] [--no-bias]
 *     [--no-softplus] [--h0] [--hydra] [--form m1|m2] [--tokens T] [--slots S]
 *     [--intermediate] [--seed S]
 *     [--reps R] [--csv FILE] [--dump DIR] [--load DIR] [--help]
 * A chapter passes the set of flags it uses; any other flag is an error. */
#ifndef ARGS_H
#define ARGS_H

#include <stdbool.h>
#include <stdint.h>

enum {
    ARG_CHECK = 1u << 0, ARG_BENCH = 1u << 1, ARG_LIST = 1u << 2,
    ARG_BATCH = 1u << 3, ARG_DIM = 1u << 4, ARG_DSTATE = 1u << 5,
    ARG_SEQLEN = 1u << 6, ARG_HEADS = 1u << 7, ARG_HEADDIM = 1u << 8,
    ARG_GROUPS = 1u << 9, ARG_CHUNK = 1u << 10, ARG_SAMPLED = 1u << 11,
    ARG_NO_Z = 1u << 12, ARG_NO_D = 1u << 13, ARG_NO_BIAS = 1u << 14,
    ARG_NO_SOFTPLUS = 1u << 15, ARG_H0 = 1u << 16, ARG_HYDRA = 1u << 17,
    ARG_FORM = 1u << 18, ARG_SEED = 1u << 20,
    ARG_REPS = 1u << 21, ARG_CSV = 1u << 22, ARG_DUMP = 1u << 23,
    ARG_LOAD = 1u << 24, ARG_VERSION = 1u << 25, ARG_TOKENS = 1u << 26, ARG_SEQLENS = 1u << 27,
    ARG_SLOTS = 1u << 28, ARG_INTERMEDIATE = 1u << 29,
};

#define ARGS_MAX_LIST 16
#define ARGS_MAX_SEQS 100000  // --seqlens: sequences of one packed problem

typedef struct {
    unsigned given;                 // ARG_* bits of the flags that appeared
    int version;                    // VERSION, 0 for "all" or none given
    bool check, bench, sampled, list;  // sampled: --bench checks 64 rows, times nothing
    int64_t batch[ARGS_MAX_LIST];   int nbatch;
    int64_t seqlen[ARGS_MAX_LIST];  int nseqlen;  // --seqlen, or --tokens (decode)
    int64_t *seqlens;               int nseqs;    // --seqlens: one packed problem (malloc'd)
    int64_t dim, dstate, heads, headdim, groups, chunk, slots;
    bool no_z, no_D, no_bias, no_softplus, h0, hydra, intermediate;
    int form;                       // 1 (m1) or 2 (m2); 0 when not given
    uint64_t seed;
    int reps;
    const char *csv, *dump, *load;
} Args;

/* Parse argv. --help prints usage and exits 0. Anything wrong (unknown flag,
 * a flag outside `allowed`, missing or non-numeric value, a size < 1) prints
 * one line "<prog>: <what is wrong> (try --help)" and exits 2. */
void args_parse(Args *a, int argc, char **argv, unsigned allowed, const char *summary);

/* Exit 2 with one formatted line "<prog>: <message>". */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The program name (argv[0] basename), set by args_parse. */
extern const char *g_prog;

#endif
