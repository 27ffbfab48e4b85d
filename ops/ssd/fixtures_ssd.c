/* The SSD's official fixture: ssd (ssd_selective_scan, the Mamba-2 -> Mamba-1
 * mapping), in ops/ssd/fixtures. */
#include "op_ssd.h"

#include <stdlib.h>

#include "fixture.h"

Mamba2FixtureInputs fixture_mamba2_inputs(Fixture *fx) {
    Mamba2FixtureInputs in = {0};
    NpyShape sx, sdt, sA, sB, sC, sD, sbias;
    in.x = fixture_load(fx, "x", true, &sx);                 // (b, L, h, p)
    in.dt = fixture_load(fx, "dt", true, &sdt);              // (b, L, h)
    in.A = fixture_load(fx, "A", true, &sA);                 // (h,)
    in.B = fixture_load(fx, "B", true, &sB);                 // (b, L, g, N)
    in.C = fixture_load(fx, "C", true, &sC);                 // (b, L, g, N)
    in.D = fixture_load(fx, "D", false, &sD);                // (h,) or (h, p)
    in.bias = fixture_load(fx, "dt_bias", false, &sbias);    // (h,)
    if (fixture_sizes_from(fx, "x", &sx, 4)) in.b = sx.shape[0], in.L = sx.shape[1], in.H = sx.shape[2], in.P = sx.shape[3];
    if (fixture_sizes_from(fx, "B", &sB, 4)) in.G = sB.shape[2], in.N = sB.shape[3];
    if (!fx->failed && in.H % in.G != 0)
        fixture_fail(fx, "%s/B.npy: %lld groups do not divide %lld heads", fx->dir, (long long)in.G, (long long)in.H);
    fixture_want_shape(fx, "dt", in.dt, &sdt, 3, in.b, in.L, in.H);
    fixture_want_shape(fx, "A", in.A, &sA, 1, in.H);
    fixture_want_shape(fx, "B", in.B, &sB, 4, in.b, in.L, in.G, in.N);
    fixture_want_shape(fx, "C", in.C, &sC, 4, in.b, in.L, in.G, in.N);
    in.D_per_channel = in.D && sD.ndim == 2;
    if (in.D_per_channel) fixture_want_shape(fx, "D", in.D, &sD, 2, in.H, in.P);
    else fixture_want_shape(fx, "D", in.D, &sD, 1, in.H);
    fixture_want_shape(fx, "dt_bias", in.bias, &sbias, 1, in.H);
    return in;
}

static void check_ssd_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    Mamba2FixtureInputs in = fixture_mamba2_inputs(&fx);
    NpyShape sz, sh0, sy, sstate;
    float *z = fixture_load(&fx, "z", false, &sz);                     // (b, L, h, p)
    float *h0 = fixture_load(&fx, "initial_states", false, &sh0);      // (b, h, p, N)
    float *y = fixture_load(&fx, "y", true, &sy);                      // (b, L, h, p)
    float *final = fixture_load(&fx, "final_state", false, &sstate);   // (b, h, p, N)
    bool softplus = fixture_meta_bool(&fx, "dt_softplus", false);
    const int64_t b = in.b, L = in.L, H = in.H, P = in.P, N = in.N;
    fixture_want_shape(&fx, "z", z, &sz, 4, b, L, H, P);
    fixture_want_shape(&fx, "initial_states", h0, &sh0, 4, b, H, P, N);
    fixture_want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    fixture_want_shape(&fx, "final_state", final, &sstate, 4, b, H, P, N);
    if (fixture_load_failed(&fx)) return;

    SsdTensors t = {
        .s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = in.G, .dstate = N,
              .chunk = 0, .has_z = z, .has_D = in.D, .D_per_channel = in.D_per_channel,
              .has_bias = in.bias, .softplus = softplus, .has_h0 = h0},
        .x = in.x, .dt = in.dt, .A = in.A, .B = in.B, .C = in.C, .D = in.D, .z = z,
        .dt_bias = in.bias, .initial_states = h0,
    };
    double *y_ref = fixture_alloc_f64(b * L * H * P);      // (b, L, h, p) fp64
    double *state_ref = fixture_alloc_f64(b * H * P * N);  // (b, h, p, N) fp64
    oracle_ssd(&t, y_ref, state_ref, NULL);
    fixture_finish(&fx, y, y_ref, b * L * H * P, "final_state", final, state_ref, b * H * P * N);
}

void fixtures_check_ssd(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/ssd/fixtures");
    check_ssd_case(dir, "ssd");
}
