/* 07_decode_kernel, GPU: version 2, decode_via_scan, the previous stage: T
 * decode steps as 03's and 05's scans of L = T steps. */
#include "kernels.h"

#include <stdint.h>

#include "../03_fused_cuda/kernels.h"
#include "../05_ssd_mamba2/kernels.h"
#include "cuda_check.h"
#include "launch.cuh"
#include "transpose.h"

/* ========================================================================
 * The previous stage: T decode steps as a scan of L = T steps
 *
 * Unrolled over its T tokens, the decode step is the selective scan with
 * h0 = state, final state = state_out and y at every step:
 *   M2: mamba_chunk_scan_combined with initial_states; its layouts (x (b, L,
 *       h, p), dt (b, L, h), B/C (b, L, g, N), y (b, L, h, p), states (b, h,
 *       p, N)) are decode's with L = T: 05's ssd_steps_fp32 takes the
 *       tensors as they are.
 *   M1: selective_scan_fn with h0 (03): time-last layouts (u, delta, z, y
 *       (b, d, L), B/C (b, 1, N, L)), so x, dt, z, B, C are transposed into
 *       the workspace and y back.
 * Neither scan promises to read its initial state before writing its final
 * state, so when state_out == state the state is copied first.
 * ====================================================================== */

constexpr int64_t kScanChunk = 64;   // 05's chunk size Q for the M2 scan

/* The M1 decode problem as 03's scan problem. */
static ScanShape scan_shape_of(const DecodeShape *s) {
    ScanShape m;
    m.batch = s->batch;
    m.dim = s->dim;
    m.dstate = s->dstate;
    m.seqlen = s->tokens;
    m.groups = 1;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = true;
    return m;
}

/* The M2 decode problem as 05's SSD problem. */
static SsdShape ssd_shape_of(const DecodeShape *s) {
    SsdShape m = {};
    m.batch = s->batch;
    m.seqlen = s->tokens;
    m.heads = s->heads;
    m.headdim = s->headdim;
    m.groups = s->groups;
    m.dstate = s->dstate;
    m.chunk = kScanChunk;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.D_per_channel = false;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = true;
    return m;
}

/* Byte offsets in the workspace, each 256-byte aligned (03 reads rows with
 * 16-byte loads); a tensor that is not needed takes no room. */
struct ViaScanLayout {
    size_t h0;                // the state copy: M1 (b, d, N), M2 (b, h, p, N) fp32
    size_t u, delta, z, y;    // M1 (b, d, T) fp32: x, dt, z, and y before the transpose back
    size_t B, C;              // M1 (b, 1, N, T) fp32
    size_t scan;              // the scan's own workspace
    size_t total;
};

static ViaScanLayout via_scan_layout(const DecodeShape *s) {
    ViaScanLayout lay;
    const size_t f = sizeof(float);  // every piece holds fp32
    size_t at = 0;
    const bool m1 = s->form == DECODE_M1;
    const int64_t seq = m1 ? s->batch * s->dim * s->tokens : 0;
    const int64_t bc = m1 ? s->batch * s->dstate * s->tokens : 0;
    // the state copy, reserved always: the size cannot see whether state_out == state
    lay.h0 = take_piece(&at, decode_rows(s) * s->dstate, f);
    lay.u = take_piece(&at, seq, f);
    lay.delta = take_piece(&at, seq, f);
    lay.z = take_piece(&at, s->has_z ? seq : 0, f);
    lay.y = take_piece(&at, seq, f);
    lay.B = take_piece(&at, bc, f);
    lay.C = take_piece(&at, bc, f);
    lay.scan = at;
    if (m1) {
        const ScanShape m = scan_shape_of(s);
        lay.total = at + scan_fused_tuned_workspace(&m);
    } else {
        const SsdShape m = ssd_shape_of(s);
        lay.total = at + ssd_steps_workspace(&m);
    }
    return lay;
}

extern "C" size_t decode_via_scan_workspace(const DecodeShape *s) { return via_scan_layout(s).total; }

extern "C" const char *decode_via_scan_unsupported(const DecodeShape *s) {
    if (s->form == DECODE_M1) {
        const ScanShape m = scan_shape_of(s);
        return scan_fused_tiled_unsupported(&m);  // the tuned scan has the tiled one's limits (03's kernels.h)
    }
    if (s->batch * s->heads * ceil_div(s->tokens, kScanChunk) > INT_MAX) return "more than 2^31 - 1 (b, h, chunk) blocks";
    return NULL;
}

static void via_scan_m1(const DecodeTensors *t, const float *h0, char *ws, const ViaScanLayout &lay) {
    const DecodeShape *s = &t->s;
    const int64_t b = s->batch, T = s->tokens, d = s->dim, N = s->dstate;
    ScanTensors m;
    m.s = scan_shape_of(s);
    float *u = (float *)(ws + lay.u);          // (b, d, T) fp32: x time-last
    float *delta = (float *)(ws + lay.delta);  // (b, d, T) fp32: dt time-last
    float *B = (float *)(ws + lay.B);          // (b, 1, N, T) fp32
    float *C = (float *)(ws + lay.C);          // (b, 1, N, T) fp32
    float *y = (float *)(ws + lay.y);          // (b, d, T) fp32: y before the transpose back
    transpose_batched(u, (const float *)t->x, b, T, d);
    transpose_batched(delta, (const float *)t->dt, b, T, d);
    transpose_batched(B, (const float *)t->B, b, T, N);
    transpose_batched(C, (const float *)t->C, b, T, N);
    m.u = u;
    m.delta = delta;
    m.B = B;
    m.C = C;
    m.z = NULL;
    if (t->z) {
        float *z = (float *)(ws + lay.z);  // (b, d, T) fp32
        transpose_batched(z, (const float *)t->z, b, T, d);
        m.z = z;
    }
    m.A = t->A;
    m.D = t->D;
    m.delta_bias = t->dt_bias;
    m.h0 = h0;
    m.y = y;
    m.last_state = t->state_out;
    scan_fused_tuned(&m, ws + lay.scan);
    transpose_batched((float *)t->y, y, b, d, T);
}

static void via_scan_m2(const DecodeTensors *t, const float *h0, char *ws, const ViaScanLayout &lay) {
    SsdTensors m;
    m.s = ssd_shape_of(&t->s);
    m.x = t->x;
    m.dt = t->dt;
    m.A = t->A;
    m.B = t->B;
    m.C = t->C;
    m.D = t->D;
    m.z = t->z;
    m.dt_bias = t->dt_bias;
    m.initial_states = h0;
    m.y = t->y;
    m.final_state = t->state_out;
    ssd_steps_fp32(&m, ws + lay.scan);
}

extern "C" void decode_via_scan(const DecodeTensors *t, void *workspace) {
    const DecodeShape *s = &t->s;
    const ViaScanLayout lay = via_scan_layout(s);
    char *ws = (char *)workspace;
    const float *h0 = t->state;
    if (t->state_out == t->state) {
        float *copy = (float *)(ws + lay.h0);  // like state
        cuda_check(cudaMemcpyAsync(copy, t->state, sizeof(float) * (size_t)(decode_rows(s) * s->dstate),
                                   cudaMemcpyDeviceToDevice, 0));
        h0 = copy;
    }
    if (s->form == DECODE_M1) via_scan_m1(t, h0, ws, lay);
    else via_scan_m2(t, h0, ws, lay);
}
