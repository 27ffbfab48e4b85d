/* 02_parallel_scan, CPU: the recurrence h_t = a_t*h_{t-1} + b_t as a scan.
 *
 * A step is the affine map h -> a*h + b, written as the pair (a, b). Doing
 * (a, b) and then (a', b') is again an affine map:
 *
 *     (a, b) o (a', b') = (a*a', a'*b + b')        identity (1, 0)
 *
 * Composition of maps is associative, so the inclusive prefixes
 * x_0 o x_1 o ... o x_t can be grouped in any order: any prefix-scan algorithm
 * computes them. The b-part of prefix t is h_t started from h = 0, the a-part
 * is a_0*...*a_t, and the initial state enters at the end:
 *
 *     h_t = (a_0*...*a_t) * h0 + (b-part of prefix t)
 *
 * Layout, as selective_scan_ref: a and b are (b, d, L, N) fp32. One element
 * of the scan is the N pairs of one time step of one (b, d) row, combined
 * n by n. The scans below overwrite a and b with the prefixes in place. */
#include "cpu.h"

#include <math.h>
#include <string.h>

/* ---- the pieces every version shares ---- */

/* Δ of channel c from the raw delta value. */
static float delta_of(const ScanTensors *t, int64_t c, float raw) {
    // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];
    float dt = raw + (t->delta_bias ? t->delta_bias[c] : 0.0f);
    if (t->s.softplus) {
        // delta_vals[r][i] = delta_vals[r][i] <= 20.f ? log1pf(expf(delta_vals[r][i])) : delta_vals[r][i];
        dt = dt <= 20.0f ? log1pf(expf(dt)) : dt;
    }
    return dt;
}

/* out = x o y for the N pairs of one element: out may alias x or y. */
static void combine(const float *xa, const float *xb, const float *ya, const float *yb,
                    float *out_a, float *out_b, int64_t N) {
    for (int64_t n = 0; n < N; n++) {
        // return make_float2(ab1.x * ab0.x, ab1.x * ab0.y + ab1.y);   (SSMScanOp<float>)
        const float a = ya[n] * xa[n];
        const float b = ya[n] * xb[n] + yb[n];
        out_a[n] = a;
        out_b[n] = b;
    }
}

/* Writes a (b, d, L, N) fp32 and b (b, d, L, N) fp32. exps: b*d*L*N, plus
 * b*d*L for softplus. */
static void materialize_pairs(const ScanTensors *t, float *a, float *b) {
    const ScanShape *s = &t->s;
    const int64_t d = s->dim, L = s->seqlen, N = s->dstate;
    const float *u = t->u;          // (b, d, L)    fp32
    const float *delta = t->delta;  // (b, d, L)    fp32
    const float *B = t->B;          // (b, G, N, L) fp32
    for (int64_t bi = 0; bi < s->batch; bi++) {
        for (int64_t c = 0; c < d; c++) {
            const int64_t row = bi * d + c;
            const float *B_row = B + (bi * s->groups + scan_group_of(s, c)) * N * L;  // (N, L)
            const float *A_row = t->A + c * N;                                        // (N,)
            for (int64_t l = 0; l < L; l++) {
                const float dt = delta_of(t, c, delta[row * L + l]);
                // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
                const float du = dt * u[row * L + l];
                float *a_t = a + (row * L + l) * N;  // (N,)
                float *b_t = b + (row * L + l) * N;  // (N,)
                for (int64_t n = 0; n < N; n++) {
                    // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
                    a_t[n] = expf(dt * A_row[n]);
                    // thread_data[i] = make_float2(..., B_vals[i] * delta_u_vals[r][i]);
                    b_t[n] = B_row[n * L + l] * du;
                }
            }
        }
    }
}

/* y and last_state from the states. h is (b, d, L, N) fp32: the states
 * themselves when a_prefix is NULL, else the b-parts of the prefixes, with
 * a_prefix (b, d, L, N) fp32 the a-parts that carry h0 in. */
static void outputs_from_states(const ScanTensors *t, const float *a_prefix, const float *h) {
    const ScanShape *s = &t->s;
    const int64_t d = s->dim, L = s->seqlen, N = s->dstate;
    const float *u = t->u;  // (b, d, L)    fp32
    const float *z = t->z;  // (b, d, L)    fp32, NULL without z
    const float *C = t->C;  // (b, G, N, L) fp32
    float *y = t->y;        // (b, d, L)    fp32
    for (int64_t bi = 0; bi < s->batch; bi++) {
        for (int64_t c = 0; c < d; c++) {
            const int64_t row = bi * d + c;
            const float *C_row = C + (bi * s->groups + scan_group_of(s, c)) * N * L;  // (N, L)
            const float *h0 = t->h0 ? t->h0 + row * N : NULL;                         // (N,)
            for (int64_t l = 0; l < L; l++) {
                const int64_t e = (row * L + l) * N;
                float acc = 0.0f;
                for (int64_t n = 0; n < N; n++) {
                    float h_n = h[e + n];
                    if (a_prefix && h0) h_n += a_prefix[e + n] * h0[n];
                    // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
                    acc += C_row[n * L + l] * h_n;
                    // if i == u.shape[2] - 1: last_state = x
                    if (l == L - 1) t->last_state[row * N + n] = h_n;
                }
                const float u_l = u[row * L + l];
                // out = y if D is None else y + u * rearrange(D, "d -> d 1")
                float out = t->D ? acc + u_l * t->D[c] : acc;
                if (z) {
                    // out_vals[r][i] *= z_val / (1 + expf(-z_val));
                    const float z_l = z[row * L + l];
                    out *= z_l / (1.0f + expf(-z_l));
                }
                y[row * L + l] = out;
            }
        }
    }
}

static size_t pairs_bytes(const ScanShape *s) {
    return 2 * (size_t)(s->batch * s->dim * s->seqlen * s->dstate) * sizeof(float);
}

/* ---- 1. sequential ---- */

/* Version 1: materialize the pairs, then x_t <- x_{t-1} o x_t left to right:
 * the recurrence itself, plus a running product of the a's nobody needs yet. */
size_t scan_sequential_cpu_workspace(const ScanShape *s) { return pairs_bytes(s); }

void scan_sequential_cpu(const ScanTensors *t, void *workspace) {
    const int64_t L = t->s.seqlen, N = t->s.dstate;
    const int64_t rows = t->s.batch * t->s.dim;
    float *a = workspace;                     // (b, d, L, N) fp32
    float *b = a + rows * L * N;              // (b, d, L, N) fp32
    materialize_pairs(t, a, b);
    for (int64_t r = 0; r < rows; r++) {
        float *ra = a + r * L * N, *rb = b + r * L * N;  // (L, N) of this row
        for (int64_t l = 1; l < L; l++) {
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            combine(ra + (l - 1) * N, rb + (l - 1) * N, ra + l * N, rb + l * N,
                    ra + l * N, rb + l * N, N);
        }
    }
    outputs_from_states(t, a, b);
}

/* ---- 2. Hillis-Steele ---- */

/* Version 2: round k combines every element with the one 2^k back, so after
 * ceil(log2 L) rounds each holds its prefix. L*log2(L) combines instead of L,
 * but every round is L independent combines: the shape of a GPU warp scan.
 * Out of place: a round reads one buffer and writes the other. */
size_t scan_hillis_steele_cpu_workspace(const ScanShape *s) {
    return pairs_bytes(s) + 2 * (size_t)(s->seqlen * s->dstate) * sizeof(float);
}

void scan_hillis_steele_cpu(const ScanTensors *t, void *workspace) {
    const int64_t L = t->s.seqlen, N = t->s.dstate;
    const int64_t rows = t->s.batch * t->s.dim;
    float *a = workspace;                // (b, d, L, N) fp32
    float *b = a + rows * L * N;         // (b, d, L, N) fp32
    float *other_a = b + rows * L * N;   // (L, N) fp32: the second buffer of one row
    float *other_b = other_a + L * N;    // (L, N) fp32
    materialize_pairs(t, a, b);
    for (int64_t r = 0; r < rows; r++) {
        float *src_a = a + r * L * N, *src_b = b + r * L * N;
        float *dst_a = other_a, *dst_b = other_b;
        for (int64_t offset = 1; offset < L; offset *= 2) {
            // the first `offset` elements already hold their prefixes
            memcpy(dst_a, src_a, (size_t)(offset * N) * sizeof(float));
            memcpy(dst_b, src_b, (size_t)(offset * N) * sizeof(float));
            for (int64_t l = offset; l < L; l++) {
                combine(src_a + (l - offset) * N, src_b + (l - offset) * N,
                        src_a + l * N, src_b + l * N, dst_a + l * N, dst_b + l * N, N);
            }
            float *swap_a = src_a, *swap_b = src_b;
            src_a = dst_a, src_b = dst_b;
            dst_a = swap_a, dst_b = swap_b;
        }
        if (src_a != a + r * L * N) {  // an odd number of rounds ended in the other buffer
            memcpy(a + r * L * N, src_a, (size_t)(L * N) * sizeof(float));
            memcpy(b + r * L * N, src_b, (size_t)(L * N) * sizeof(float));
        }
    }
    outputs_from_states(t, a, b);
}

/* ---- 3. Blelloch ---- */

/* The number of leaves: L rounded up to a power of two. */
static int64_t blelloch_leaves(int64_t L) {
    int64_t P = 1;
    while (P < L) P *= 2;
    return P;
}

/* Version 3: a balanced tree over P = 2^ceil(log2 L) leaves (the padding is
 * the identity). The up-sweep stores partial products at the right child of
 * each pair, the down-sweep turns them into exclusive prefixes: 2(P-1)
 * combines, O(L) work, at the price of 2 log2 P dependent levels. */
size_t scan_blelloch_cpu_workspace(const ScanShape *s) {
    return pairs_bytes(s) + 2 * (size_t)(blelloch_leaves(s->seqlen) * s->dstate) * sizeof(float);
}

void scan_blelloch_cpu(const ScanTensors *t, void *workspace) {
    const int64_t L = t->s.seqlen, N = t->s.dstate, P = blelloch_leaves(L);
    const int64_t rows = t->s.batch * t->s.dim;
    float *a = workspace;               // (b, d, L, N) fp32
    float *b = a + rows * L * N;        // (b, d, L, N) fp32
    float *tree_a = b + rows * L * N;   // (P, N) fp32: the tree of one row
    float *tree_b = tree_a + P * N;     // (P, N) fp32
    materialize_pairs(t, a, b);
    for (int64_t r = 0; r < rows; r++) {
        float *ra = a + r * L * N, *rb = b + r * L * N;  // (L, N) of this row
        memcpy(tree_a, ra, (size_t)(L * N) * sizeof(float));
        memcpy(tree_b, rb, (size_t)(L * N) * sizeof(float));
        for (int64_t e = L * N; e < P * N; e++) tree_a[e] = 1.0f, tree_b[e] = 0.0f;

        // up-sweep: node k (a right child) <- its left sibling o itself
        for (int64_t stride = 1; stride < P; stride *= 2) {
            for (int64_t k = 2 * stride - 1; k < P; k += 2 * stride) {
                combine(tree_a + (k - stride) * N, tree_b + (k - stride) * N,
                        tree_a + k * N, tree_b + k * N, tree_a + k * N, tree_b + k * N, N);
            }
        }
        // the root's exclusive prefix is the identity
        for (int64_t n = 0; n < N; n++) tree_a[(P - 1) * N + n] = 1.0f, tree_b[(P - 1) * N + n] = 0.0f;
        // down-sweep: the left child gets the parent's prefix, the right
        // child gets the parent's prefix o the left subtree's product
        for (int64_t stride = P / 2; stride >= 1; stride /= 2) {
            for (int64_t k = 2 * stride - 1; k < P; k += 2 * stride) {
                float *left_a = tree_a + (k - stride) * N, *left_b = tree_b + (k - stride) * N;
                float *right_a = tree_a + k * N, *right_b = tree_b + k * N;
                for (int64_t n = 0; n < N; n++) {
                    const float sub_a = left_a[n], sub_b = left_b[n];
                    const float pre_a = right_a[n], pre_b = right_b[n];
                    left_a[n] = pre_a;
                    left_b[n] = pre_b;
                    right_a[n] = sub_a * pre_a;
                    right_b[n] = sub_a * pre_b + sub_b;
                }
            }
        }
        // inclusive = exclusive o own element
        for (int64_t l = 0; l < L; l++) {
            combine(tree_a + l * N, tree_b + l * N, ra + l * N, rb + l * N, ra + l * N, rb + l * N, N);
        }
    }
    outputs_from_states(t, a, b);
}

/* ---- 4. log-space cumsum ---- */

/* Within a segment every exponent A*c stays in [-20, 20]: exp(20) = 4.9e8,
 * far from fp32's limits (FLT_MAX = exp(88.7), smallest normal exp(-87.3)).
 * A smaller bound is also more accurate: c carries a rounding error of about
 * |c|*2^-24, which costs |A c|*2^-24 in every exponent. */
#define LOGSPACE_MAX_EXPONENT 20.0f

/* Version 4: no pairs. With c_t = Δ_{t0+1} + ... + Δ_t (c_{t0} = 0),
 *   h_t = exp(A c_t) * (h_{t0} + sum_{t0<s<=t} exp(-A c_s) b_s),
 * two cumsums (c, then the sum) instead of a scan. Exact in real numbers; in
 * fp32 exp(-A c) overflows once |A c| passes 88, so a segment restarts at t0
 * (one ordinary step from the previous state) before |A c| passes 20.
 * Writes the states (b, d, L, N): two exps per element instead of one. */
size_t scan_logspace_cpu_workspace(const ScanShape *s) {
    return (size_t)(s->batch * s->dim * s->seqlen * s->dstate + s->dstate) * sizeof(float);
}

void scan_logspace_cpu(const ScanTensors *t, void *workspace) {
    const ScanShape *s = &t->s;
    const int64_t d = s->dim, L = s->seqlen, N = s->dstate;
    const float *u = t->u;          // (b, d, L)    fp32
    const float *delta = t->delta;  // (b, d, L)    fp32
    const float *B = t->B;          // (b, G, N, L) fp32
    float *h = workspace;                        // (b, d, L, N) fp32: the states
    float *sum = h + s->batch * d * L * N;       // (N,) fp32: h_{t0} + sum exp(-A c_s) b_s
    for (int64_t bi = 0; bi < s->batch; bi++) {
        for (int64_t c = 0; c < d; c++) {
            const int64_t row = bi * d + c;
            const float *B_row = B + (bi * s->groups + scan_group_of(s, c)) * N * L;  // (N, L)
            const float *A_row = t->A + c * N;                                        // (N,)
            float A_max = 0.0f;  // max_n |A[c, n]|: bounds every |A c| of the row
            for (int64_t n = 0; n < N; n++) A_max = fmaxf(A_max, fabsf(A_row[n]));

            float cum = 0.0f;  // c_t, the cumsum of Δ since the segment's start t0
            for (int64_t l = 0; l < L; l++) {
                const float dt = delta_of(t, c, delta[row * L + l]);
                const float du = dt * u[row * L + l];
                float *h_l = h + (row * L + l) * N;  // (N,)
                if (l > 0 && A_max * fabsf(cum + dt) <= LOGSPACE_MAX_EXPONENT) {
                    cum += dt;
                    for (int64_t n = 0; n < N; n++) {
                        sum[n] += expf(-A_row[n] * cum) * (B_row[n * L + l] * du);
                        h_l[n] = expf(A_row[n] * cum) * sum[n];
                    }
                } else {  // a new segment: one recurrence step from the previous state
                    const float *h_prev = l > 0 ? h_l - N : t->h0 ? t->h0 + row * N : NULL;
                    cum = 0.0f;
                    for (int64_t n = 0; n < N; n++) {
                        // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
                        h_l[n] = expf(dt * A_row[n]) * (h_prev ? h_prev[n] : 0.0f) + B_row[n * L + l] * du;
                        sum[n] = h_l[n];
                    }
                }
            }
        }
    }
    outputs_from_states(t, NULL, h);
}
