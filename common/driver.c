/* The driver core: checks and --dump/--load for any operation (driver.h).
 * A problem's buffers are made in buffers.c, the problems of a run in
 * problems.c, the timing loop and CSV rows in bench.c; this file calls them
 * and none of them calls back. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "buffers.h"
#include "csv.h"
#include "fixture.h"
#include "gpu.h"
#include "problems.h"

/* How check_problem runs a version: once; in place (GPU, ops with loops: the
 * loop output over its loop input); or the op's second way (run_split). */
typedef enum { RUN_ONCE, RUN_IN_PLACE, RUN_SPLIT } RunMode;

/* Run version v on one input set (CPU or GPU); outputs fp32 in out. Returns
 * NULL, or why the op's second way does not apply (out then unwritten). */
static const char *run_version(const Session *se, const VersionInfo *v, HostProblem *hp, int set, RunMode mode,
                               float **out) {
    need_inputs(hp, set);
    if (!v->gpu) return run_cpu_as(se, v, hp, set, out, mode == RUN_SPLIT);
    DeviceProblem d;
    device_problem(&d, se->op, v, hp, set);
    device_poison(&d, hp, v->dtype);
    DeviceProblem view = mode == RUN_IN_PLACE ? in_place_view(se->op, &d) : d;
    const char *why = NULL;
    if (mode == RUN_SPLIT) why = se->op->run_split(v, &hp->p, view.t, true);
    else se->op->run(v, &hp->p, view.t, view.ws);
    if (!why) {
        gpu_sync();
        device_outputs(&view, hp, v->dtype, out);
    }
    device_free(&d);
    return why;
}

/* ------------------------------------------------------------- dump, load */

/* The inputs of one set and the outputs out of a version of dtype dt. */
static void dump_problem(const Session *se, const HostProblem *hp, int set, float *const *out, DType dt) {
    const float *x[MAX_TENSORS];  // what each file holds
    for (int k = 0; k < hp->n; k++) x[k] = is_input(&hp->t[k]) ? hp->in[set][k] : out[k];
    char meta[256];
    se->op->meta_text(&hp->p, meta, sizeof(meta));
    folder_write(se->dump, hp->t, hp->n, x, dt, meta);
}

/* --load DIR: the op's tensors by name (a missing optional input is off),
 * the problem as the op reads it from the shapes and meta.json, every file's
 * shape checked against its table. Outputs the folder holds go to hp->given. */
static void load_problem(const Session *se, const char *dir, HostProblem *hp) {
    TensorSpec names[MAX_TENSORS];  // the table's names and roles; its sizes are not used
    int n = se->op->tensors(&se->op->check_base, names);
    LoadFolder f;
    float *file[MAX_TENSORS];       // (its shape) fp32, what each file held; NULL where absent
    folder_read(&f, dir, names, n);
    memset(hp, 0, sizeof(*hp));
    se->op->infer(&hp->p, &f);
    hp->n = problem_table(se->op, &hp->p, hp->t);
    folder_expect_shapes(&f, hp->t, hp->n);
    problem_budget(se, &hp->p, hp->t, hp->n);
    // only once every shape is what the problem expects; NaN or inf in the inputs lets the
    // check match the reference's
    check_inputs_finite(folder_read_data(&f, names, n, file));
    reference_keep(hp, &hp->given, file);
    for (int k = 0; k < hp->n; k++) {
        if (is_input(&hp->t[k])) hp->in[PLAIN][k] = file[k];
        else free(file[k]);
    }
    if (se->op->from_loaded) {
        void *t[MAX_TENSORS];  // the inputs read
        host_view(hp, PLAIN, NULL, t);
        se->op->from_loaded(&hp->p, t);
        problem_table(se->op, &hp->p, hp->t);  // the same tensors, sizes the data completed
    }
    folder_notes(&f);
}

/* ------------------------------------------------------------------ checks */

/* Every output the reference holds against got, merged into one result. */
/* got against ref; rtol of the oracle's Σ|term| where the op gives one and
 * tol takes it (the same problem's magnitudes serve every reference it is
 * compared with). */
static CheckResult compare(const HostProblem *hp, float *const *got, const Reference *ref, const Reference *oracle_ref,
                           Tol tol) {
    CheckResult all = {0.0, 0.0, 0, 0, true, 0, false, 0.0, 0, 0.0, 0.0, false, -1};
    bool first = true;
    for (int k = 0; k < hp->n; k++) {
        if (!ref->out[k]) continue;
        CheckResult r = compare_f32_bounded(got[k], ref->out[k], tol.of_terms ? oracle_ref->scale[k] : NULL,
                                            tol.codes8 ? oracle_ref->bound[k] : NULL, tensor_numel(&hp->t[k]), tol);
        all = first ? r : check_merge(all, r);
        first = false;
    }
    return all;
}

/* The fp64 oracle on one input set. */
static const Reference *oracle(const Session *se, HostProblem *hp, int set) {
    Reference *r = &hp->oracle[set];
    if (r->ran) return r;
    need_inputs(hp, set);
    for (int k = 0; k < hp->n; k++)
        if (is_output(&hp->t[k])) r->out[k] = host_alloc(tensor_numel(&hp->t[k]) * 8, "oracle output");
    void *t[MAX_TENSORS];  // the inputs of the set
    host_view(hp, set, NULL, t);
    if (of_terms(se, set)) {
        const int k = se->op->terms_output;
        r->scale[k] = host_alloc(tensor_numel(&hp->t[k]) * 8, "oracle magnitudes");
        se->op->oracle_terms(&hp->p, t, r->out, r->scale[k]);
    } else {
        se->op->oracle(&hp->p, t, r->out);
    }
    if (set_codes8(set) && se->op->codes8_bound) {
        for (int k = 0; k < hp->n; k++)
            if (is_output(&hp->t[k])) r->bound[k] = host_alloc(tensor_numel(&hp->t[k]) * 8, "rounding bounds");
        se->op->codes8_bound(&hp->p, t, set_codes8(set), r->bound);
    }
    r->tried = r->ran = true;
    return r;
}

/* Previous stage `slot` (0 prev_cpu, 1 and 2 prev_gpu) on the inputs a
 * version of set `set` saw; not ran when it cannot run this shape here. */
static const Reference *previous(const Session *se, HostProblem *hp, int slot, const VersionInfo *prev, int set) {
    if (prev->dtype != DT_FP32) set = input_set(se, prev);  // a 16-bit stage reads its own rounding
    Reference *r = &hp->prev[slot][set];
    if (r->tried) return r;
    r->tried = true;
    if (se->op->unsupported(prev, &hp->p) || (prev->gpu && !gpu_available())) return r;
    float *out[MAX_TENSORS];  // the previous stage's outputs, fp32
    outputs_alloc(hp, out);
    run_version(se, prev, hp, set, RUN_ONCE, out);
    reference_keep(hp, r, out);
    outputs_free(hp, out);
    return r;
}

/* Check every selected version on one problem against the oracle and the
 * previous stages (and against the outputs --load read, when it read any). */
static void check_problem(Session *se, HostProblem *hp) {
    const Chapter *ch = se->ch;
    char shape[160], flags[64], given[128] = "", label[256];
    se->op->shape_text(&hp->p, shape, sizeof(shape));
    flags_text(se->op, &hp->p, flags, sizeof(flags));
    snprintf(label, sizeof(label), "%s %s", shape, flags);
    check_heading(label);
    for (int k = 0; k < hp->n; k++)  // "y, last_state": the outputs --load read
        if (hp->given.out[k])
            snprintf(given + strlen(given), sizeof(given) - strlen(given), "%s%s", given[0] ? ", " : "", hp->t[k].name);
    const VersionInfo *prevs[3] = {ch->prev_cpu, ch->prev_gpu[0], ch->prev_gpu[1]};

    float *out[MAX_TENSORS] = {NULL}, *last[MAX_TENSORS] = {NULL};  // fp32 outputs of this run, of the last one
    const VersionInfo *last_v = NULL;
    int last_set = PLAIN;
    for (int i = se->first; i <= se->last; i++) {
        const VersionInfo *v = version_at(se, i);
        int set = input_set(se, v);
        Tol tol = version_tol(se, v);
        snprintf(label, sizeof(label), "%d %s vs oracle", i + 1, v->name);
        if (v->gpu && !gpu_available()) {  // said once, at the end (gpu_skips_line)
            check_skip_quiet();
            se->gpu_skipped = true;
            continue;
        }
        const char *why = se->op->unsupported(v, &hp->p);
        if (why) { check_skip(label, why); continue; }
        outputs_alloc(hp, out);
        run_version(se, v, hp, set, RUN_ONCE, out);
        check_report(label, compare(hp, out, oracle(se, hp, set), oracle(se, hp, set), tol), tol);
        if (hp->given.ran) {
            snprintf(label, sizeof(label), "%d %s vs loaded %s", i + 1, v->name, given);
            check_report(label, compare(hp, out, &hp->given, oracle(se, hp, set), tol), tol);
        }
        for (int k = v->gpu ? 1 : 0; k < (v->gpu ? 3 : 1); k++) {
            if (!prevs[k] || prevs[k] == v) continue;
            snprintf(label, sizeof(label), "%d %s vs %s", i + 1, v->name, prevs[k]->name);
            const Reference *r = previous(se, hp, k, prevs[k], set);
            if (r->ran) check_report(label, compare(hp, out, r, oracle(se, hp, set), tol), tol);
            else check_skip(label, "previous stage cannot run this shape here");
        }
        if (v->gpu && se->op->loops && hp->t[se->op->loop_input].present) {  // in place needs the input there
            float *again[MAX_TENSORS] = {NULL};  // fp32 outputs of the in-place run
            outputs_alloc(hp, again);
            run_version(se, v, hp, set, RUN_IN_PLACE, again);
            snprintf(label, sizeof(label), "%d %s in place (%s = %s) vs oracle", i + 1, v->name,
                     hp->t[se->op->loop_output].name, hp->t[se->op->loop_input].name);
            check_report(label, compare(hp, again, oracle(se, hp, set), oracle(se, hp, set), tol), tol);
            outputs_free(hp, again);
        }
        if (se->op->run_split) {
            float *split[MAX_TENSORS] = {NULL};  // fp32 outputs of the smaller launches
            outputs_alloc(hp, split);
            snprintf(label, sizeof(label), "%d %s as %s vs one launch", i + 1, v->name, se->op->split_what);
            const char *why_not = run_version(se, v, hp, set, RUN_SPLIT, split);
            if (why_not) {
                if (why_not[0]) check_skip(label, why_not);
            } else {
                Reference one = {0};  // this version's one launch, as the reference
                reference_keep(hp, &one, out);
                /* 8-bit codes round alike however the tokens are launched (their
                 * stochastic roundings are keyed on the token): the same codes. */
                const Tol split_tol = tol.codes8 ? TOLERANCES[TOL_EXACT] : tol;
                check_report(label, compare(hp, split, &one, oracle(se, hp, set), split_tol), split_tol);
                reference_free(&one);
            }
            outputs_free(hp, split);
        }
        outputs_free(hp, last);
        memcpy(last, out, sizeof(out));
        last_v = v;
        last_set = set;
    }
    if (se->dump && last_v) dump_problem(se, hp, last_set, last, last_v->dtype);
    else if (se->dump) printf("--dump: no version ran, nothing written to %s\n", se->dump);
    outputs_free(hp, last);
}

/* One line for the GPU versions' checks skipped on a machine without a
 * usable GPU: "GPU versions 4-21: 205 checks skipped (no CUDA driver ...)". */
static void gpu_skips_line(const Session *se) {
    check_flush();
    if (check_quiet_skips() == 0) return;
    char versions[160] = "";
    for (int i = se->first; i <= se->last; i++) {
        if (!version_at(se, i)->gpu || (i > se->first && version_at(se, i - 1)->gpu)) continue;
        int j = i;  // the end of this run of GPU versions
        while (j < se->last && version_at(se, j + 1)->gpu) j++;
        size_t used = strlen(versions);
        snprintf(versions + used, sizeof(versions) - used, "%s%d", used ? ", " : "", i + 1);
        used = strlen(versions);
        if (j > i) snprintf(versions + used, sizeof(versions) - used, "-%d", j + 1);
    }
    printf("GPU version%s %s: %d checks skipped (%s)\n", strchr(versions, '-') || strchr(versions, ',') ? "s" : "",
           versions, check_quiet_skips(), gpu_unavailable_reason());
}

/* ------------------------------------------------------------------- main */

static void list_versions(const Session *se) {
    for (int i = 0; i < se->ch->nversions; i++) {
        const VersionInfo *v = version_at(se, i);
        printf("%3d  %-4s %-4s %-28s %s\n", i + 1, v->gpu ? "gpu" : "cpu", dtype_name(v->dtype), v->name, v->what);
    }
}

/* The output paths, before any work: --csv takes --bench's rows and must be
 * writable, --dump a --check or --load run's problem, and the two differ. */
static void check_output_paths(const Chapter *ch, const Args *a) {
    if (a->csv && !a->bench) die_usage("--csv takes the rows of --bench: add --bench, or drop --csv");
    if (a->sampled && !a->bench) die_usage("--sampled checks --bench's shapes on 64 rows: add --bench");
    if (a->sampled && a->csv) die_usage("--sampled times nothing, so it writes no rows: drop --csv");
    if (a->sampled && (a->given & ARG_REPS)) die_usage("--sampled times nothing: drop --reps");
    if (a->dump && a->bench && !a->check && !a->load)
        die_usage("--dump writes the problem that --check or --load checks, not --bench's: add --check, or drop --dump");
    if (a->csv && a->dump && same_path(a->csv, a->dump))
        die_usage("--csv %s and --dump %s name the same path", a->csv, a->dump);
    if (a->dump) folder_check_target(a->dump, a->load);
    if (!a->csv) return;
    if (a->dump && path_in_folder(a->csv, a->dump))
        die_usage("--csv %s is inside --dump's folder %s: a dump holds the problem's files only", a->csv, a->dump);
    check_output_file("--csv", a->csv);
    for (int k = 0; k < CSV_MAX_TABLES && ch->csv_tables[k]; k++) {  // the tables beside it
        char path[4096];
        csv_sibling_path(a->csv, ch->csv_tables[k], path, sizeof(path));
        if (same_path(path, a->csv)) die_usage("--csv %s: its table %s is FILE itself", a->csv, path);
        if (a->dump && same_path(path, a->dump)) die_usage("--csv %s: its table %s is --dump's path", a->csv, path);
        check_output_file("--csv (a table beside FILE)", path);
    }
}


int chapter_main(const Chapter *ch, int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const Op *op = ch->op;
    Args a;
    char title[512];  // "03_fused_cuda: the selective scan fused into one pass, FP32"
    snprintf(title, sizeof(title), "%s: %s", ch->name, ch->title);
    args_parse(&a, argc, argv, op->args, op->flags, op->nflags, title, ch->csv_tables);
    check_output_paths(ch, &a);
    Session se = {ch, op, 0, ch->nversions - 1, false, a.dump};
    if (a.list) { list_versions(&se); return EXIT_OK; }
    if (a.version > ch->nversions)
        die_usage("version %d does not exist: this chapter has versions 1..%d (see --list)",
                  a.version, ch->nversions);
    if (a.version) se.first = se.last = a.version - 1;
    if (a.load && sizes_given(op, &a)) die_usage("--load takes the shape from its files; drop the shape flags");
    if (a.load && (a.given & ARG_SEED)) die_usage("--load takes its inputs from the files; drop --seed");
    if (a.load && (a.given & ARG_REPS)) die_usage("--load checks once and times nothing; drop --reps");
    if (((a.given & (ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_H0)) || a.op_given) && a.load)
        die_usage("--load takes the flags from its files; drop the flag options");
    bool quick = !a.check && !a.bench && !a.load;  // what a reader runs
    printf("%s\n", title);

    Problem problems[MAX_PROBLEMS];
    if (a.load) {
        HostProblem hp;
        load_problem(&se, a.load, &hp);
        if (!hp.given.ran) {
            int y = 0;  // the first output
            while (is_input(&hp.t[y])) y++;
            printf("(%s holds no %s.npy: checking against the oracle only)\n", a.load, hp.t[y].name);
        }
        check_problem(&se, &hp);
        host_free(&hp);
    } else if (a.check || quick) {
        int n = 0;  // the op's cases, or with sizes given the grid on its check_base
        if (sizes_given(op, &a)) n = command_line_grid(op, op->check_base, false, &a, problems);
        else
            for (int k = 0; k < op->ncheck && n < MAX_PROBLEMS; k++)
                if (picked(op, &op->check_cases[k], &a)) problems[n++] = op->check_cases[k];
        if (a.dump && n != 1) die_usage("--dump writes one problem: give one --batch and one %s value", op_seqlen_flag(op));
        with_flags(op, &a, problems, n);
        if (ch->check_fixtures) {
            printf("oracle vs the official fixtures\n");
            op->fixtures(repository_root());
        }
        for (int i = 0; i < n; i++) {
            if (quick && i == 1) {  // a reader sees the first problem's checks, then one line a problem
                check_flush();
                printf("(the other problems one line each; `--check` prints every line)\n");
                check_compact(true);
            }
            HostProblem hp;
            host_random(&se, &hp, &problems[i], a.seed + (uint64_t)i);
            check_problem(&se, &hp);
            host_free(&hp);
        }
        check_compact(false);
    }
    if (a.bench || quick) {
        int n = bench_problems(&se, &a, quick, problems);
        with_flags(op, &a, problems, n);
        if (quick) cpu_timing(&se, problems, n, a.seed);
        bench(&se, problems, n, &a, quick);
        if (ch->lesson) ch->lesson(&a);
    }
    gpu_skips_line(&se);
    check_summary(ch->name);
    return check_exit_code(se.gpu_skipped);
}

