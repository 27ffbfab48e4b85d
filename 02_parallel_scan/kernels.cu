/* 02_parallel_scan, GPU: the scan over materialized pairs.
 *
 * Every version runs the same three kernels, changing only the middle one:
 *   1. materialize_pairs_kernel  a = exp(Δ A), b = Δ u B, as (b, d, N, L) fp32
 *   2. the scan along L of each of the b*d*N sequences, in place: b <- h
 *   3. outputs_kernel            y = sum_n C h + D u, gated by z; last_state
 *
 * The pairs are laid out (b, d, N, L), L contiguous, not (b, d, L, N) as
 * selective_scan_ref has them: a warp then scans 32 consecutive time steps of
 * one sequence with one coalesced load of 128 bytes per array. B and C are
 * (b, G, N, L) already, so kernels 1 and 3 read them coalesced too.
 *
 * The operator, with identity (1, 0) ((a, b) in a float2's (x, y)):
 *     (a, b) o (a', b') = (a*a', a'*b + b')
 * A scan of one chunk gives prefixes P = (a-part, b-part) started from h = 0;
 * the state before the chunk enters as the carry: h = P.a * carry + P.b.
 * The first chunk's carry is h0 (or 0). */
#include "kernels.h"

#include <limits.h>

#include "cuda_check.h"

#define SCAN_THREADS 256                  // threads per block in every kernel here
#define SCAN_WARPS (SCAN_THREADS / 32)
#define FULL_MASK 0xffffffffu
#define BLELLOCH_ITEMS (2 * SCAN_THREADS)  // pairs per Blelloch chunk: two per thread

/* ---- shared pieces ---- */

static __device__ __forceinline__ float2 combine(float2 earlier, float2 later) {
    // return make_float2(ab1.x * ab0.x, ab1.x * ab0.y + ab1.y);   (SSMScanOp<float>)
    return make_float2(later.x * earlier.x, later.x * earlier.y + later.y);
}

static __device__ __forceinline__ float2 identity_pair(void) { return make_float2(1.0f, 0.0f); }

/* Blocks for a grid-stride loop over `items` work items of `per_block` each:
 * at least 1, at most gridDim.x's limit. */
static unsigned grid_for(int64_t items, int64_t per_block) {
    int64_t blocks = (items + per_block - 1) / per_block;
    if (blocks < 1) blocks = 1;
    if (blocks > INT_MAX) blocks = INT_MAX;
    return (unsigned)blocks;
}

/* Kernel 1, one thread per (b, d, t), looping over n.
 * a[(bd, n, t)] = exp(Δ_t A[c, n]), b[(bd, n, t)] = B[(b, g, n, t)] * Δ_t u_t.
 * Bytes: reads u, delta (8 per (b,d,t)) and B (4N per (b,d,t), served mostly
 * by L2: a group's B is shared by d/G channels), writes 8 per (b,d,t,n).
 * exps: b*d*L*N, plus b*d*L (softplus: expf and log1pf). */
static __global__ void __launch_bounds__(SCAN_THREADS)
materialize_pairs_kernel(const float *u,            // (b, d, L)    fp32
                         const float *delta,        // (b, d, L)    fp32
                         const float *A,            // (d, N)       fp32
                         const float *B,            // (b, G, N, L) fp32
                         const float *delta_bias,   // (d,)         fp32, NULL without bias
                         bool softplus, int64_t batch, int64_t dim, int64_t dstate,
                         int64_t seqlen, int64_t groups,
                         float *pair_a,             // (b, d, N, L) fp32, written
                         float *pair_b) {           // (b, d, N, L) fp32, written
    const int64_t total = batch * dim * seqlen;
    const int64_t dim_per_group = dim / groups;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i % seqlen, row = i / seqlen;   // row = bi * dim + c
        const int64_t c = row % dim, bi = row / dim;
        // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];
        float dt = delta[i] + (delta_bias ? delta_bias[c] : 0.0f);
        // delta_vals[r][i] = delta_vals[r][i] <= 20.f ? log1pf(expf(delta_vals[r][i])) : delta_vals[r][i];
        if (softplus) dt = dt <= 20.0f ? log1pf(expf(dt)) : dt;
        // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
        const float du = dt * u[i];
        const float *B_t = B + (bi * groups + c / dim_per_group) * dstate * seqlen + t;  // stride L over n
        const float *A_c = A + c * dstate;
        const int64_t out = row * dstate * seqlen + t;                                  // stride L over n
        for (int64_t n = 0; n < dstate; n++) {
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            pair_a[out + n * seqlen] = expf(dt * A_c[n]);
            // thread_data[i] = make_float2(..., B_vals[i] * delta_u_vals[r][i]);
            pair_b[out + n * seqlen] = B_t[n * seqlen] * du;
        }
    }
}

/* Kernel 3, one thread per (b, d, t), looping over n: the reduction over the
 * state, D, the z gate, and last_state from the threads at t = L-1.
 * Bytes: reads h (4 per (b,d,t,n)), C (4N per (b,d,t), mostly from L2), u and
 * z (8 per (b,d,t)); writes y (4 per (b,d,t)) and last_state (4 per (b,d,n)).
 * exps: b*d*L with z (the sigmoid), else 0. */
static __global__ void __launch_bounds__(SCAN_THREADS)
outputs_kernel(const float *h,          // (b, d, N, L) fp32: the states
               const float *u,          // (b, d, L)    fp32
               const float *z,          // (b, d, L)    fp32, NULL without z
               const float *C,          // (b, G, N, L) fp32
               const float *D,          // (d,)         fp32, NULL without D
               int64_t batch, int64_t dim, int64_t dstate, int64_t seqlen, int64_t groups,
               float *y,                // (b, d, L)    fp32, written
               float *last_state) {     // (b, d, N)    fp32, written
    const int64_t total = batch * dim * seqlen;
    const int64_t dim_per_group = dim / groups;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i % seqlen, row = i / seqlen;
        const int64_t c = row % dim, bi = row / dim;
        const float *C_t = C + (bi * groups + c / dim_per_group) * dstate * seqlen + t;  // stride L
        const float *h_t = h + row * dstate * seqlen + t;                              // stride L
        float acc = 0.0f;
        for (int64_t n = 0; n < dstate; n++) {
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            acc += C_t[n * seqlen] * h_t[n * seqlen];
        }
        if (t == seqlen - 1) {
            // if i == u.shape[2] - 1: last_state = x
            for (int64_t n = 0; n < dstate; n++) last_state[row * dstate + n] = h_t[n * seqlen];
        }
        // out = y if D is None else y + u * rearrange(D, "d -> d 1")
        float out = D ? acc + u[i] * D[c] : acc;
        if (z) {
            // out_vals[r][i] *= z_val / (1 + expf(-z_val));
            const float z_val = z[i];
            out *= z_val / (1.0f + expf(-z_val));
        }
        y[i] = out;
    }
}

static void materialize_pairs(const ScanTensors *t, float *pair_a, float *pair_b) {
    const ScanShape *s = &t->s;
    materialize_pairs_kernel<<<grid_for(scan_n_seq(s), SCAN_THREADS), SCAN_THREADS>>>(
        (const float *)t->u, (const float *)t->delta, t->A, (const float *)t->B, t->delta_bias,
        s->softplus, s->batch, s->dim, s->dstate, s->seqlen, s->groups, pair_a, pair_b);
    cuda_check_launch();
}

static void outputs_from_states(const ScanTensors *t, const float *h) {
    const ScanShape *s = &t->s;
    outputs_kernel<<<grid_for(scan_n_seq(s), SCAN_THREADS), SCAN_THREADS>>>(
        h, (const float *)t->u, (const float *)t->z, (const float *)t->C, t->D,
        s->batch, s->dim, s->dstate, s->seqlen, s->groups, (float *)t->y, t->last_state);
    cuda_check_launch();
}

extern "C" size_t scan_pairs_gpu_workspace(const ScanShape *s) {
    return 2 * (size_t)(scan_n_state(s) * s->seqlen) * sizeof(float);
}

/* A scan of the pairs along L, in place (b becomes h), one launch. */
typedef void (*PairScanKernel)(const float *pair_a, float *pair_b, const float *h0, int64_t nseq,
                               int64_t seqlen);

/* What every GPU version does: materialize the pairs, scan them with `scan`
 * on `blocks` blocks, then y and last_state from the states. */
static void scan_pairs(const ScanTensors *t, void *workspace, PairScanKernel scan, unsigned blocks) {
    const int64_t nseq = scan_n_state(&t->s);
    float *pair_a = (float *)workspace;           // (b, d, N, L) fp32
    float *pair_b = pair_a + nseq * t->s.seqlen;  // (b, d, N, L) fp32
    materialize_pairs(t, pair_a, pair_b);
    scan<<<blocks, SCAN_THREADS>>>(pair_a, pair_b, t->h0, nseq, t->s.seqlen);
    cuda_check_launch();
    outputs_from_states(t, pair_b);
}

/* ---- 5. sequential, one thread per sequence ---- */

/* One thread per (b, d, n) walks its L pairs: h = a*h + b, h written over b.
 * Bytes: reads 8, writes 4 per (b,d,t,n). exps: none. A warp's 32 threads
 * read 32 sequences L*4 bytes apart: each load touches 32 sectors, and the
 * next 7 steps of each come from L1 if the sectors are still there. */
static __global__ void __launch_bounds__(SCAN_THREADS)
scan_sequential_kernel(const float *pair_a,   // (b, d, N, L) fp32
                       float *pair_b,         // (b, d, N, L) fp32: b in, h out
                       const float *h0,       // (b, d, N)    fp32, NULL without h0
                       int64_t nseq, int64_t seqlen) {
    for (int64_t seq = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; seq < nseq;
         seq += (int64_t)gridDim.x * blockDim.x) {
        const float *a = pair_a + seq * seqlen;
        float *b = pair_b + seq * seqlen;
        float h = h0 ? h0[seq] : 0.0f;
        for (int64_t t = 0; t < seqlen; t++) {
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h = a[t] * h + b[t];
            b[t] = h;
        }
    }
}

/* Version 5: the pairs of version 1 on the GPU, one thread per sequence.
 * b*d*N threads (a million at S1 batch 16) fill the GPU without any
 * cross-thread scan; the price is the uncoalesced walk along L. */
extern "C" void scan_sequential_gpu(const ScanTensors *t, void *workspace) {
    scan_pairs(t, workspace, scan_sequential_kernel, grid_for(scan_n_state(&t->s), SCAN_THREADS));
}

/* ---- 6. Hillis-Steele with warp shuffles ---- */

/* Inclusive scan of one pair per lane across the 32 lanes of a warp:
 * round k (offset 1, 2, 4, 8, 16) combines a lane with the lane `offset`
 * below it. All 32 lanes must call it (FULL_MASK). */
static __device__ __forceinline__ float2 warp_inclusive_scan(float2 x, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        float2 below;
        below.x = __shfl_up_sync(FULL_MASK, x.x, offset);
        below.y = __shfl_up_sync(FULL_MASK, x.y, offset);
        if (lane >= offset) x = combine(below, x);
    }
    return x;
}

/* One block per (b, d, n) sequence, walking it in chunks of 256 steps, one
 * step per thread. Per chunk: each warp scans its 32 steps with shuffles; the
 * 8 warp totals go through shared memory and warp 0 scans them; each thread
 * prepends its warp's prefix and applies the carry; the last thread's h is
 * the next chunk's carry. Steps past L load the identity, so every lane of
 * every warp takes part in every shuffle.
 * Bytes: reads 8, writes 4 per (b,d,t,n). exps: none. */
static __global__ void __launch_bounds__(SCAN_THREADS)
scan_hillis_steele_kernel(const float *pair_a,   // (b, d, N, L) fp32
                          float *pair_b,         // (b, d, N, L) fp32: b in, h out
                          const float *h0,       // (b, d, N)    fp32, NULL without h0
                          int64_t nseq, int64_t seqlen) {
    __shared__ float2 warp_prefix[SCAN_WARPS];  // inclusive prefixes of the warp totals
    __shared__ float chunk_last_h;              // the carry handed to the next chunk
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int64_t seq = blockIdx.x; seq < nseq; seq += gridDim.x) {
        const float *a = pair_a + seq * seqlen;
        float *b = pair_b + seq * seqlen;
        float carry = h0 ? h0[seq] : 0.0f;
        for (int64_t t0 = 0; t0 < seqlen; t0 += SCAN_THREADS) {
            const int64_t t = t0 + threadIdx.x;
            float2 x = t < seqlen ? make_float2(a[t], b[t]) : identity_pair();
            x = warp_inclusive_scan(x, lane);
            if (lane == 31) warp_prefix[warp] = x;
            __syncthreads();
            if (warp == 0) {
                float2 total = lane < SCAN_WARPS ? warp_prefix[lane] : identity_pair();
                total = warp_inclusive_scan(total, lane);
                if (lane < SCAN_WARPS) warp_prefix[lane] = total;
            }
            __syncthreads();
            if (warp > 0) x = combine(warp_prefix[warp - 1], x);
            const float h = x.x * carry + x.y;
            if (t < seqlen) b[t] = h;
            if (threadIdx.x == SCAN_THREADS - 1) chunk_last_h = h;
            __syncthreads();  // also: every read of warp_prefix is done before the next chunk writes it
            carry = chunk_last_h;
        }
    }
}

/* Version 6: the Hillis-Steele rounds of version 2 on the 32 lanes of a warp
 * (__shfl_up_sync, no shared memory), warps joined through shared memory,
 * chunks joined by the carry: coalesced loads, log-depth within a chunk. */
extern "C" void scan_hillis_steele_gpu(const ScanTensors *t, void *workspace) {
    scan_pairs(t, workspace, scan_hillis_steele_kernel, grid_for(scan_n_state(&t->s), 1));
}

/* ---- 7. Blelloch in shared memory ---- */

/* Shared-memory index of tree slot i: one padding word every 32 slots.
 * A level with stride s has its threads touch slots 2s apart; unpadded, a
 * warp's 32 accesses fall into 32/(2s) banks or fewer: 2-way conflicts at
 * s = 1, 16-way at s = 8 and 16. Counted for all 9 levels of this 512-slot
 * tree, the padded indices leave no warp with two addresses in one bank. */
#define PADDED(i) ((i) + ((i) >> 5))

/* One block per (b, d, n) sequence, in chunks of 512 steps, two per thread
 * (t0 + tid and t0 + tid + 256, coalesced). Per chunk: the up-sweep (9
 * levels, 256, 128, ..., 1 active threads) leaves each right child holding
 * the product of its subtree; the root is set to the identity; the down-sweep
 * (9 levels, 1, ..., 256 active threads) turns the tree into exclusive
 * prefixes; each thread combines them with its own two pairs (kept in
 * registers) and applies the carry. Steps past L are the identity.
 * Bytes: reads 8, writes 4 per (b,d,t,n). exps: none. */
static __global__ void __launch_bounds__(SCAN_THREADS)
scan_blelloch_kernel(const float *pair_a,   // (b, d, N, L) fp32
                     float *pair_b,         // (b, d, N, L) fp32: b in, h out
                     const float *h0,       // (b, d, N)    fp32, NULL without h0
                     int64_t nseq, int64_t seqlen) {
    __shared__ float tree_a[PADDED(BLELLOCH_ITEMS - 1) + 1];  // a-parts of the 512 slots
    __shared__ float tree_b[PADDED(BLELLOCH_ITEMS - 1) + 1];  // b-parts
    __shared__ float chunk_last_h;
    const int tid = threadIdx.x;
    const int i0 = tid, i1 = tid + SCAN_THREADS;  // this thread's two slots
    for (int64_t seq = blockIdx.x; seq < nseq; seq += gridDim.x) {
        const float *a = pair_a + seq * seqlen;
        float *b = pair_b + seq * seqlen;
        float carry = h0 ? h0[seq] : 0.0f;
        for (int64_t t0 = 0; t0 < seqlen; t0 += BLELLOCH_ITEMS) {
            const float2 x0 = t0 + i0 < seqlen ? make_float2(a[t0 + i0], b[t0 + i0]) : identity_pair();
            const float2 x1 = t0 + i1 < seqlen ? make_float2(a[t0 + i1], b[t0 + i1]) : identity_pair();
            tree_a[PADDED(i0)] = x0.x, tree_b[PADDED(i0)] = x0.y;
            tree_a[PADDED(i1)] = x1.x, tree_b[PADDED(i1)] = x1.y;

            int stride = 1;
            for (int active = BLELLOCH_ITEMS / 2; active > 0; active /= 2, stride *= 2) {
                __syncthreads();
                if (tid < active) {
                    const int left = PADDED(stride * (2 * tid + 1) - 1);
                    const int right = PADDED(stride * (2 * tid + 2) - 1);
                    const float2 p = combine(make_float2(tree_a[left], tree_b[left]),
                                             make_float2(tree_a[right], tree_b[right]));
                    tree_a[right] = p.x, tree_b[right] = p.y;
                }
            }
            // thread 0 wrote the root in the last level itself: no barrier needed
            if (tid == 0) {
                tree_a[PADDED(BLELLOCH_ITEMS - 1)] = 1.0f;
                tree_b[PADDED(BLELLOCH_ITEMS - 1)] = 0.0f;
            }
            for (int active = 1; active < BLELLOCH_ITEMS; active *= 2) {
                stride /= 2;
                __syncthreads();
                if (tid < active) {
                    const int left = PADDED(stride * (2 * tid + 1) - 1);
                    const int right = PADDED(stride * (2 * tid + 2) - 1);
                    const float2 subtree = make_float2(tree_a[left], tree_b[left]);
                    const float2 prefix = make_float2(tree_a[right], tree_b[right]);
                    const float2 p = combine(prefix, subtree);
                    tree_a[left] = prefix.x, tree_b[left] = prefix.y;
                    tree_a[right] = p.x, tree_b[right] = p.y;
                }
            }
            __syncthreads();
            const float2 p0 = combine(make_float2(tree_a[PADDED(i0)], tree_b[PADDED(i0)]), x0);
            const float2 p1 = combine(make_float2(tree_a[PADDED(i1)], tree_b[PADDED(i1)]), x1);
            const float h_0 = p0.x * carry + p0.y, h_1 = p1.x * carry + p1.y;
            if (t0 + i0 < seqlen) b[t0 + i0] = h_0;
            if (t0 + i1 < seqlen) b[t0 + i1] = h_1;
            if (tid == SCAN_THREADS - 1) chunk_last_h = h_1;  // slot 511
            __syncthreads();  // also: every read of the tree is done before the next chunk writes it
            carry = chunk_last_h;
        }
    }
}

/* Version 7: the Blelloch tree of version 3 in shared memory: 2 combines per
 * step instead of Hillis-Steele's log2 of the chunk, at the price of 18
 * barriers per chunk and mostly idle threads in the top levels. */
extern "C" void scan_blelloch_gpu(const ScanTensors *t, void *workspace) {
    scan_pairs(t, workspace, scan_blelloch_kernel, grid_for(scan_n_state(&t->s), 1));
}
