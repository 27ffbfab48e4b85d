/* Mamba-3 SISO's official fixtures (mamba3_siso_step_ref and
 * mamba3_siso_fwd_ref), in ops/mamba3/fixtures: mamba3_siso (g 2 of h 4,
 * S < N/2, D, Z, the four states), mamba3_siso_plain (S = N/2, no D, no Z,
 * no states) and mamba3_siso_varlen (four packed sequences, a state each). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fixture.h"
#include "op_mamba3.h"

/* The chunked form against the step form, both fp64, on a fixture's inputs
 * at chunk 16 (several chunks a sequence): the largest difference over the
 * largest value, of y and of each final state, must stay below 1e-12. */
static void check_forms(const Fixture *fx, const Mamba3Tensors *t, const double *y, double *const *fin) {
    const Mamba3Shape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, P = s->headdim, N = s->dstate, S = s->angles;
    const int64_t nseq = s->nseq ? s->nseq : s->batch, sizes[4] = {S, P * N, N, P};
    double *yh = fixture_alloc_f64(L * P), *f[4];  // one head's y (len, p) and final states, fp64
    for (int i = 0; i < 4; i++) f[i] = fixture_alloc_f64(sizes[i]);
    double diff = 0.0, top = 0.0;
    for (int64_t n = 0; n < nseq; n++)
        for (int64_t h = 0; h < H; h++) {
            int64_t r, t0, t1;
            oracle_mamba3_chunked_head(t, 16, n, h, yh, f[0], f[1], f[2], f[3]);
            mamba3_sequence(t, n, &r, &t0, &t1);
            for (int64_t l = t0; l < t1; l++)
                for (int64_t pi = 0; pi < P; pi++) {
                    const double ref = y[((r * L + l) * H + h) * P + pi];
                    diff = fmax(diff, fabs(yh[(l - t0) * P + pi] - ref));
                    top = fmax(top, fabs(ref));
                }
            for (int i = 0; i < 4; i++)
                for (int64_t e = 0; e < sizes[i]; e++) {
                    const double ref = fin[i][(n * H + h) * sizes[i] + e];
                    diff = fmax(diff, fabs(f[i][e] - ref));
                    top = fmax(top, fabs(ref));
                }
        }
    char label[96], detail[96];
    snprintf(label, sizeof label, "fixture %s: chunked form = step form", fx->name);
    snprintf(detail, sizeof detail, "max diff %.1e of max %.2g (fp64, chunk 16)", diff, top);
    check_report_bool(label, diff <= 1e-12 * top, detail);
    free(yh);
    for (int i = 0; i < 4; i++) free(f[i]);
}

/* The final states the fixture holds, against the oracle's. */
static const char *const FINALS[] = {"final_angle_state", "final_ssm_state", "final_k_state", "final_v_state"};

static void check_mamba3_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    NpyShape sq, sk, sv, sz, sadt, sdt, strap, sqb, skb, sang, sD, s0[4], sy, sf[4], scu = {0};
    float *q = fixture_load(&fx, "Q", true, &sq);               // (b, L, g, N)
    float *k = fixture_load(&fx, "K", true, &sk);               // (b, L, g, N)
    float *v = fixture_load(&fx, "V", true, &sv);               // (b, L, h, p)
    float *z = fixture_load(&fx, "Z", false, &sz);              // (b, L, h, p)
    float *adt = fixture_load(&fx, "ADT", true, &sadt);         // (b, h, L)
    float *dt = fixture_load(&fx, "DT", true, &sdt);            // (b, h, L)
    float *trap = fixture_load(&fx, "Trap", true, &strap);      // (b, h, L)
    float *qb = fixture_load(&fx, "Q_bias", true, &sqb);        // (h, N)
    float *kb = fixture_load(&fx, "K_bias", true, &skb);        // (h, N)
    float *ang = fixture_load(&fx, "Angles", true, &sang);      // (b, L, h, S)
    float *D = fixture_load(&fx, "D", false, &sD);              // (h,)
    float *st[4] = {fixture_load(&fx, "angle_state", false, &s0[0]),   // (n, h, S)
                    fixture_load(&fx, "ssm_state", false, &s0[1]),     // (n, h, p, N)
                    fixture_load(&fx, "k_state", false, &s0[2]),       // (n, h, N)
                    fixture_load(&fx, "v_state", false, &s0[3])};      // (n, h, p)
    float *y = fixture_load(&fx, "out", true, &sy);             // (b, L, h, p)
    float *fin[4];
    for (int i = 0; i < 4; i++) fin[i] = fixture_load(&fx, FINALS[i], true, &sf[i]);
    int64_t b = 0, L = 0, G = 0, N = 0, H = 0, P = 0, S = 0;
    if (fixture_sizes_from(&fx, "Q", &sq, 4)) b = sq.shape[0], L = sq.shape[1], G = sq.shape[2], N = sq.shape[3];
    if (fixture_sizes_from(&fx, "V", &sv, 4)) H = sv.shape[2], P = sv.shape[3];
    if (fixture_sizes_from(&fx, "Angles", &sang, 4)) S = sang.shape[3];
    if (!fx.failed && (G < 1 || H % G != 0 || 2 * S > N))
        fixture_fail(&fx, "%s: %lld qk heads of %lld heads, %lld angles of N %lld", fx.dir, (long long)G,
                     (long long)H, (long long)S, (long long)N);
    int32_t *cu = NULL;  // (nseq + 1,) int32, a packed fixture's sequences
    char path[1100], err[256];
    snprintf(path, sizeof path, "%s/cu_seqlens.npy", fx.dir);
    FILE *probe = fopen(path, "rb");
    if (probe) {
        fclose(probe);
        cu = npy_read_i32(path, &scu, err, sizeof err);
        if (!cu) fixture_fail(&fx, "%s", err);
    }
    const int64_t nseq = cu ? scu.shape[0] - 1 : 0, n = cu ? nseq : b;
    fixture_want_shape(&fx, "K", k, &sk, 4, b, L, G, N);
    fixture_want_shape(&fx, "V", v, &sv, 4, b, L, H, P);
    fixture_want_shape(&fx, "Z", z, &sz, 4, b, L, H, P);
    fixture_want_shape(&fx, "ADT", adt, &sadt, 3, b, H, L);
    fixture_want_shape(&fx, "DT", dt, &sdt, 3, b, H, L);
    fixture_want_shape(&fx, "Trap", trap, &strap, 3, b, H, L);
    fixture_want_shape(&fx, "Q_bias", qb, &sqb, 2, H, N);
    fixture_want_shape(&fx, "K_bias", kb, &skb, 2, H, N);
    fixture_want_shape(&fx, "D", D, &sD, 1, H);
    fixture_want_shape(&fx, "Angles", ang, &sang, 4, b, L, H, S);
    fixture_want_shape(&fx, "out", y, &sy, 4, b, L, H, P);
    if (cu && !fx.failed) {  // one row, rising from 0 to L, every sequence at least one token
        bool ok = scu.ndim == 1 && b == 1 && cu[0] == 0 && cu[nseq] == L;
        for (int64_t k = 0; ok && k < nseq; k++) ok = cu[k + 1] > cu[k];
        if (!ok) fixture_fail(&fx, "%s/cu_seqlens.npy does not rise from 0 to L %lld on one row", fx.dir, (long long)L);
    }
    for (int i = 0; i < 4; i++) {
        const int64_t last[4] = {S, P, N, P};
        if (i == 1) {
            fixture_want_shape(&fx, "ssm_state", st[1], &s0[1], 4, n, H, P, N);
            fixture_want_shape(&fx, FINALS[1], fin[1], &sf[1], 4, n, H, P, N);
        } else {
            fixture_want_shape(&fx, FINALS[i] + 6, st[i], &s0[i], 3, n, H, last[i]);  // "final_angle_state" + 6: "angle_state"
            fixture_want_shape(&fx, FINALS[i], fin[i], &sf[i], 3, n, H, last[i]);
        }
    }
    if (fixture_load_failed(&fx)) {
        free(cu);
        return;
    }

    Mamba3Tensors t = {
        .s = {.batch = b, .seqlen = L, .heads = H, .heads_qk = G, .headdim = P, .dstate = N, .angles = S,
              .has_z = z, .has_D = D, .has_states = st[0], .nseq = nseq},
        .q = q, .k = k, .v = v, .z = z, .adt = adt, .dt = dt, .trap = trap, .q_bias = qb, .k_bias = kb,
        .angles = ang, .D = D, .angle_state = st[0], .ssm_state = st[1], .k_state = st[2], .v_state = st[3],
        .cu_seqlens = cu,
    };
    const int64_t sizes[4] = {n * H * S, n * H * P * N, n * H * N, n * H * P};
    double *y_ref = fixture_alloc_f64(b * L * H * P);  // (b, L, h, p) fp64
    double *ref[4];                                    // the final states, fp64, shapes as FINALS
    for (int i = 0; i < 4; i++) ref[i] = fixture_alloc_f64(sizes[i]);
    const Mamba3Pool pool = {t, 0, NULL};  // the fixtures keep a state a sequence
    oracle_mamba3(&pool, y_ref, ref[0], ref[1], ref[2], ref[3], NULL);
    check_forms(&fx, &t, y_ref, ref);
    for (int i = 0; i < 4; i++) {
        fixture_report(&fx, FINALS[i], fin[i], ref[i], sizes[i]);
        free(ref[i]);
    }
    fixture_finish(&fx, y, y_ref, b * L * H * P, NULL, NULL, NULL, 0);
    free(cu);
}

void fixtures_check_mamba3(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/mamba3/fixtures");
    check_mamba3_case(dir, "mamba3_siso");
    check_mamba3_case(dir, "mamba3_siso_plain");
    check_mamba3_case(dir, "mamba3_siso_varlen");
}
