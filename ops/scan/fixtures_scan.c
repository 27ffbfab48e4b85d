/* The Mamba-1 scan's official fixtures: mamba1 and mamba1_plain (selective_scan_ref),
 * in ops/scan/fixtures. */
#include "op_scan.h"

#include <stdlib.h>

#include "fixture.h"

static void check_mamba1_case(const char *folder, const char *name) {
    Fixture fx;
    fixture_open(&fx, folder, name);
    NpyShape su, sdelta, sA, sB, sC, sD, sz, sbias, sh0, sy, sstate;
    float *u = fixture_load(&fx, "u", true, &su);                    // (b, d, L)
    float *delta = fixture_load(&fx, "delta", true, &sdelta);        // (b, d, L)
    float *A = fixture_load(&fx, "A", true, &sA);                    // (d, N)
    float *B = fixture_load(&fx, "B", true, &sB);                    // (b, N, L) or (b, G, N, L)
    float *C = fixture_load(&fx, "C", true, &sC);                    // like B
    float *D = fixture_load(&fx, "D", false, &sD);                   // (d,)
    float *z = fixture_load(&fx, "z", false, &sz);                   // (b, d, L)
    float *bias = fixture_load(&fx, "delta_bias", false, &sbias);    // (d,)
    float *h0 = fixture_load(&fx, "h0", false, &sh0);                // (b, d, N)
    float *y = fixture_load(&fx, "y", true, &sy);                    // (b, d, L)
    float *last = fixture_load(&fx, "last_state", false, &sstate);   // (b, d, N)
    bool softplus = fixture_meta_bool(&fx, "delta_softplus", false);

    int64_t b = 0, d = 0, L = 0, N = 0, G = 1;
    if (fixture_sizes_from(&fx, "u", &su, 3)) b = su.shape[0], d = su.shape[1], L = su.shape[2];
    if (fixture_sizes_from(&fx, "A", &sA, 2)) N = sA.shape[1];
    fixture_want_shape(&fx, "A", A, &sA, 2, d, N);
    fixture_want_shape(&fx, "delta", delta, &sdelta, 3, b, d, L);
    /* B, C: (b, N, L) is the G = 1 form of (b, G, N, L), the same memory layout. */
    if (sB.ndim == 4) G = sB.shape[1];
    if (!fx.failed && (G < 1 || d % G != 0))
        fixture_fail(&fx, "%s/B.npy: %lld groups do not divide dim %lld", fx.dir, (long long)G, (long long)d);
    if (sB.ndim == 4) {
        fixture_want_shape(&fx, "B", B, &sB, 4, b, G, N, L);
        fixture_want_shape(&fx, "C", C, &sC, 4, b, G, N, L);
    } else {
        fixture_want_shape(&fx, "B", B, &sB, 3, b, N, L);
        fixture_want_shape(&fx, "C", C, &sC, 3, b, N, L);
    }
    fixture_want_shape(&fx, "D", D, &sD, 1, d);
    fixture_want_shape(&fx, "z", z, &sz, 3, b, d, L);
    fixture_want_shape(&fx, "delta_bias", bias, &sbias, 1, d);
    fixture_want_shape(&fx, "h0", h0, &sh0, 3, b, d, N);
    fixture_want_shape(&fx, "y", y, &sy, 3, b, d, L);
    fixture_want_shape(&fx, "last_state", last, &sstate, 3, b, d, N);
    if (fixture_load_failed(&fx)) return;

    ScanTensors t = {
        .s = {.batch = b, .dim = d, .dstate = N, .seqlen = L, .groups = G,
              .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL,
              .softplus = softplus, .has_h0 = h0 != NULL},
        .u = u, .delta = delta, .z = z, .A = A, .B = B, .C = C,
        .D = D, .delta_bias = bias, .h0 = h0,
    };
    double *y_ref = fixture_alloc_f64(b * d * L);      // (b, d, L) fp64
    double *state_ref = fixture_alloc_f64(b * d * N);  // (b, d, N) fp64
    oracle_scan(&t, y_ref, state_ref);
    fixture_finish(&fx, y, y_ref, b * d * L, "last_state", last, state_ref, b * d * N);
}

void fixtures_check_scan(const char *root) {
    char dir[FIXTURE_FOLDER_MAX];
    fixture_folder(dir, sizeof dir, root, "ops/scan/fixtures");
    check_mamba1_case(dir, "mamba1");
    check_mamba1_case(dir, "mamba1_plain");
}
