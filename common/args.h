/* The one command line every chapter shares (docs/design.md §5):
 *   build/<chapter> [VERSION|all] [--check] [--bench [--sampled]] [--list] [--batch 1,2,4]
 *     [--dim D] [--dstate N] [--seqlen 512,2048] [--seqlens 1000,37,4096]
 *     [--groups G] [--no-z] [--no-D] [--no-bias] [--no-softplus] [--h0]
 *     [the op's own flags] [--seed S]
 *     [--reps R] [--csv FILE] [--dump DIR] [--load DIR] [--help]
 * A chapter passes the set of common flags it uses and its op's own flags
 * (OpFlag, declared in ops/<op>/op_<op>.c); any other flag is an error. */
#ifndef ARGS_H
#define ARGS_H

#include <stdbool.h>
#include <stdint.h>

enum {
    ARG_CHECK = 1u << 0, ARG_BENCH = 1u << 1, ARG_LIST = 1u << 2,
    ARG_BATCH = 1u << 3, ARG_DIM = 1u << 4, ARG_DSTATE = 1u << 5,
    ARG_SEQLEN = 1u << 6, ARG_GROUPS = 1u << 9, ARG_SAMPLED = 1u << 11,
    ARG_NO_Z = 1u << 12, ARG_NO_D = 1u << 13, ARG_NO_BIAS = 1u << 14,
    ARG_NO_SOFTPLUS = 1u << 15, ARG_H0 = 1u << 16, ARG_SEED = 1u << 20,
    ARG_REPS = 1u << 21, ARG_CSV = 1u << 22, ARG_DUMP = 1u << 23,
    ARG_LOAD = 1u << 24, ARG_VERSION = 1u << 25, ARG_SEQLENS = 1u << 27,
};

#define ARGS_MAX_LIST 16
#define ARGS_MAX_SEQS 100000  // --seqlens: sequences of one packed problem
#define OP_MAX_OPTS 8         // Problem.opt: an op's own sizes and switches

/* A flag of an operation's own, declared in its table (Op.flags): the
 * harness parses it, lists it in --help and copies its value into
 * Problem.opt[slot] of every problem the command line makes. */
typedef enum {
    OPT_SIZE,    // "--heads H": an integer >= 1
    OPT_SWITCH,  // "--hydra": 1 when given
    OPT_CHOICE,  // "--form m1|m2": the k-th word of choices gives k (from 1)
    OPT_SEQLEN,  // "--tokens T[,T...]": the op's name for --seqlen's list (no slot)
} OptKind;

typedef struct {
    const char *flag;     // "--heads"
    const char *help;     // "H  heads" (--help's line)
    OptKind kind;
    int slot;             // the Problem.opt index it sets
    const char *choices;  // OPT_CHOICE: "m1|m2"
    bool shape;           // a size: given, the command line's grid replaces the built-in problems
    bool picks;           // not a size: given, the built-in problems are those whose opt[slot] equals it
    bool groups_split;    // what --groups must divide (when set; else --dim)
    const char *tag;      // the check line's and CSV's flags: "hydra" (switch on), "slots" + the size (nonzero)
} OpFlag;

typedef struct {
    unsigned given;                 // ARG_* bits of the flags that appeared
    unsigned op_given;              // bit k: the op's flag k appeared (an op has at most 32)
    int version;                    // VERSION, 0 for "all" or none given
    bool check, bench, sampled, list;  // sampled: --bench checks 64 rows, times nothing
    int64_t batch[ARGS_MAX_LIST];   int nbatch;
    int64_t seqlen[ARGS_MAX_LIST];  int nseqlen;  // --seqlen, or the op's OPT_SEQLEN flag
    int64_t *seqlens;               int nseqs;    // --seqlens: one packed problem (malloc'd)
    int64_t dim, dstate, groups;
    int64_t opt[OP_MAX_OPTS];       // the op's own flags' values, at their slots
    bool no_z, no_D, no_bias, no_softplus, h0;
    uint64_t seed;
    int reps;
    const char *csv, *dump, *load;
} Args;

/* The most tables a chapter writes beside --csv FILE (Chapter.csv_tables). */
#define CSV_MAX_TABLES 3

/* Parse argv against the common flags in `allowed` and the op's nflags own
 * flags. --help prints usage (naming the csv_tables, NULL-ended, that --csv
 * FILE also writes; csv_tables may be NULL) and exits 0. Anything wrong (unknown flag,
 * a flag outside `allowed`, missing or non-numeric value, a size < 1) prints
 * one line "<prog>: <what is wrong> (try --help)" and exits 2. */
void args_parse(Args *a, int argc, char **argv, unsigned allowed, const OpFlag *flags, int nflags,
                const char *summary, const char *const *csv_tables);

/* Exit 2 with one formatted line "<prog>: <message>". */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The program name (argv[0] basename), set by args_parse. */
extern const char *g_prog;

#endif
