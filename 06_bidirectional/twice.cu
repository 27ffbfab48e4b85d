/* 06_bidirectional, GPU: the 1x, versions 3 and 4 (bidir_twice_steps_fp32,
 * bidir_twice_fused_mma): flip x, dt, B, C in time, run 05's causal kernel on
 * the inputs and on the copies, sum the outputs (kernels.cu's header has the
 * budget of both forms). */
#include "kernels.h"

#include <cuda_fp16.h>
#include <stdint.h>

#include "../05_ssd_mamba2/kernels.h"
#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mufu.cuh"

/* ========================================================================
 * The 1x: 05's kernel twice on flipped copies
 * ====================================================================== */

static unsigned elementwise_blocks(int64_t n) {
    const int64_t blocks = ceil_div(n, 256);
    return (unsigned)(blocks < 65535 ? blocks : 65535);
}

/* dst[bi, l, :] = src[bi, L-1-l, :] for rows of `width` elements.
 * x = torch.cat((x, torch.flip(x, (1,))), dim=0) */
template <typename T>
__global__ void flip_time_kernel(T *dst,        // (b, L, width), written
                                 const T *src,  // (b, L, width)
                                 int64_t batch, int64_t L, int64_t width) {
    const int64_t n = batch * L * width;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t w = i % width, l = i / width % L, bi = i / width / L;
        dst[i] = src[(bi * L + L - 1 - l) * width + w];
    }
}

/* y = y_fwd + flip(y_bwd) (Hydra: each one step later in its own time)
 * + D·x, then × silu(z). */
template <typename T>
__global__ void sum_directions_kernel(BidirTensors t,
                                      const T *y_fwd,    // (b, L, h, p): SS(x)
                                      const T *y_bwd) {  // (b, L, h, p): SS(flip(x)), flipped time
    const SsdShape s = t.s.s;
    const int64_t L = s.seqlen, P = s.headdim, W = s.heads * P, n = s.batch * L * W;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % W, l = i / W % L, bi = i / W / L;
        // y = torch.roll(y, shifts=1, dims=1); y[:, 0, :] = 0.0   (Hydra, each direction)
        // y_fw, y_bw = y[:batch], torch.flip(y[batch:], (1,))
        const int64_t lf = t.s.hydra ? l - 1 : l, lb = t.s.hydra ? L - 2 - l : L - 1 - l;
        float v = (lf >= 0 ? to_float(y_fwd[(bi * L + lf) * W + c]) : 0.f) +
                  (lb >= 0 ? to_float(y_bwd[(bi * L + lb) * W + c]) : 0.f);
        // y = y_fw + y_bw + x_og * D
        if (t.D) v += t.D[s.D_per_channel ? c : c / P] * to_float(static_cast<const T *>(t.x)[i]);
        if (t.z) {
            const float zv = to_float(static_cast<const T *>(t.z)[i]);
            v *= silu_div(zv);
        }
        static_cast<T *>(t.y)[i] = from_float<T>(v);
    }
}

/* The workspace of "twice", in order, each part 256-byte aligned. */
struct TwiceLayout {
    size_t x_flip, dt_flip, B_flip, C_flip, y_fwd, y_bwd, final_state, ssd, total;
};

/* A version of 05 that "twice" runs: its run, and its workspace's size. */
typedef void (*SsdRun)(const SsdTensors *t, void *workspace);
typedef size_t (*SsdWorkspace)(const SsdShape *s);

/* The layout for inputs and outputs of elem bytes an element, then the
 * workspace of the version of 05 run twice (ssd_workspace of a direction). */
static TwiceLayout twice_layout(const BidirShape *bs, size_t elem, SsdWorkspace ssd_workspace) {
    const SsdShape *s = &bs->s;
    const SsdShape d = bidir_direction_shape(s);
    TwiceLayout w;
    size_t at = 0;
    w.x_flip = take_piece(&at, ssd_n_x(s), elem);
    w.dt_flip = take_piece(&at, ssd_n_dt(s), elem);
    w.B_flip = take_piece(&at, ssd_n_bc(s), elem);
    w.C_flip = take_piece(&at, ssd_n_bc(s), elem);
    w.y_fwd = take_piece(&at, ssd_n_x(s), elem);
    w.y_bwd = take_piece(&at, ssd_n_x(s), elem);
    w.final_state = take_piece(&at, ssd_n_state(s), sizeof(float));
    w.ssd = at;
    w.total = at + ssd_workspace(&d);
    return w;
}

template <typename T>
static void run_twice(const BidirTensors *t, void *workspace, SsdRun ssd, SsdWorkspace ssd_workspace) {
    const SsdShape *s = &t->s.s;
    const TwiceLayout w = twice_layout(&t->s, sizeof(T), ssd_workspace);
    char *ws = static_cast<char *>(workspace);
    T *x_flip = reinterpret_cast<T *>(ws + w.x_flip);    // (b, L, h, p): x, time reversed
    T *dt_flip = reinterpret_cast<T *>(ws + w.dt_flip);  // (b, L, h): dt (Hydra: dt_bwd), reversed
    T *B_flip = reinterpret_cast<T *>(ws + w.B_flip);    // (b, L, g, N): B (Hydra: B_bwd), reversed
    T *C_flip = reinterpret_cast<T *>(ws + w.C_flip);    // (b, L, g, N): C (Hydra: C_bwd), reversed
    T *y_fwd = reinterpret_cast<T *>(ws + w.y_fwd);      // (b, L, h, p): SS(x)
    T *y_bwd = reinterpret_cast<T *>(ws + w.y_bwd);      // (b, L, h, p): SS(flip(x)), flipped time
    float *final_state = reinterpret_cast<float *>(ws + w.final_state);  // (b, h, p, N) fp32, unused
    void *ssd_ws = ws + w.ssd;                           // 05's own workspace
    const bool hydra = t->s.hydra;
    const int64_t b = s->batch, L = s->seqlen, GN = s->groups * s->dstate;

    const SsdShape d = bidir_direction_shape(s);
    const SsdTensors fwd = {d, t->x, t->dt, t->A, t->B, t->C, NULL, NULL, t->dt_bias, t->initial_states,
                            y_fwd, final_state};
    ssd(&fwd, ssd_ws);

    flip_time_kernel<<<elementwise_blocks(ssd_n_x(s)), 256>>>(x_flip, static_cast<const T *>(t->x), b, L,
                                                              s->heads * s->headdim);
    cuda_check_launch();
    flip_time_kernel<<<elementwise_blocks(ssd_n_dt(s)), 256>>>(
        dt_flip, static_cast<const T *>(hydra ? t->dt_bwd : t->dt), b, L, s->heads);
    cuda_check_launch();
    flip_time_kernel<<<elementwise_blocks(ssd_n_bc(s)), 256>>>(
        B_flip, static_cast<const T *>(hydra ? t->B_bwd : t->B), b, L, GN);
    cuda_check_launch();
    flip_time_kernel<<<elementwise_blocks(ssd_n_bc(s)), 256>>>(
        C_flip, static_cast<const T *>(hydra ? t->C_bwd : t->C), b, L, GN);
    cuda_check_launch();
    const SsdTensors bwd = {d, x_flip, dt_flip, t->A, B_flip, C_flip, NULL, NULL, t->dt_bias,
                            t->initial_states_bwd, y_bwd, final_state};
    ssd(&bwd, ssd_ws);

    sum_directions_kernel<T><<<elementwise_blocks(ssd_n_x(s)), 256>>>(*t, y_fwd, y_bwd);
    cuda_check_launch();
}

extern "C" size_t bidir_twice_steps_workspace(const BidirShape *s) {
    return twice_layout(s, sizeof(float), ssd_steps_workspace).total;
}

extern "C" void bidir_twice_steps_fp32(const BidirTensors *t, void *workspace) {
    run_twice<float>(t, workspace, ssd_steps_fp32, ssd_steps_workspace);
}

extern "C" const char *bidir_twice_fused_unsupported(const BidirShape *s) {
    const SsdShape d = bidir_direction_shape(&s->s);
    return ssd_fused_mma_unsupported(&d);
}

extern "C" size_t bidir_twice_fused_workspace(const BidirShape *s) {
    return twice_layout(s, sizeof(__half), ssd_fused_mma_workspace).total;
}

extern "C" void bidir_twice_fused_mma(const BidirTensors *t, void *workspace) {
    run_twice<__half>(t, workspace, ssd_fused_mma, ssd_fused_mma_workspace);
}
