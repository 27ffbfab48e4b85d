/* Bidirectional Mamba-2's official fixtures: bidir and bidir_hydra (both forms),
 * in ops/bidir/fixtures. */
#include "op_bidir.h"

#include <stdlib.h>

#include "fixture.h"

static void check_bidir_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    bool hydra = fixture_meta_bool(&fx, "shift", false);
    NpyShape sx, sdt, sA, sB, sC, sD, sbias, sdtb, sBb, sCb, sy;
    float *x = fixture_load(&fx, "x", true, &sx);                  // (b, L, h, p)
    float *dt = fixture_load(&fx, "dt", true, &sdt);               // (b, L, h)
    float *A = fixture_load(&fx, "A", true, &sA);                  // (h,)
    float *B = fixture_load(&fx, "B", true, &sB);                  // (b, L, g, N)
    float *C = fixture_load(&fx, "C", true, &sC);                  // (b, L, g, N)
    float *D = fixture_load(&fx, "D", false, &sD);                 // (h,) or (h, p)
    float *bias = fixture_load(&fx, "dt_bias", false, &sbias);     // (h,)
    float *dt_bwd = hydra ? fixture_load(&fx, "dt_bwd", true, &sdtb) : NULL;  // (b, L, h)
    float *B_bwd = hydra ? fixture_load(&fx, "B_bwd", true, &sBb) : NULL;     // (b, L, g, N)
    float *C_bwd = hydra ? fixture_load(&fx, "C_bwd", true, &sCb) : NULL;     // (b, L, g, N)
    float *y = fixture_load(&fx, "y", true, &sy);                  // (b, L, h, p)
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
    fixture_want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    fixture_want_shape(&fx, "dt_bwd", dt_bwd, &sdtb, 3, b, L, H);
    fixture_want_shape(&fx, "B_bwd", B_bwd, &sBb, 4, b, L, G, N);
    fixture_want_shape(&fx, "C_bwd", C_bwd, &sCb, 4, b, L, G, N);
    fixture_want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    if (fx.failed) {
        fixture_report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    BidirTensors t = {
        .s = {.s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = G, .dstate = N,
                    .chunk = 0, .has_D = D, .D_per_channel = D_per_channel, .has_bias = bias,
                    .softplus = softplus},
              .hydra = hydra},
        .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .dt_bias = bias,
        .dt_bwd = dt_bwd, .B_bwd = B_bwd, .C_bwd = C_bwd,
    };
    double *y_ref = fixture_alloc_f64(b * L * H * P);  // (b, L, h, p) fp64
    oracle_bidir(&t, y_ref, NULL);
    fixture_report(&fx, "y", y, y_ref, b * L * H * P);
    fixture_report_perturbed(&fx, y, y_ref, b * L * H * P);
    free(y_ref);
    fixture_close(&fx);
}

/* ---- Decode step: selective_state_update_ref ---- */

void fixtures_check_bidir(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/bidir/fixtures");
    check_bidir_case(dir, "bidir");
    check_bidir_case(dir, "bidir_hydra");
}
