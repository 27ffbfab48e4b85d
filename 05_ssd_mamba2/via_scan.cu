/* 05_ssd_mamba2, GPU: version 4, ssd_via_scan_fused_tuned, the previous
 * stage: 03's tuned Mamba-1 scan run on the SSD through the official
 * Mamba-2 -> Mamba-1 mapping. */
#include "kernels.h"

#include <stdint.h>

#include "../03_fused_cuda/kernels.h"
#include "cuda_check.h"
#include "launch.cuh"
#include "transpose.h"

/* ========================================================================
 * The previous stage: 03's scan through the Mamba-2 -> Mamba-1 mapping
 *
 * ssd_selective_scan (mamba_ssm/ops/triton/ssd_combined.py) runs SSD as a
 * Mamba-1 scan of d = h·p channels: channel hi·p + pi is head hi's row pi,
 * with the head's dt, A, dt_bias repeated over its p rows and N states. Its
 * rearranges are views in PyTorch; 03's kernel needs the Mamba-1 layouts in
 * memory (time last), so here they are copies into the workspace. Group g of
 * B/C: channel c uses c / (d/G) = hi / (h/g), the head's own group.
 * ====================================================================== */

/* delta[(b·d + c)·L + l] = dt[(b·L + l)·h + c / p]: dt per head, repeated over
 * the head's p channels and moved to time-last. One thread per delta element
 * (grid-stride); writes coalesced, reads of dt (b·L·h floats) from L1/L2. */
__global__ void expand_dt_kernel(float *delta,      // (b, h·p, L) fp32
                                 const float *dt,   // (b, L, h)   fp32
                                 int64_t batch, int64_t seqlen, int64_t heads, int64_t headdim) {
    const int64_t dim = heads * headdim, total = batch * dim * seqlen;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const int64_t l = e % seqlen, c = (e / seqlen) % dim, bi = e / (seqlen * dim);
        delta[e] = dt[(bi * seqlen + l) * heads + c / headdim];
    }
}

/* dst[k] = src[k / repeat] for k < n: a per-head value repeated over the
 * head's channels (and states, for A). */
__global__ void repeat_kernel(float *dst, const float *src, int64_t n, int64_t repeat) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) dst[k] = src[k / repeat];
}

/* Blocks of 256 threads for n elements, grid-stride past 65536 blocks. */
static unsigned elementwise_blocks(int64_t n) {
    const int64_t blocks = ceil_div(n, 256);
    return (unsigned)(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

/* The Mamba-1 problem of an SSD problem: d = h·p channels, G = g groups. */
static ScanShape mamba1_shape(const SsdShape *s) {
    ScanShape m;
    m.batch = s->batch;
    m.dim = s->heads * s->headdim;
    m.dstate = s->dstate;
    m.seqlen = s->seqlen;
    m.groups = s->groups;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = s->has_h0;
    return m;
}

/* Byte offsets of the rearranged tensors in the workspace, each 256-byte
 * aligned (03 reads its rows with 16-byte loads); a tensor that is not needed
 * takes no room. */
struct MappedLayout {
    size_t u, delta, z, y;  // (b, d, L) fp32: x, dt repeated, z, y before the transpose back
    size_t A;               // (d, N)    fp32
    size_t B, C;            // (b, G, N, L) fp32
    size_t D;               // (d,)      fp32, when D is per head (per channel: used as it is)
    size_t bias;            // (d,)      fp32
    size_t scan;            // 03's own workspace
    size_t total;
};

static MappedLayout mapped_layout(const SsdShape *s) {
    const ScanShape m = mamba1_shape(s);
    MappedLayout lay;
    const size_t f = sizeof(float);  // every piece holds fp32
    size_t at = 0;
    lay.u = take_piece(&at, scan_n_seq(&m), f);
    lay.delta = take_piece(&at, scan_n_seq(&m), f);
    lay.z = take_piece(&at, s->has_z ? scan_n_seq(&m) : 0, f);
    lay.y = take_piece(&at, scan_n_seq(&m), f);
    lay.A = take_piece(&at, scan_n_A(&m), f);
    lay.B = take_piece(&at, scan_n_bc(&m), f);
    lay.C = take_piece(&at, scan_n_bc(&m), f);
    lay.D = take_piece(&at, s->has_D && !s->D_per_channel ? m.dim : 0, f);
    lay.bias = take_piece(&at, s->has_bias ? m.dim : 0, f);
    lay.scan = at;
    lay.total = at + scan_fused_tuned_workspace(&m);
    return lay;
}

extern "C" size_t ssd_via_scan_fused_tuned_workspace(const SsdShape *s) { return mapped_layout(s).total; }

extern "C" const char *ssd_via_scan_fused_tuned_unsupported(const SsdShape *s) {
    const ScanShape m = mamba1_shape(s);
    return scan_fused_tiled_unsupported(&m);
}

extern "C" void ssd_via_scan_fused_tuned(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const ScanShape shape = mamba1_shape(s);
    const MappedLayout lay = mapped_layout(s);
    char *ws = (char *)workspace;
    const int64_t b = s->batch, L = s->seqlen, H = s->heads, P = s->headdim, d = shape.dim;
    const int64_t GN = s->groups * s->dstate;

    ScanTensors m;
    m.s = shape;
    float *u = (float *)(ws + lay.u);  // (b, d, L)
    // x = rearrange(x, "b l h p -> b (h p) l")
    transpose_batched(u, (const float *)t->x, b, L, d);
    m.u = u;
    float *delta = (float *)(ws + lay.delta);  // (b, d, L)
    // dt = repeat(dt, "b l h -> b l h p", p=headdim); dt = rearrange(dt, "b l h p -> b (h p) l")
    expand_dt_kernel<<<elementwise_blocks(b * d * L), 256>>>(delta, (const float *)t->dt, b, L, H, P);
    cuda_check_launch();
    m.delta = delta;
    float *A = (float *)(ws + lay.A);  // (d, N)
    // A = repeat(A, "h -> (h p) n", p=headdim, n=dstate)
    repeat_kernel<<<elementwise_blocks(d * s->dstate), 256>>>(A, t->A, d * s->dstate, P * s->dstate);
    cuda_check_launch();
    m.A = A;
    float *B = (float *)(ws + lay.B), *C = (float *)(ws + lay.C);  // (b, G, N, L)
    // B = rearrange(B, "b l g n -> b g n l")
    transpose_batched(B, (const float *)t->B, b, L, GN);
    // C = rearrange(C, "b l g n -> b g n l")
    transpose_batched(C, (const float *)t->C, b, L, GN);
    m.B = B;
    m.C = C;
    m.D = NULL;
    if (t->D && s->D_per_channel) {
        // D = rearrange(D, "h p -> (h p)")   (the same memory)
        m.D = t->D;
    } else if (t->D) {
        float *D = (float *)(ws + lay.D);  // (d,)
        // D = repeat(D, "h -> (h p)", p=headdim)
        repeat_kernel<<<elementwise_blocks(d), 256>>>(D, t->D, d, P);
        cuda_check_launch();
        m.D = D;
    }
    m.z = NULL;
    if (t->z) {
        float *z = (float *)(ws + lay.z);  // (b, d, L)
        // z = rearrange(z, "b l h p -> b (h p) l")
        transpose_batched(z, (const float *)t->z, b, L, d);
        m.z = z;
    }
    m.delta_bias = NULL;
    if (t->dt_bias) {
        float *bias = (float *)(ws + lay.bias);  // (d,)
        // dt_bias = repeat(dt_bias, "h -> h p", p=headdim); dt_bias = rearrange(dt_bias, "h p -> (h p)")
        repeat_kernel<<<elementwise_blocks(d), 256>>>(bias, t->dt_bias, d, P);
        cuda_check_launch();
        m.delta_bias = bias;
    }
    m.h0 = t->initial_states;  // (b, h, p, N) is (b, d, N)
    float *y = (float *)(ws + lay.y);  // (b, d, L)
    m.y = y;
    m.last_state = t->final_state;  // (b, d, N) is (b, h, p, N)

    // out = selective_scan_fn(x, dt, A, B, C, D=D, z=z, delta_bias=dt_bias, delta_softplus=dt_softplus)
    scan_fused_tuned(&m, ws + lay.scan);
    // return rearrange(out, "b (h p) l -> b l h p", p=headdim)
    transpose_batched((float *)t->y, y, b, d, L);
}
