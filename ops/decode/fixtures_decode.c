/* The decode step's official fixtures: decode_m1 and decode_m2
 * (selective_state_update_ref, both forms), in ops/decode/fixtures. */
#include "op_decode.h"

#include <stdlib.h>

#include "fixture.h"

static void check_decode_m1_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    NpyShape sst, sx, sdt, sA, sB, sC, sD, sz, sbias, sy, sout;
    float *state = fixture_load(&fx, "state", true, &sst);          // (b, d, N)
    float *x = fixture_load(&fx, "x", true, &sx);                   // (b, d)
    float *dt = fixture_load(&fx, "dt", true, &sdt);                // (b, d)
    float *A = fixture_load(&fx, "A", true, &sA);                   // (d, N)
    float *B = fixture_load(&fx, "B", true, &sB);                   // (b, N)
    float *C = fixture_load(&fx, "C", true, &sC);                   // (b, N)
    float *D = fixture_load(&fx, "D", false, &sD);                  // (d,)
    float *z = fixture_load(&fx, "z", false, &sz);                  // (b, d)
    float *bias = fixture_load(&fx, "dt_bias", false, &sbias);      // (d,)
    float *y = fixture_load(&fx, "y", true, &sy);                   // (b, d)
    float *out = fixture_load(&fx, "state_out", false, &sout);      // (b, d, N)
    bool softplus = fixture_meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, d = 0, N = 0;
    if (fixture_sizes_from(&fx, "state", &sst, 3)) b = sst.shape[0], d = sst.shape[1], N = sst.shape[2];
    fixture_want_shape(&fx, "x", x, &sx, 2, b, d);
    fixture_want_shape(&fx, "dt", dt, &sdt, 2, b, d);
    fixture_want_shape(&fx, "A", A, &sA, 2, d, N);
    fixture_want_shape(&fx, "B", B, &sB, 2, b, N);
    fixture_want_shape(&fx, "C", C, &sC, 2, b, N);
    fixture_want_shape(&fx, "D", D, &sD, 1, d);
    fixture_want_shape(&fx, "z", z, &sz, 2, b, d);
    fixture_want_shape(&fx, "dt_bias", bias, &sbias, 1, d);
    fixture_want_shape(&fx, "y", y, &sy, 2, b, d);
    fixture_want_shape(&fx, "state_out", out, &sout, 3, b, d, N);
    if (fixture_load_failed(&fx)) return;

    DecodeTensors t = {
        .s = {.form = DECODE_M1, .batch = b, .tokens = 1, .dim = d, .dstate = N, .groups = 1,
              .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL, .softplus = softplus},
        .state = state, .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z, .dt_bias = bias,
    };
    double *y_ref = fixture_alloc_f64(b * d);          // (b, d) fp64
    double *state_ref = fixture_alloc_f64(b * d * N);  // (b, d, N) fp64
    oracle_decode(&t, y_ref, state_ref);
    fixture_finish(&fx, y, y_ref, b * d, "state_out", out, state_ref, b * d * N);
}

static void check_decode_m2_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    NpyShape sst, sx, sdt, sA, sB, sC, sD, sz, sbias, sy, sout;
    float *state = fixture_load(&fx, "state", true, &sst);          // (b, h, p, N)
    float *x = fixture_load(&fx, "x", true, &sx);                   // (b, h, p)
    float *dt = fixture_load(&fx, "dt", true, &sdt);                // (b, h)
    float *A = fixture_load(&fx, "A", true, &sA);                   // (h,)
    float *B = fixture_load(&fx, "B", true, &sB);                   // (b, g, N)
    float *C = fixture_load(&fx, "C", true, &sC);                   // (b, g, N)
    float *D = fixture_load(&fx, "D", false, &sD);                  // (h,)
    float *z = fixture_load(&fx, "z", false, &sz);                  // (b, h, p)
    float *bias = fixture_load(&fx, "dt_bias", false, &sbias);      // (h,)
    float *y = fixture_load(&fx, "y", true, &sy);                   // (b, h, p)
    float *out = fixture_load(&fx, "state_out", false, &sout);      // (b, h, p, N)
    bool softplus = fixture_meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, H = 0, P = 0, N = 0, G = 0;
    if (fixture_sizes_from(&fx, "state", &sst, 4))
        b = sst.shape[0], H = sst.shape[1], P = sst.shape[2], N = sst.shape[3];
    if (fixture_sizes_from(&fx, "B", &sB, 3)) G = sB.shape[1];
    if (!fx.failed && H % G != 0)
        fixture_fail(&fx, "%s/B.npy: %lld groups do not divide %lld heads", fx.dir, (long long)G, (long long)H);
    fixture_want_shape(&fx, "x", x, &sx, 3, b, H, P);
    fixture_want_shape(&fx, "dt", dt, &sdt, 2, b, H);
    fixture_want_shape(&fx, "A", A, &sA, 1, H);
    fixture_want_shape(&fx, "B", B, &sB, 3, b, G, N);
    fixture_want_shape(&fx, "C", C, &sC, 3, b, G, N);
    fixture_want_shape(&fx, "D", D, &sD, 1, H);
    fixture_want_shape(&fx, "z", z, &sz, 3, b, H, P);
    fixture_want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    fixture_want_shape(&fx, "y", y, &sy, 3, b, H, P);
    fixture_want_shape(&fx, "state_out", out, &sout, 4, b, H, P, N);
    if (fixture_load_failed(&fx)) return;

    DecodeTensors t = {
        .s = {.form = DECODE_M2, .batch = b, .tokens = 1, .heads = H, .headdim = P, .groups = G,
              .dstate = N, .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL,
              .softplus = softplus},
        .state = state, .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z, .dt_bias = bias,
    };
    double *y_ref = fixture_alloc_f64(b * H * P);          // (b, h, p) fp64
    double *state_ref = fixture_alloc_f64(b * H * P * N);  // (b, h, p, N) fp64
    oracle_decode(&t, y_ref, state_ref);
    fixture_finish(&fx, y, y_ref, b * H * P, "state_out", out, state_ref, b * H * P * N);
}

void fixtures_check_decode(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/decode/fixtures");
    check_decode_m1_case(dir, "decode_m1");
    check_decode_m2_case(dir, "decode_m2");
}
