/* The SSD's official fixture: ssd (ssd_selective_scan, the Mamba-2 -> Mamba-1
 * mapping), in ops/ssd/fixtures. */
#include "op_ssd.h"

#include <stdlib.h>

#include "fixture.h"

static void check_ssd_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    NpyShape sx, sdt, sA, sB, sC, sD, sz, sbias, sh0, sy, sstate;
    float *x = fixture_load(&fx, "x", true, &sx);                      // (b, L, h, p)
    float *dt = fixture_load(&fx, "dt", true, &sdt);                   // (b, L, h)
    float *A = fixture_load(&fx, "A", true, &sA);                      // (h,)
    float *B = fixture_load(&fx, "B", true, &sB);                      // (b, L, g, N)
    float *C = fixture_load(&fx, "C", true, &sC);                      // (b, L, g, N)
    float *D = fixture_load(&fx, "D", false, &sD);                     // (h,) or (h, p)
    float *z = fixture_load(&fx, "z", false, &sz);                     // (b, L, h, p)
    float *bias = fixture_load(&fx, "dt_bias", false, &sbias);         // (h,)
    float *h0 = fixture_load(&fx, "initial_states", false, &sh0);      // (b, h, p, N)
    float *y = fixture_load(&fx, "y", true, &sy);                      // (b, L, h, p)
    float *final = fixture_load(&fx, "final_state", false, &sstate);   // (b, h, p, N)
    bool softplus = fixture_meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, L = 0, H = 0, P = 0, G = 0, N = 0;
    if (fixture_sizes_from(&fx, "x", &sx, 4)) b = sx.shape[0], L = sx.shape[1], H = sx.shape[2], P = sx.shape[3];
    if (fixture_sizes_from(&fx, "B", &sB, 4)) G = sB.shape[2], N = sB.shape[3];
    if (!fx.failed && H % G != 0)
        fixture_fail(&fx, "%s/B.npy: %lld groups do not divide %lld heads", fx.dir, (long long)G, (long long)H);
    fixture_want_shape(&fx, "dt", dt, &sdt, 3, b, L, H);
    fixture_want_shape(&fx, "A", A, &sA, 1, H);
    fixture_want_shape(&fx, "B", B, &sB, 4, b, L, G, N);
    fixture_want_shape(&fx, "C", C, &sC, 4, b, L, G, N);
    bool D_per_channel = D && sD.ndim == 2;
    if (D_per_channel) fixture_want_shape(&fx, "D", D, &sD, 2, H, P);
    else fixture_want_shape(&fx, "D", D, &sD, 1, H);
    fixture_want_shape(&fx, "z", z, &sz, 4, b, L, H, P);
    fixture_want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    fixture_want_shape(&fx, "initial_states", h0, &sh0, 4, b, H, P, N);
    fixture_want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    fixture_want_shape(&fx, "final_state", final, &sstate, 4, b, H, P, N);
    if (fx.failed) {
        fixture_report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    SsdTensors t = {
        .s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = G, .dstate = N,
              .chunk = 0, .has_z = z, .has_D = D, .D_per_channel = D_per_channel,
              .has_bias = bias, .softplus = softplus, .has_h0 = h0},
        .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z,
        .dt_bias = bias, .initial_states = h0,
    };
    double *y_ref = fixture_alloc_f64(b * L * H * P);      // (b, L, h, p) fp64
    double *state_ref = fixture_alloc_f64(b * H * P * N);  // (b, h, p, N) fp64
    oracle_ssd(&t, y_ref, state_ref);
    fixture_report(&fx, "y", y, y_ref, b * L * H * P);
    if (final) fixture_report(&fx, "final_state", final, state_ref, b * H * P * N);
    fixture_report_perturbed(&fx, y, y_ref, b * L * H * P);
    free(y_ref);
    free(state_ref);
    fixture_close(&fx);
}

/* ---- Bidirectional Mamba-2, both forms (meta "shift": the Hydra form) ---- */

void fixtures_check_ssd(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/ssd/fixtures");
    check_ssd_case(dir, "ssd");
}
