/* A problem's buffers (buffers.c): the session, a problem's tensors on the
 * host and on the device, and the functions that make, run and free them.
 * What the driver core (driver.c), the problems of a run (problems.c) and
 * the timing loop (bench.c) share; private to the harness. */
#ifndef BUFFERS_H
#define BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* The inputs as made, rounded to fp16, rounded to bf16, and as made with the
 * state (STATE_DTYPE) in int8 or e4m3 codes. */
enum { PLAIN, ROUNDED, ROUNDED_BF16, CODED_INT8, CODED_E4M3, NSETS };

/* The 8-bit code of input set `set`'s state: CODES_NONE but for the CODED sets. */
static inline Codes8 set_codes8(int set) {
    return set == CODED_INT8 ? CODES_INT8 : set == CODED_E4M3 ? CODES_E4M3 : CODES_NONE;
}

typedef struct {
    const Chapter *ch;
    const Op *op;
    int first, last;       // selected versions, 0-based inclusive
    bool gpu_skipped;      // a GPU part was skipped: no usable device
    const char *dump;      // --dump: write the last run's problem here
} Session;

/* Outputs to compare with. */
typedef struct {
    bool tried;                  // made, or found unable to run
    bool ran;                    // out holds outputs
    double *out[MAX_TENSORS];    // (table shape) fp64 per output; NULL for inputs and outputs not given
    double *scale[MAX_TENSORS];  // the oracle's only, for Op.terms_output where the op gives one: Σ|term| per element, else NULL
    double *bound[MAX_TENSORS];  // the oracle's on a CODED set only: what the 8-bit roundings may add to each element (Op.codes8_bound)
} Reference;

typedef struct {
    Problem p;
    int n;                         // tensors in the table
    TensorSpec t[MAX_TENSORS];     // the op's table for p
    float *in[NSETS][MAX_TENSORS];     // [set][k] input k (table shape) fp32; NULL for outputs, absent inputs
    void *bits[NSETS][MAX_TENSORS];    // [set][k] input k as its versions hold it (tensor_narrow): fp16 (bf16)
                                       // bits of the ROUNDED (ROUNDED_BF16) inputs of VERSION_DTYPE and of
                                       // STATE_DTYPE, a CODED set's state in 8-bit codes; else NULL
    bool rounded[NSETS];               // in[set] and bits[set] are made
    Reference oracle[NSETS];           // per input set
    Reference prev[3][NSETS];          // prev_cpu, prev_gpu[0], prev_gpu[1], per input set
    Reference given;               // outputs read by --load
} HostProblem;

/* One problem on the device in a version's dtype, allocated through the tracker. */
typedef struct {
    void *t[MAX_TENSORS];   // (table shape) in the version's dtype; NULL where absent
    void *ws;               // workspace, NULL when none
} DeviceProblem;

/* ---- sizes and text ---- */

/* An input of the op's table (optional or not). */
static inline bool is_input(const TensorSpec *t) { return t->role != OUTPUT; }
/* An output this problem has (e.g. chunk states only where sequences are packed). */
static inline bool is_output(const TensorSpec *t) { return t->role == OUTPUT && t->present; }

/* The op's table for p, once the op has accepted p (exit 2 otherwise) and
 * every tensor's element count fits (mul exits 2 on overflow). */
int problem_table(const Op *op, const Problem *p, TensorSpec *t);
/* Minimal bytes of one forward: each input read once, each output written once. */
double problem_bytes(const TensorSpec *t, int n, DType dt);
/* "z+D+bias+softplus+h0" ("Dhp": D of shape (h, p)), "none" without any. */
void flags_text(const Op *op, const Problem *p, char *buf, size_t len);
/* The dtype of x, dt, B, C, y...: a 16-bit state shows in the version's
 * name; an 8-bit state's code stands for the version (its I/O is fp32). */
const char *dtype_name(DType dt);

/* ---- the session ---- */

/* Version i (0-based) of the chapter's array of the op's version type. */
const VersionInfo *version_at(const Session *se, int i);
/* Which input set (PLAIN, ROUNDED, ...) a version reads. */
int input_set(const Session *se, const VersionInfo *v);
/* The tolerance of the op for the version's dtype. */
Tol version_tol(const Session *se, const VersionInfo *v);

/* ---- a problem on the host ---- */

/* The tensors of one run on the host in table order, as the op takes them:
 * inputs of one set, outputs out[k] (fp32; out NULL: none). */
void host_view(const HostProblem *hp, int set, float *const *out, void **t);
/* Makes input set `set` (rounding the inputs) if not made yet. */
void need_inputs(HostProblem *hp, int set);
/* Random inputs in the op's ranges, drawn in table order from one seed. */
void host_random(const Session *se, HostProblem *hp, const Problem *p, uint64_t seed);
void host_free(HostProblem *hp);
/* Host room for a run's outputs, fp32 in table order (NULL for inputs). */
void outputs_alloc(const HostProblem *hp, float **out);
void outputs_free(const HostProblem *hp, float **out);
/* Whether the oracle gives Σ|term| on input set `set`. */
bool of_terms(const Session *se, int set);
/* Keep fp32 outputs x (table order; NULL where none) as fp64 in r; free r. */
void reference_keep(const HostProblem *hp, Reference *r, float *const *x);
void reference_free(Reference *r);
/* A CPU version on host tensors: the op's run, or with split its second
 * way (run_split); the reason that does not apply, else NULL. */
const char *run_cpu_as(const Session *se, const VersionInfo *v, HostProblem *hp, int set, float **out, bool split);
/* A CPU version on host arrays in its dtype; outputs widened to fp32 in out. */
void run_cpu(const Session *se, const VersionInfo *v, HostProblem *hp, int set, float **out);

/* ---- a problem on the device ---- */

/* Bytes a version needs on the device for p: tensors and workspace. */
size_t device_bytes(const Op *op, const VersionInfo *v, const Problem *p, const TensorSpec *t, int n);
/* Exit 2 naming the bytes needed and free. */
void device_too_small(const Op *op, const VersionInfo *v, const Problem *p, size_t need, size_t free_b);
/* Before any allocation of problem p (its tensors t, n of them): exit 2
 * where its device bytes (device_budget) or its host bytes (inputs in fp32,
 * outputs twice) are more than the device's free memory or the machine's. */
void problem_budget(const Session *se, const Problem *p, const TensorSpec *t, int n);
/* Exit 2 (device_too_small) when even the smallest of the session's GPU
 * versions that take p needs more device memory than is free: before any
 * allocation, as host_budget does for host memory. */
void device_budget(const Session *se, const Problem *p);
/* Input k of one set into dst (device), in the version's dtype dt. */
void upload_input(void *dst, const HostProblem *hp, int k, int set, DType dt);
/* Allocates and uploads every tensor of input set `set` for version v. */
void device_problem(DeviceProblem *d, const Op *op, const VersionInfo *v, const HostProblem *hp, int set);
/* Fill the outputs with NaN so a kernel that skips an element cannot pass. */
void device_poison(const DeviceProblem *d, const HostProblem *hp, DType dt);
/* The outputs back to the host, widened to fp32. */
void device_outputs(const DeviceProblem *d, const HostProblem *hp, DType dt, float **out);
void device_free(DeviceProblem *d);
/* The same buffers with the op's loop output written over its loop input
 * (the decode state updated in place). */
DeviceProblem in_place_view(const Op *op, const DeviceProblem *d);

#endif
