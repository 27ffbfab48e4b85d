/* Bidirectional Mamba-2's official fixtures: bidir and bidir_hydra (both forms),
 * in ops/bidir/fixtures. */
#include "op_bidir.h"

#include <stdlib.h>

#include "fixture.h"

static void check_bidir_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    bool hydra = fixture_meta_bool(&fx, "shift", false);
    Mamba2FixtureInputs in = fixture_mamba2_inputs(&fx);
    NpyShape sdtb, sBb, sCb, sy;
    float *dt_bwd = hydra ? fixture_load(&fx, "dt_bwd", true, &sdtb) : NULL;  // (b, L, h)
    float *B_bwd = hydra ? fixture_load(&fx, "B_bwd", true, &sBb) : NULL;     // (b, L, g, N)
    float *C_bwd = hydra ? fixture_load(&fx, "C_bwd", true, &sCb) : NULL;     // (b, L, g, N)
    float *y = fixture_load(&fx, "y", true, &sy);                  // (b, L, h, p)
    bool softplus = fixture_meta_bool(&fx, "dt_softplus", false);
    const int64_t b = in.b, L = in.L, H = in.H, P = in.P, G = in.G, N = in.N;
    fixture_want_shape(&fx, "dt_bwd", dt_bwd, &sdtb, 3, b, L, H);
    fixture_want_shape(&fx, "B_bwd", B_bwd, &sBb, 4, b, L, G, N);
    fixture_want_shape(&fx, "C_bwd", C_bwd, &sCb, 4, b, L, G, N);
    fixture_want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    if (fixture_load_failed(&fx)) return;

    BidirTensors t = {
        .s = {.s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = G, .dstate = N,
                    .chunk = 0, .has_D = in.D, .D_per_channel = in.D_per_channel, .has_bias = in.bias,
                    .softplus = softplus},
              .hydra = hydra},
        .x = in.x, .dt = in.dt, .A = in.A, .B = in.B, .C = in.C, .D = in.D, .dt_bias = in.bias,
        .dt_bwd = dt_bwd, .B_bwd = B_bwd, .C_bwd = C_bwd,
    };
    double *y_ref = fixture_alloc_f64(b * L * H * P);  // (b, L, h, p) fp64
    oracle_bidir(&t, y_ref, NULL);
    fixture_finish(&fx, y, y_ref, b * L * H * P, NULL, NULL, NULL, 0);
}

void fixtures_check_bidir(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/bidir/fixtures");
    check_bidir_case(dir, "bidir");
    check_bidir_case(dir, "bidir_hydra");
}
