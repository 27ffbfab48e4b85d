/* The timing loop of the driver core (bench.h): every GPU
 * version of a problem checked on sampled rows and timed with the L2 flushed
 * (the token loop too, where the op has one), one CSV row per version; and
 * the CPU versions timed by the wall clock for a reader without a GPU. */
#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csv.h"
#include "floors.h"
#include "gpu.h"

typedef struct {
    const Op *op;
    const VersionInfo *v;
    const Problem *p;
    DeviceProblem *d;
} RunCtx;

static void run_ctx(void *ctx) {
    RunCtx *c = ctx;
    c->op->run(c->v, c->p, c->d->t, c->d->ws);
}

/* The device's outputs against the oracle on a sample of 64 rows (all rows
 * when fewer). */
static CheckResult validate_rows(const Session *se, const RunCtx *c, const HostProblem *hp, int set, Tol tol) {
    float *out[MAX_TENSORS];  // the device's outputs, fp32
    outputs_alloc(hp, out);
    device_outputs(c->d, hp, c->v->dtype, out);
    void *t[MAX_TENSORS];     // inputs and those outputs
    host_view(hp, set, out, t);
    /* 64 rows spread from the first to the last (whose elements sit at the
     * largest offsets of every tensor), or every row when fewer. */
    int64_t rows = se->op->rows(&hp->p), nsample = rows < 64 ? rows : 64;
    /* The rows are independent (each check_row allocates its own buffers), so they run on
     * every core where OpenMP is built in: at a million tokens a row's oracle takes seconds.
     * They are merged in row order, so the result does not depend on the threads. */
    CheckResult part[64];
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int64_t k = 0; k < nsample; k++) {
        const int64_t row = nsample < rows ? k * (rows - 1) / (nsample - 1) : k;
        part[k] = se->op->check_row(&hp->p, t, row, tol);
        part[k].row = row;
    }
    CheckResult all = part[0];
    for (int64_t k = 1; k < nsample; k++) all = check_rows_merge(all, part[k]);
    outputs_free(hp, out);
    return all;
}

/* The token loop as it really runs (decode): the state updated in place,
 * LOOP_STEPS steps back to back with no L2 flush between them (the state
 * stays in L2 where it fits), launched one by one and as one CUDA graph. One
 * in-place step from the problem's state is checked against the oracle before
 * the timed loops and again after them (the state restored first). Rows like
 * the L2-flushed `row`, ms per step, flags "+loop" and "+loop+graph". */
#define LOOP_STEPS 256

/* One run of c's version into outputs poisoned first (d: the problem whose
 * outputs they are; c may run on an in-place view of it), checked on rows. */
static CheckResult poisoned_run(const Session *se, RunCtx *c, const DeviceProblem *d, const HostProblem *hp, int set,
                                Tol tol) {
    device_poison(d, hp, c->v->dtype);
    run_ctx(c);
    gpu_sync();
    return validate_rows(se, c, hp, set, tol);
}

static void token_loop(Session *se, const RunCtx *c, const HostProblem *hp, int set, Tol tol, const CsvRow *row,
                       const char *csv) {
    const Op *op = se->op;
    DeviceProblem in_place = in_place_view(op, c->d);
    RunCtx lc = {op, c->v, c->p, &in_place};
    CheckResult before = poisoned_run(se, &lc, c->d, hp, set, tol);
    for (int graph = 0; graph <= 1; graph++) {
        Timing tm = gpu_time_loop(run_ctx, &lc, LOOP_STEPS, graph, 20);
        char flags[80];
        snprintf(flags, sizeof(flags), "%s+loop%s", row->flags, graph ? "+graph" : "");
        CsvRow r = *row;
        r.flags = flags;
        r.ms_median = tm.median_ms, r.ms_min = tm.min_ms;
        r.gbps = r.bytes / (tm.median_ms * 1e-3) / 1e9;
        r.time_over_floor = tm.median_ms / r.floor_ms;
        printf("     %-26s %d steps %-14s %9.4f ms/step %7.1f GB/s  (no L2 flush between steps)\n", "",
               LOOP_STEPS, graph ? "in a CUDA graph" : "launched one by one", r.ms_median, r.gbps);
        if (csv) csv_append(csv, &r);
    }
    upload_input(in_place.t[op->loop_input], hp, op->loop_input, set, c->v->dtype);
    CheckResult after = poisoned_run(se, &lc, c->d, hp, set, tol);
    char label[256];
    snprintf(label, sizeof(label), "%s in place (%s = %s), before and after the loops, vs oracle", c->v->name,
             hp->t[op->loop_output].name, hp->t[op->loop_input].name);
    check_report(label, check_merge(before, after), tol);
}

/* "<n> <version> b<batch> L<seqlen> <what> vs oracle (64 rows)": a check of
 * validate_rows' sample. */
static void sampled_label(char *label, size_t len, int i, const VersionInfo *v, const Problem *p, const char *what,
                          int64_t rows) {
    snprintf(label, len, "%d %s b%lld L%lld %s vs oracle (%s rows)", i + 1, v->name, (long long)p->batch,
             (long long)p->seqlen, what, rows < 64 ? "all" : "64");
}

/* The inputs are drawn once, when the first version that can run p needs
 * them: a problem no selected version takes (a packed one) costs nothing. */
static void bench_problem(Session *se, const Problem *p, uint64_t seed, int reps, const char *csv, bool sampled) {
    const Op *op = se->op;
    TensorSpec t[MAX_TENSORS];  // p's table, for the device bytes before any input is drawn
    const int nt = problem_table(op, p, t);
    HostProblem hp;
    bool drawn = false;
    const Floors *fl = floors_get();
    char shape[128], flags[64], label[256];
    op->bench_text(p, shape, sizeof(shape));
    flags_text(op, p, flags, sizeof(flags));
    for (int i = se->first; i <= se->last; i++) {
        const VersionInfo *v = version_at(se, i);
        if (!v->gpu) continue;
        const char *why = op->unsupported(v, p);
        printf("  %2d %-26s %s %s", i + 1, v->name, dtype_name(v->dtype), shape);
        if (why) { printf(" SKIP (%s)\n", why); continue; }
        size_t need = device_bytes(op, v, p, t, nt), free_b = gpu_free_bytes();
        if (need > free_b) {
            printf(" SKIP (needs %.1f MiB of device memory, %.1f MiB free)\n", need / 1048576.0, free_b / 1048576.0);
            continue;
        }
        fflush(stdout);
        if (!drawn) {
            host_random(se, &hp, p, seed);
            drawn = true;
        }
        int set = input_set(se, v);
        Tol tol = version_tol(se, v);
        need_inputs(&hp, set);
        DeviceProblem d;
        device_problem(&d, op, v, &hp, set);
        RunCtx ctx = {op, v, p, &d};
        if (sampled) {  // --sampled (make check-long): one run into poisoned outputs, checked, not timed
            CheckResult once = poisoned_run(se, &ctx, &d, &hp, set, tol);
            printf(" run once\n");
            sampled_label(label, sizeof(label), i, v, p, "output", op->rows(p));
            check_report(label, once, tol);
            device_free(&d);
            continue;
        }
        run_ctx(&ctx);
        gpu_sync();
        CheckResult before = validate_rows(se, &ctx, &hp, set, tol);
        Timing tm = gpu_time(run_ctx, &ctx, reps, op->per_thread && op->per_thread(v));
        CheckResult r = check_merge(before, poisoned_run(se, &ctx, &d, &hp, set, tol));
        double bytes = problem_bytes(hp.t, hp.n, v->dtype), exps = op->exps(p);
        if (op->bytes) {
            void *inputs[MAX_TENSORS];  // the op's table: inputs of this set, outputs NULL
            host_view(&hp, set, NULL, inputs);
            bytes = op->bytes(p, hp.t, inputs, bytes, v->dtype);
        }
        double flops = op->flops ? op->flops(p) : 0.0, fms = floor_ms(fl, bytes, exps, flops);
        CsvRow row = {se->ch->name, v->name, dtype_name(v->dtype), flags, i + 1, op->csv_columns, {0}, 0,
                      tm.median_ms, tm.min_ms, bytes, exps, flops, bytes / (tm.median_ms * 1e-3) / 1e9,
                      fl->bw_gbps, fl->exp_rate, fms, tm.median_ms / fms, mem_peak_mib(),
                      mem_workspace_mib(), r.rel_l2};
        row.nsizes = op->csv_sizes(p, row.sizes);
        printf(" %9.4f ms %7.1f GB/s  floor %.4f ms  x%5.2f  peak %8.1f MiB  ws %8.1f MiB\n",
               row.ms_median, row.gbps, fms, row.time_over_floor, row.peak_mib, row.workspace_mib);
        sampled_label(label, sizeof(label), i, v, p, "timed output", op->rows(p));
        check_report(label, r, tol);
        if (csv) csv_append(csv, &row);
        if (op->loops && op->loops(v, p)) token_loop(se, &ctx, &hp, set, tol, &row, csv);
        device_free(&d);
    }
    if (drawn) host_free(&hp);
}

/* What a reader without a GPU sees timed: every CPU version of the chapter on
 * the first of its quick shapes at batch 1 and at most 512 tokens (06's CPU
 * versions take half a minute each at 8192), the median of 3 runs by the wall
 * clock (no CSV: the committed rows are the GPU's). */
void cpu_timing(Session *se, const Problem *problems, int n, uint64_t seed) {
    bool any_cpu = false;
    for (int k = se->first; k <= se->last; k++) any_cpu |= !version_at(se, k)->gpu;
    if (!any_cpu || n == 0) return;
    Problem p = problems[0];
    p.batch = 1;
    if (p.seqlen > 512) p.seqlen = 512;
    HostProblem hp;
    host_random(se, &hp, &p, seed);
    char shape[128];
    se->op->bench_text(&p, shape, sizeof(shape));
    printf("\ntiming of the CPU versions on this machine (median of 3 runs, wall clock)\n");
    for (int i = se->first; i <= se->last; i++) {
        const VersionInfo *v = version_at(se, i);
        if (v->gpu) continue;
        printf("  %2d %-26s %s %s", i + 1, v->name, dtype_name(v->dtype), shape);
        const char *why = se->op->unsupported(v, &p);
        if (why) { printf(" SKIP (%s)\n", why); continue; }
        int set = input_set(se, v);
        need_inputs(&hp, set);
        float *out[MAX_TENSORS] = {NULL};
        double ms[3];
        for (int r = 0; r < 3; r++) {
            outputs_alloc(&hp, out);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            run_cpu(se, v, &hp, set, out);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
            outputs_free(&hp, out);
        }
        for (int a = 0; a < 3; a++)  // sort the three
            for (int b = a + 1; b < 3; b++)
                if (ms[b] < ms[a]) { double x = ms[a]; ms[a] = ms[b]; ms[b] = x; }
        printf(" %10.3f ms\n", ms[1]);
    }
    host_free(&hp);
}

void bench(Session *se, const Problem *problems, int n, const Args *a, bool quick) {
    bool any_gpu = false;
    for (int k = se->first; k <= se->last; k++) any_gpu |= version_at(se, k)->gpu;
    if (!any_gpu) {
        printf("bench: no GPU version %s; nothing timed\n", se->first == se->last ? "selected" : "in this chapter yet");
        return;
    }
    if (!gpu_available()) {
        printf("bench: GPU rows need a CUDA device (%s); nothing timed, no CSV written\n",
               gpu_unavailable_reason());
        se->gpu_skipped = true;
        return;
    }
    /* Fail before any work if no version can fit a problem on the device
     * (exit 2); a version that alone does not fit is skipped in its row. */
    for (int i = 0; i < n; i++) device_budget(se, &problems[i]);
    const Floors *fl = floors_get();
    printf("\n%s on %s (copy %.0f GB/s, exp2 %.3g/s", quick ? "timing" : a->sampled ? "sampled checks" : "bench",
           gpu_name(), fl->bw_gbps, fl->exp_rate);
    if (se->op->flops) printf(", matrix %.0f TFLOP/s", fl->matrix_tflops);
    printf(" measured; commit %s)\n", commit_id());
    for (int i = 0; i < n; i++) bench_problem(se, &problems[i], a->seed, a->reps, quick ? NULL : a->csv, a->sampled);
}
