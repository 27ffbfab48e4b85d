/* 06_bidirectional, GPU, versions 9-10: each direction one walk of 05's
 * version 18 (ops/ssd/ssd_wgmma_ws.cuh, sm_90a), the backward one first.
 *   9 bidir_wgmma_ws       fp16 I/O
 *  10 bidir_wgmma_ws_bf16  version 9 in bf16
 *
 * Version 7 shares one C·Bᵀ a chunk between the directions, but pays for
 * it with the round trip of every chunk's entering state through device
 * memory (both directions, 268 MB at S3 b 8, L 8192) and with a second
 * kernel that reads x, B and C again. 05's version 18 showed that a walk
 * which keeps its state in registers, fed by a producer warp, takes half
 * the time of version 12's pair of kernels: here each direction is such a
 * walk, and the directions share only y.
 *   1 backward  the walk over the chunks from the last to the first (BACK):
 *               per chunk the sums of Δ·A from each step to the chunk's
 *               end in place of those from its start, the mask above the
 *               diagonal, and the state handed to the chunk before. It
 *               writes y_b + D·x to y, rounded to 16 bits.
 *   2 forward   version 18's walk, whose storer brings the chunk's y_b into
 *               Ys where 18 brings z (ADD): y = y_f + y_b + D·x, times
 *               silu(z) with z read from device memory.
 * The diagonal term counts in both walks, as the default form has it.
 * Hydra (SHIFT): row i of the forward walk holds C_{i−1} and its decay and
 * mask end at step i − 1; the backward walk's row i holds C'_{i+1} and
 * starts at step i + 1; the copies fill the rows before t = 0 and past
 * L − 1 with zeros, which gives shift(s)_0 = 0. The backward walk starts from
 * initial_states_bwd, with its own dt', B', C' in the Hydra form.
 *
 * FLOPs and exps: twice version 18's. Bytes (fp16, S3 b 8, L 8192): x, dt,
 * B and C read once a direction (Hydra: B', C' the backward's own), y_b
 * written and read back once and y written: about 1.4 GB (x 0.54, y three
 * times 0.81), against version 7's 1.7 and version 18's 0.57.
 *
 * What should bound it: each walk as version 18 is bound, by the latency of
 * a chunk's chain in one warpgroup, and the pair by the bytes the two walks
 * move (profile.md, "Where the time goes in version 9").
 *
 * Limits: version 18's (N <= 128, p <= 64, both multiples of 8), fewer
 * than 2^31 work items, L < 2^31 − 128. */
#include "kernels.h"

#include <limits.h>
#include <string.h>

#include <type_traits>

#include "ssd_wgmma_ws.cuh"

extern "C" const char *bidir_wgmma_ws_unsupported(const BidirShape *bs) {
    const SsdShape *s = &bs->s;
    const char *why = ws_unsupported(s);
    if (why) return why;
    if (s->seqlen > INT_MAX - 128) return "bulk tensor copy coordinates are 32-bit: L < 2^31 - 128";
    return NULL;
}

/* Both launches use the same flags, ticket and slots, one after the other. */
extern "C" size_t bidir_wgmma_ws_workspace(const BidirShape *bs) { return ws_workspace_bytes(&bs->s); }

template <typename T, int SHIFT>
static void launch_bidir_ws(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    const bool bf16 = std::is_same<T, __nv_bfloat16>::value;
    WgmmaArgs a;
    memset(&a, 0, sizeof a);
    a.x = t->x; a.A = t->A; a.dt_bias = t->dt_bias; a.y = t->y;
    a.batch = s->batch; a.L = s->seqlen; a.H = s->heads; a.P = s->headdim; a.G = s->groups; a.N = s->dstate;
    a.softplus = s->softplus;
    WsMaps maps;
    memset(&maps, 0, sizeof maps);
    maps.t.x = wgmma_map_bhp(t->x, s, bf16, 64);
    maps.t.y = wgmma_map_bhp(t->y, s, bf16, 64);

    /* 1: the backward direction, y_b + D·x into y. */
    a.dt = SHIFT ? t->dt_bwd : t->dt;  // Hydra's backward direction has its own dt, B, C
    a.B = SHIFT ? t->B_bwd : t->B;
    a.C = SHIFT ? t->C_bwd : t->C;
    a.h0 = t->initial_states_bwd;
    a.D = t->D;
    a.D_per_channel = s->D_per_channel;
    maps.t.B = wgmma_map_bgn(a.B, s, bf16, 64);
    maps.t.C = wgmma_map_bgn(a.C, s, bf16, 64);
    ws_launch<T, true, SHIFT, false>(a, maps, s, workspace);

    /* 2: the forward direction, adding y_b (brought by y's map), then z. */
    a.dt = t->dt;
    a.B = t->B;
    a.C = t->C;
    a.h0 = t->initial_states;
    a.D = nullptr;
    a.D_per_channel = false;
    a.z = t->z;
    maps.t.B = wgmma_map_bgn(a.B, s, bf16, 64);
    maps.t.C = wgmma_map_bgn(a.C, s, bf16, 64);
    maps.ys_in = maps.t.y;
    ws_launch<T, false, SHIFT, true>(a, maps, s, workspace);
}

template <typename T>
static void launch_bidir_ws_form(const BidirTensors *t, void *workspace) {
    if (t->s.hydra) launch_bidir_ws<T, 1>(t, workspace);
    else launch_bidir_ws<T, 0>(t, workspace);
}

extern "C" void bidir_wgmma_ws(const BidirTensors *t, void *workspace) { launch_bidir_ws_form<__half>(t, workspace); }
extern "C" void bidir_wgmma_ws_bf16(const BidirTensors *t, void *workspace) {
    launch_bidir_ws_form<__nv_bfloat16>(t, workspace);
}
