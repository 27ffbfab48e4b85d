/* build/test_oracle [ROOT]: checks the harness's own foundations, on the
 * CPU: fp16 rounding, the .npy reader and writer, the random generator, the
 * discretization rules, the magnitude of y's terms that the SSD and Mamba-3 checks take
 * rtol of, and every operation's fp64 oracle against its
 * official fixtures (ROOT/ops/<op>/fixtures; ROOT defaults to the repository
 * the program was built in). Exit 0 when every check passes, else 1. */
#define _POSIX_C_SOURCE 200809L  // mkstemp, close, unlink

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "half.h"
#include "npy.h"
#include "op_bidir.h"
#include "op_decode.h"
#include "op_mamba3.h"
#include "op_scan.h"
#include "rng.h"

/* ---- fp16 ---- */

/* f converted by `to_bits` (half_from_float, bf16_from_float) must give want. */
static void check_bits_value(const char *label, uint16_t (*to_bits)(float), float f, uint16_t want) {
    uint16_t got = to_bits(f);
    char detail[96];
    snprintf(detail, sizeof detail, "%.9g -> 0x%04x (want 0x%04x)", f, got, want);
    check_report_bool(label, got == want, detail);
}

/* How many of the 65536 patterns that are not NaN (exponent bits exp_mask
 * all set, mantissa bits mant_mask not all clear) come back changed from
 * to_float, then to_bits. */
static int round_trip_failures(float (*to_float)(uint16_t), uint16_t (*to_bits)(float), uint32_t exp_mask,
                               uint32_t mant_mask) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        bool is_nan = (h & exp_mask) == exp_mask && (h & mant_mask) != 0;
        if (!is_nan && to_bits(to_float((uint16_t)h)) != h) bad++;
    }
    return bad;
}

static void check_half_value(const char *label, float f, uint16_t want) {
    check_bits_value(label, half_from_float, f, want);
}

static void check_half(void) {
    printf("fp16 conversion (round to nearest even)\n");
    check_half_value("half: 1", 1.0f, 0x3c00);
    check_half_value("half: 65504 (largest finite)", 65504.0f, 0x7bff);
    check_half_value("half: 65519 rounds down to 65504", 65519.0f, 0x7bff);
    check_half_value("half: 65520 (a tie) rounds to inf", 65520.0f, 0x7c00);
    check_half_value("half: 2^-14 (smallest normal)", 0x1p-14f, 0x0400);
    check_half_value("half: 2^-24 (smallest subnormal)", 0x1p-24f, 0x0001);
    check_half_value("half: 1023 * 2^-24 (largest subnormal)", 1023.0f * 0x1p-24f, 0x03ff);
    check_half_value("half: 2^-25 (a tie) rounds to even 0", 0x1p-25f, 0x0000);
    check_half_value("half: 3 * 2^-25 (a tie) rounds to even 2^-23", 3.0f * 0x1p-25f, 0x0002);
    check_half_value("half: 1 + 2^-11 (a tie) rounds to even 1", 1.0f + 0x1p-11f, 0x3c00);
    check_half_value("half: 1 + 3 * 2^-11 (a tie) rounds up to even", 1.0f + 3.0f * 0x1p-11f, 0x3c02);
    check_half_value("half: -0", -0.0f, 0x8000);
    check_half_value("half: -inf", -INFINITY, 0xfc00);
    uint16_t nan_bits = half_from_float(NAN);
    check_report_bool("half: NaN stays NaN", (nan_bits & 0x7c00) == 0x7c00 && (nan_bits & 0x03ff) != 0 &&
                      isnan(half_to_float(nan_bits)), NULL);

    /* Every half that is not NaN survives half -> float -> half. */
    int bad = round_trip_failures(half_to_float, half_from_float, 0x7c00, 0x03ff);
    char detail[64];
    snprintf(detail, sizeof detail, "%d of 63490 differ", bad);
    check_report_bool("half: every non-NaN half round-trips", bad == 0, detail);

    /* Between two neighbouring finite halves of the same sign, the midpoint
     * (exact in fp32) goes to the even one, and one fp32 step either side of
     * it goes to the nearer one. */
    bad = 0;
    for (uint32_t h = 0; h < 0x7bff; h++) {
        float lo = half_to_float((uint16_t)h), hi = half_to_float((uint16_t)(h + 1));
        float mid = lo + (hi - lo) / 2;
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (half_from_float(mid) != even) bad++;
        if (half_from_float(nextafterf(mid, 0.0f)) != h) bad++;
        if (half_from_float(nextafterf(mid, INFINITY)) != h + 1) bad++;
        if (half_from_float(-mid) != (even | 0x8000)) bad++;
    }
    snprintf(detail, sizeof detail, "%d of %d cases wrong", bad, 4 * 0x7bff);
    check_report_bool("half: midpoints round to even, near them to nearest", bad == 0, detail);
}

/* ---- bf16 ---- */

static void check_bf16_value(const char *label, float f, uint16_t want) {
    check_bits_value(label, bf16_from_float, f, want);
}

static void check_bf16(void) {
    printf("bf16 conversion (round to nearest even)\n");
    check_bf16_value("bf16: 1", 1.0f, 0x3f80);
    check_bf16_value("bf16: 1 + 2^-8 (a tie) rounds to even 1", 1.0f + 0x1p-8f, 0x3f80);
    check_bf16_value("bf16: 1 + 3 * 2^-8 (a tie) rounds up to even", 1.0f + 3.0f * 0x1p-8f, 0x3f82);
    check_bf16_value("bf16: 1 + 2^-8 + 2^-20 rounds up", 1.0f + 0x1p-8f + 0x1p-20f, 0x3f81);
    check_bf16_value("bf16: the largest finite fp32 rounds to inf", 0x1.fffffep127f, 0x7f80);
    check_bf16_value("bf16: -0", -0.0f, 0x8000);
    check_bf16_value("bf16: -inf", -INFINITY, 0xff80);
    uint16_t nan_bits = bf16_from_float(NAN);
    check_report_bool("bf16: NaN stays NaN", isnan(bf16_to_float(nan_bits)), NULL);
    int bad = round_trip_failures(bf16_to_float, bf16_from_float, 0x7f80, 0x007f);
    char detail[64];
    snprintf(detail, sizeof detail, "%d differ", bad);
    check_report_bool("bf16: every non-NaN bf16 round-trips", bad == 0, detail);
}

/* ---- .npy ---- */

/* A fresh, unique file name under /tmp. */
static bool temp_path(char *path, size_t len) {
    snprintf(path, len, "/tmp/test_oracle_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return false;
    close(fd);
    return true;
}

static bool write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The reader must refuse the file at path (written: whether the test could
 * write it) with no data and an error naming want (and also, where not NULL). */
static void check_npy_refused(const char *label, const char *path, bool written, const char *want, const char *also) {
    char err[256] = "";
    NpyShape got;
    float *back = written ? npy_read_f32(path, &got, err, sizeof err) : NULL;
    bool ok = written && !back && strstr(err, want) && (!also || strstr(err, also));
    check_report_bool(label, ok, err);
    free(back);
}

static void check_npy(void) {
    printf(".npy reader and writer\n");
    char path[64], err[256];
    if (!temp_path(path, sizeof path)) {
        check_report_bool("npy: temporary file", false, "mkstemp failed in /tmp");
        return;
    }

    /* fp32 round trip, 2-D. */
    float x[6] = {1.0f, -2.5f, 3.25f, 0.0f, 1e-30f, 65504.0f};  // (2, 3) fp32
    NpyShape s23 = npy_shape(2, (int64_t)2, (int64_t)3);
    NpyShape got;
    bool ok = npy_write_f32(path, x, &s23, err, sizeof err);
    float *back = ok ? npy_read_f32(path, &got, err, sizeof err) : NULL;
    ok = back && got.ndim == 2 && got.shape[0] == 2 && got.shape[1] == 3 && memcmp(back, x, sizeof x) == 0;
    check_report_bool("npy: write then read '<f4' (2, 3)", ok, ok ? "bit-exact" : err);
    free(back);

    /* fp16 round trip, 1-D: the header says (5,) and the data widens exactly. */
    uint16_t hx[5] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000};  // (5,) fp16 bits
    NpyShape s5 = npy_shape(1, (int64_t)5);
    ok = npy_write_f16(path, hx, &s5, err, sizeof err);
    back = ok ? npy_read_f32(path, &got, err, sizeof err) : NULL;
    ok = back && got.ndim == 1 && got.shape[0] == 5;
    for (int i = 0; ok && i < 5; i++) ok = back[i] == half_to_float(hx[i]);
    check_report_bool("npy: write then read '<f2' (5,) widened", ok, ok ? "exact" : err);
    free(back);

    /* The header as numpy writes it: format 1.0, preamble + header a multiple
     * of 64 bytes ending in '\n', 1-D shape written "(5,)". */
    char file[256];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(file, 1, sizeof file - 1, f) : 0;
    if (f) fclose(f);
    size_t hlen = n >= 10 ? (unsigned char)file[8] | (unsigned char)file[9] << 8 : 0;
    file[n < 10 + hlen ? n : 10 + hlen] = '\0';
    ok = n >= 10 && file[6] == 1 && file[7] == 0 && (10 + hlen) % 64 == 0 && n == 10 + hlen + 10 &&
         file[10 + hlen - 1] == '\n' && strstr(file + 10, "'shape': (5,)") && strstr(file + 10, "'descr': '<f2'");
    check_report_bool("npy: header is format 1.0, 64-byte aligned, (5,)", ok, NULL);

    /* Truncated: the (2, 3) fp32 file with its last 10 bytes cut. */
    ok = npy_write_f32(path, x, &s23, err, sizeof err);
    f = fopen(path, "rb");
    unsigned char whole[256];
    n = f ? fread(whole, 1, sizeof whole, f) : 0;
    if (f) fclose(f);
    ok = ok && n > 10 && write_bytes(path, whole, n - 10);
    check_npy_refused("npy: truncated file is refused", path, ok, "truncated", "2x3 float32 (24 bytes)");

    /* A valid '<f8' file of shape (2,), written here by hand, is refused with its dtype named. */
    unsigned char f8[10 + 118 + 16] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
    int len = snprintf((char *)f8 + 10, 118, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }");
    memset(f8 + 10 + len, ' ', (size_t)(117 - len));
    f8[10 + 117] = '\n';
    check_npy_refused("npy: '<f8' file is refused", path, write_bytes(path, f8, sizeof f8), "'<f8' not supported", NULL);

    /* A header that lies about its length, and a missing file. */
    unsigned char liar[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0xff, '{', '}'};
    check_npy_refused("npy: header longer than the file is refused", path, write_bytes(path, liar, sizeof liar),
                      "truncated", NULL);

    unlink(path);
    check_npy_refused("npy: missing file is refused", path, true, "cannot open", NULL);
}

/* ---- random numbers ---- */

static void check_rng(void) {
    printf("random generator\n");
    /* splitmix64's first output from state 0 is a published constant. */
    Rng r;
    rng_seed(&r, 0);
    check_report_bool("rng: splitmix64 seeding (seed 0)", r.s[0] == 0xe220a8397b1dcdafull, NULL);

    Rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    bool same = true;
    for (int i = 0; i < 1000; i++) same = same && rng_u64(&a) == rng_u64(&b);
    check_report_bool("rng: same seed, same stream", same, NULL);

    const int n = 200000;
    double sum = 0.0, sum2 = 0.0, umin = 1.0, umax = 0.0;
    for (int i = 0; i < n; i++) {
        double u = rng_uniform(&a);
        umin = fmin(umin, u);
        umax = fmax(umax, u);
        double g = rng_normal(&a);
        sum += g;
        sum2 += g * g;
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    char detail[96];
    snprintf(detail, sizeof detail, "mean %.4f std %.4f, uniform in [%.2e, %.6f]", mean, sd, umin, umax);
    check_report_bool("rng: normal mean 0 std 1, uniform in [0, 1)",
                      fabs(mean) < 0.01 && fabs(sd - 1.0) < 0.01 && umin >= 0.0 && umax < 1.0, detail);
}

/* ---- discretization ---- */

static void check_discretize(void) {
    printf("discretization rules\n");
    double abar, bbar, abar2, bbar2;
    char detail[128];

    /* ZOH's bbar is b * integral_0^dt exp(a s) ds; Simpson's rule with 2000
     * panels gets it to ~1e-15 for this smooth integrand. */
    double a = -1.7, b = 0.6, dt = 0.35;
    oracle_discretize(DISC_ZOH, a, b, dt, &abar, &bbar);
    int m = 2000;
    double hs = dt / m, integral = exp(0.0) + exp(a * dt);
    for (int k = 1; k < m; k++) integral += (k % 2 ? 4.0 : 2.0) * exp(a * k * hs);
    integral *= hs / 3.0;
    double rel = fabs(bbar - b * integral) / fabs(b * integral);
    snprintf(detail, sizeof detail, "bbar vs b * integral of exp(a s): rel err %.1e", rel);
    check_report_bool("discretize: ZOH bbar is the exact integral", rel < 1e-12 && abar == exp(a * dt), detail);

    /* a = 0 is the limit dt * b; a tiny a stays next to it (expm1, not exp - 1). */
    oracle_discretize(DISC_ZOH, 0.0, b, dt, &abar, &bbar);
    oracle_discretize(DISC_ZOH, 1e-13, b, dt, &abar2, &bbar2);
    rel = fabs(bbar2 - dt * b) / (dt * b);
    snprintf(detail, sizeof detail, "a=0: bbar %.17g, a=1e-13: rel diff %.1e", bbar, rel);
    check_report_bool("discretize: ZOH at a = 0 and a -> 0 gives dt * b",
                      bbar == dt * b && abar == 1.0 && rel < 1e-12, detail);

    /* Euler-B (the official rule) differs from ZOH by dt^2 * a * b / 2 + O(dt^3). */
    dt = 1e-3;
    oracle_discretize(DISC_ZOH, a, b, dt, &abar, &bbar);
    oracle_discretize(DISC_EULER_B, a, b, dt, &abar2, &bbar2);
    double want = dt * dt * a * b / 2.0;
    rel = fabs((bbar - bbar2) - want) / fabs(want);
    snprintf(detail, sizeof detail, "ZOH - Euler-B = %.6e, dt^2 a b / 2 = %.6e", bbar - bbar2, want);
    check_report_bool("discretize: Euler-B is ZOH to first order", abar == abar2 && bbar2 == dt * b && rel < 1e-3,
                      detail);

    oracle_discretize(DISC_EULER, a, b, dt, &abar, &bbar);
    check_report_bool("discretize: Euler abar = 1 + dt a, bbar = dt b", abar == 1.0 + dt * a && bbar == dt * b, NULL);

    /* softplus follows torch: linear above 20, log1p(exp(x)) at and below. */
    bool sp = oracle_softplus(20.5) == 20.5 && oracle_softplus(20.0) == log1p(exp(20.0)) &&
              oracle_softplus(-800.0) == 0.0 && fabs(oracle_softplus(0.0) - log(2.0)) < 1e-16;
    check_report_bool("softplus: threshold 20 as torch's F.softplus", sp, NULL);
}

/* The magnitude of y's terms that rtol is taken of (ScanRow.terms): never
 * below |y|, and equal to it when every term is positive. */
static void check_terms(void) {
    enum { L = 5, N = 3 };
    float u[L] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f}, pos[L] = {0.5f, 1.0f, 2.0f, 0.25f, 0.75f};  // (L,)
    float delta[L] = {0.1f, 0.3f, 0.2f, 0.05f, 0.4f};                                          // (L,)
    float A[N] = {-1.0f, -0.5f, -2.0f};                                                        // (N,)
    float B[L * N], C[L * N], Bp[L * N], Cp[L * N];                                            // (L, N)
    float D = 0.8f, h0[N] = {0.3f, 0.2f, 0.1f}, z[L] = {1.0f, -0.5f, 0.2f, 2.0f, -1.5f};
    for (int i = 0; i < L * N; i++) {
        B[i] = (float)((i * 7 % 11) - 5) / 4.0f;
        C[i] = (float)((i * 5 % 13) - 6) / 5.0f;
        Bp[i] = fabsf(B[i]) + 0.1f;
        Cp[i] = fabsf(C[i]) + 0.1f;
    }
    double y[L], terms[L], h[N];
    ScanRow r = {.L = L, .N = N, .u = u, .u_t = 1, .delta = delta, .delta_t = 1, .z = z, .z_t = 1, .A = A, .A_n = 1,
                 .B = B, .B_n = 1, .B_t = N, .C = C, .C_n = 1, .C_t = N, .D = &D, .h0 = h0, .terms = terms};
    oracle_row(&r, y, h);
    bool above = true;
    for (int t = 0; t < L; t++) above = above && terms[t] >= fabs(y[t]) && terms[t] > 0.0;
    r.u = pos;
    r.B = Bp;
    r.C = Cp;
    r.z = NULL;
    oracle_row(&r, y, h);
    bool equal = true;
    for (int t = 0; t < L; t++) equal = equal && fabs(terms[t] - y[t]) <= 1e-15 * y[t];
    check_report_bool("oracle: y's terms' magnitude is at least |y|, and |y| when every term is positive",
                      above && equal, NULL);
}

/* The same for Mamba-3's y (oracle_mamba3's y_terms, the state's recurrence
 * run on its terms' magnitudes): at least |y| everywhere, and |y| when every
 * term is positive (q, k, v, D and the states positive, no rotation, no z). */
static void check_terms_mamba3(void) {
    enum { L = 6, H = 2, P = 2, N = 4, S = 1 };
    float q[L * N], k[L * N], qp[L * N], kp[L * N];  // (1, L, 1, N) fp32: q and k, then positive ones
    float v[L * H * P], vp[L * H * P];               // (1, L, H, P) fp32: v, then a positive one
    float adt[H * L], dt[H * L], trap[H * L], z[L * H * P];                        // (1, H, L), (1, L, H, P)
    float bias0[H * N] = {0}, angles[L * H * S], D[H] = {0.5f, 1.5f};             // (H, N), (1, L, H, S), (H,)
    float angle0[H * S] = {0.3f, 1.2f}, ssm0[H * P * N], k0[H * N], v0[H * P];     // the four states, (1, H, ...)
    for (int i = 0; i < L * N; i++) {
        q[i] = (float)((i * 7 % 11) - 5) / 4.0f, k[i] = (float)((i * 5 % 13) - 6) / 5.0f;
        qp[i] = fabsf(q[i]) + 0.1f, kp[i] = fabsf(k[i]) + 0.2f;
    }
    for (int i = 0; i < L * H * P; i++) {
        v[i] = (float)((i * 3 % 7) - 3) / 2.0f, vp[i] = fabsf(v[i]) + 0.1f;
        z[i] = (float)((i * 5 % 9) - 4) / 3.0f;
    }
    for (int i = 0; i < H * L; i++) {
        adt[i] = -0.05f * (float)(1 + i % 4), dt[i] = 0.02f * (float)(1 + i % 3);
        trap[i] = 0.3f * (float)(i % 5) - 0.6f;
    }
    for (int i = 0; i < L * H * S; i++) angles[i] = 0.7f * (float)(i % 4) - 1.0f;
    for (int i = 0; i < H * P * N; i++) ssm0[i] = 0.05f * (float)(1 + i % 6);
    for (int i = 0; i < H * N; i++) k0[i] = 0.1f * (float)(1 + i % 3);
    for (int i = 0; i < H * P; i++) v0[i] = 0.2f * (float)(1 + i % 2);
    double y[L * H * P], terms[L * H * P];                      // (1, L, H, P) fp64: y and its Σ|term|
    double angle[H * S], ssm[H * P * N], kf[H * N], vf[H * P];  // the four final states, fp64
    Mamba3Tensors t = {.s = {.batch = 1, .seqlen = L, .heads = H, .heads_qk = 1, .headdim = P, .dstate = N,
                             .angles = S, .chunk = 16, .has_z = true, .has_D = true, .has_states = true},
                       .q = q, .k = k, .v = v, .z = z, .adt = adt, .dt = dt, .trap = trap, .q_bias = bias0,
                       .k_bias = bias0, .angles = angles, .D = D, .angle_state = angle0, .ssm_state = ssm0,
                       .k_state = k0, .v_state = v0};
    Mamba3Pool pool = {t, 0, NULL};
    oracle_mamba3(&pool, y, angle, ssm, kf, vf, terms);
    bool above = true;
    for (int i = 0; i < L * H * P; i++) above = above && terms[i] >= fabs(y[i]);  // (silu(0) = 0 makes both 0)
    pool.t.q = qp, pool.t.k = kp, pool.t.v = vp, pool.t.z = NULL, pool.t.s.has_z = false, pool.t.s.angles = 0;
    oracle_mamba3(&pool, y, angle, ssm, kf, vf, terms);
    bool equal = true;
    for (int i = 0; i < L * H * P; i++) equal = equal && fabs(terms[i] - y[i]) <= 1e-14 * y[i];
    check_report_bool("oracle: Mamba-3 y's terms' magnitude is at least |y|, and |y| when every term is positive",
                      above && equal, NULL);
}

/* A NaN error is the max_abs of a check, wherever it stands among finite
 * errors, and fails the check. */
static void check_compare(void) {
    const double ref[3] = {0.0, 0.0, 0.0};
    const float nan_first[3] = {NAN, 1.0f, 0.5f}, nan_between[3] = {0.25f, NAN, 2.0f};
    CheckResult a = compare_f32(nan_first, ref, 3, TOLERANCES[TOL_FP32]);
    CheckResult b = compare_f32(nan_between, ref, 3, TOLERANCES[TOL_FP32]);
    check_report_bool("check: a NaN error is the max_abs and fails",
                      isnan(a.max_abs) && !a.pass && isnan(b.max_abs) && !b.pass, NULL);
    /* The worst element is the one furthest over its bound, not the largest
     * error: 0.01 off a ref of 0 is worse than 0.1 off a ref of 1000. */
    const double ref2[3] = {1000.0, 0.0, 5.0};
    const float got2[3] = {1000.1f, 0.01f, 5.0f};
    CheckResult w = compare_f32(got2, ref2, 3, TOLERANCES[TOL_FP32]);
    const double bound = TOLERANCES[TOL_FP32].atol;  // at ref 0
    CheckResult rows = check_rows_merge(b, w);
    check_report_bool("check: the worst element is the one furthest over its bound; a NaN one sticks",
                      !w.pass && w.n_bad == 1 && w.worst_i == 1 && fabs(w.worst - 0.01 / bound) < 1e-6 &&
                          w.worst_bound == bound && isnan(rows.worst) && rows.worst_i == 1 && rows.worst_row,
                      NULL);
}

int main(int argc, char **argv) {
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        bool help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
        fprintf(help ? stdout : stderr, "usage: %s [ROOT]   (the repository holding ops/*/fixtures; default the one it was built in)\n", argv[0]);
        return help ? EXIT_OK : EXIT_USAGE;
    }
    const char *root = argc == 2 ? argv[1] : repository_root();

    check_half();
    check_bf16();
    check_npy();
    check_rng();
    check_discretize();
    check_compare();
    check_terms();
    check_terms_mamba3();
    printf("oracle vs the official fixtures (%s/ops)\n", root);
    fixtures_check_scan(root);
    fixtures_check_ssd(root);
    fixtures_check_bidir(root);
    fixtures_check_decode(root);
    check_summary("test_oracle");
    return check_exit_code(false);
}
