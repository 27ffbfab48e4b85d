/* 05_ssd_mamba2, GPU, versions 22-23: version 18's walk over a row of
 * sequences of any lengths (sm_90a), packed requests and rectangles alike.
 *  22 ssd_wgmma_ws_varlen       every problem a row of sequences: a plan cuts
 *                               each into segments sized so that the walks fill
 *                               the GPU, longest first; fp16
 *  23 ssd_wgmma_ws_varlen_bf16  version 22 in bf16
 *
 * Version 14 walks a packed row a (sequence, h) a block: the longest
 * sequence's walks set the time, and one long sequence fills 32 of 264
 * places (a place: one block of the walk at a time, two an SM). Version 18
 * cuts a rectangle's (b, h) walks into segments when there are fewer walks
 * than places, all of one length. Here a plan (one block, before the walk)
 * cuts each sequence by its own length:
 *   - the places a head has, P = places / H, are shared by the sequences
 *     as their chunks of 64 are: a sequence of n of the row's T chunks gets
 *     m = floor(n·P / T) segments (at least one, at most n), of
 *     ceil(n / m) chunks, the last shorter. A rectangle is cut as version
 *     18 cuts it; a request shorter than T / P chunks is walked once;
 *   - the walks go out by ticket, longest sequences first, a sequence's
 *     segments one after the other (segment-major within it, h fastest), so
 *     that a segment only waits for walks taken before it, which are running
 *     and never wait for later ones, and the long walks start first;
 *   - each group of H walks is one record of the plan (WS_GROUP_INTS,
 *     ssd_wgmma_ws.cuh's ws_walk_of_packed). Σ (m − 1) < P, so the grid,
 *     H·(sequences + P) blocks, bounds the walks, and P slot groups hold
 *     the published states; blocks past the last group exit at once.
 * A rectangle is b sequences of L end to end: (b, L, h, p) is (1, b·L, h, p).
 * The kernel is version 18's with PACKED: chunks start at the sequence's
 * first step; a sequence's last chunk, when shorter than 64 steps, zeroes
 * its rows past the sequence in x and B and leaves y by 16-byte stores
 * (ws_y_clip); pass 1 writes the state after every chunk of the problem's
 * size, and after the sequence's last, to chunk_states.
 * What the cut costs: pass 0 of every segment but a sequence's last (its x
 * and B products again), and the plan's launch and a ticket a walk on rows
 * version 18 would cut the same way (tuning.md, the serving mix). */
#include "kernels.h"

#include <limits.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "ssd_wgmma_ws.cuh"

WgmmaArgs wgmma_ws_args(const SsdTensors *t, void *workspace);  // wgmma.cu: version 18's arguments
WsMaps wgmma_ws_maps(const SsdTensors *t, bool bf16);            // wgmma.cu: version 18's tensor maps

/* The exclusive prefix sums of (u, v) over the block's 1024 threads, each
 * warp's by shuffles, then the 32 warps' sums by the first warp; the sums
 * of all in *tu, *tv. */
static __device__ longlong2 block_exclusive_sums(int64_t u, int64_t v, int64_t *tu, int64_t *tv) {
    __shared__ int64_t wu[32], wv[32];  // each warp's sums, then their inclusive prefix
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    int64_t iu = u, iv = v;  // inclusive within the warp
    for (int off = 1; off < 32; off *= 2) {
        const int64_t a = __shfl_up_sync(0xffffffffu, iu, off), b = __shfl_up_sync(0xffffffffu, iv, off);
        if (lane >= off) iu += a, iv += b;
    }
    if (lane == 31) wu[warp] = iu, wv[warp] = iv;
    __syncthreads();
    if (warp == 0) {
        int64_t su = wu[lane], sv = wv[lane];
        for (int off = 1; off < 32; off *= 2) {
            const int64_t a = __shfl_up_sync(0xffffffffu, su, off), b = __shfl_up_sync(0xffffffffu, sv, off);
            if (lane >= off) su += a, sv += b;
        }
        wu[lane] = su, wv[lane] = sv;
    }
    __syncthreads();
    const longlong2 before = make_longlong2((warp ? wu[warp - 1] : 0) + iu - u, (warp ? wv[warp - 1] : 0) + iv - v);
    *tu = wu[31], *tv = wv[31];
    __syncthreads();  // wu, wv free for the next call
    return before;
}

/* The plan, one block of 1024 threads, each a run of `per` sequences (or
 * ranks). Sequence k takes steps cu[k] .. cu[k + 1] − 1 of the row (no cu:
 * k·L .. (k + 1)·L − 1); pchunk: the chunk of chunk_states (0: none). Zeroes
 * the walks' counters (ncounters flags and the ticket), writes order (rank →
 * sequence, longest first, ties in sequence order: nseq² comparisons over
 * the block, none for a rectangle), first_cs (chunk_states' index of each
 * sequence's first chunk) and the groups (groups_cap records, those past the
 * last with segment −1). */
__global__ void __launch_bounds__(1024) ws_varlen_plan(const int32_t *cu, int nseq, int L, int pchunk, int pph,
                                                       int groups_cap, int *counters, int ncounters, int *order,
                                                       int *first_cs, int *groups) {
    for (int i = (int)threadIdx.x; i <= ncounters; i += 1024) counters[i] = 0;
    const int per = (nseq + 1023) / 1024, k0 = (int)threadIdx.x * per, k1 = min(nseq, k0 + per);
    auto begin = [&](int k) { return cu ? cu[k] : k * L; };
    auto chunks = [&](int k) { return (int)(((int64_t)begin(k + 1) - begin(k) + 63) / 64); };
    int64_t mine = 0, mine_cs = 0, total = 0, total_cs = 0;
    for (int k = k0; k < k1; k++) {
        const int n = chunks(k);
        int rank = k;
        if (cu) {
            rank = 0;
            for (int j = 0; j < nseq; j++) {
                const int nj = chunks(j);
                rank += nj > n || (nj == n && j < k);
            }
        }
        order[rank] = k;
        mine += n;
        if (pchunk) mine_cs += ceil_div(begin(k + 1) - begin(k), pchunk);
    }
    int64_t at_cs = block_exclusive_sums(mine, mine_cs, &total, &total_cs).y;
    for (int k = k0; k < k1 && pchunk; k++) {
        first_cs[k] = (int)at_cs;
        at_cs += ceil_div(begin(k + 1) - begin(k), pchunk);
    }
    __syncthreads();  // order and first_cs, before other threads read them
    /* A sequence of n chunks: m segments of seg chunks, the last shorter, none empty. */
    auto cut = [&](int n, int *seg) {
        const int64_t want = total > 0 ? (int64_t)n * pph / total : 0;  // its share of the places
        const int64_t m = want < 1 ? 1 : want > n ? n : want;
        *seg = n > 0 ? (int)ceil_div(n, m) : 1;
        return n > 0 ? (int)ceil_div(n, *seg) : 1;
    };
    int64_t mine_g = 0, mine_s = 0, ngroups = 0, nslots = 0;
    for (int r = k0; r < k1; r++) {
        int seg;
        const int m = cut(chunks(order[r]), &seg);
        mine_g += m;
        mine_s += m - 1;
    }
    const longlong2 at = block_exclusive_sums(mine_g, mine_s, &ngroups, &nslots);
    int64_t at_g = at.x, at_s = at.y;
    for (int r = k0; r < k1; r++) {
        const int k = order[r], n = chunks(k);
        int seg;
        const int m = cut(n, &seg);
        for (int j = 0; j < m; j++) {
            int4 *g = reinterpret_cast<int4 *>(groups + (at_g + j) * WS_GROUP_INTS);
            g[0] = make_int4(j, j * seg, min(n, (j + 1) * seg), (int)at_s);
            g[1] = make_int4(pchunk ? first_cs[k] : 0, begin(k), begin(k + 1), k);
        }
        at_g += m;
        at_s += m - 1;
    }
    for (int64_t e = ngroups + threadIdx.x; e < groups_cap; e += 1024) {
        int4 *g = reinterpret_cast<int4 *>(groups + e * WS_GROUP_INTS);
        g[0] = make_int4(-1, 0, 0, 0);
        g[1] = make_int4(0, 0, 0, -1);
    }
}

/* The row's shape: a rectangle's b sequences end to end on one row. */
static SsdShape varlen_row(const SsdShape *s) {
    SsdShape row = *s;
    row.seqlen = s->batch * s->seqlen;
    row.batch = 1;
    return row;
}
/* Slot groups (places / H for two blocks an SM) and the plan's groups. */
static int64_t varlen_slot_groups(const SsdShape *s) { return walk_places(2) / s->heads; }
static int64_t varlen_groups(const SsdShape *s) { return (s->nseq ? s->nseq : s->batch) + varlen_slot_groups(s); }

extern "C" const char *ssd_wgmma_ws_varlen_unsupported(const SsdShape *s) {
    const SsdShape row = varlen_row(s);
    const char *why = wgmma_unsupported(&row, true);
    if (why) return why;
    if (s->nseq && s->chunk % 64 != 0)
        return "packed rows: chunk_states are written every chunk steps, which 64 must divide";
    if (varlen_groups(s) * s->heads > INT_MAX) return "more than 2^31 work items (sequences + places / h, h)";
    return NULL;
}

/* Workspace: the flags of the slot groups' items and the ticket, the items'
 * slots (ws_slot_floats), the groups, order and first_cs. */
extern "C" size_t ssd_wgmma_ws_varlen_workspace(const SsdShape *s) {
    const int64_t items = varlen_slot_groups(s) * s->heads, nseq = s->nseq ? s->nseq : s->batch;
    return counter_bytes(items) + (size_t)(items * ws_slot_floats(wgmma_slabs(s))) * sizeof(float) +
           (size_t)(varlen_groups(s) * WS_GROUP_INTS + 2 * nseq) * sizeof(int);
}

/* One row of sequences: cu NULL for a rectangle, chunk_states NULL for none. */
template <typename T>
static void launch_varlen(const SsdTensors *t, const int32_t *cu, float *chunk_states, void *workspace) {
    const SsdShape *s = &t->s;
    SsdTensors on_row = *t;  // the same tensors as one row of b·L steps
    on_row.s = varlen_row(s);
    const WsMaps maps = wgmma_ws_maps(&on_row, std::is_same<T, __nv_bfloat16>::value);

    const int64_t pph = varlen_slot_groups(s), items = pph * s->heads, groups_cap = varlen_groups(s);
    const int nseq = (int)(s->nseq ? s->nseq : s->batch);
    WgmmaArgs a = wgmma_ws_args(t, workspace);
    a.batch = 1;
    a.L = on_row.s.seqlen;
    a.published = static_cast<int *>(workspace);  // (pph, h) int32: a slot group's flags, then the ticket
    a.ticket = a.published + items;
    a.ring = reinterpret_cast<float *>(static_cast<char *>(workspace) + counter_bytes(items));  // (pph, h, slot) fp32
    a.ring_slot = ws_slot_floats(wgmma_slabs(s));
    int *groups = reinterpret_cast<int *>(a.ring + items * a.ring_slot);  // (groups_cap, WS_GROUP_INTS) int32
    int *order = groups + groups_cap * WS_GROUP_INTS;                      // (nseq,) int32, then first_cs (nseq,) int32
    a.walk_plan = groups;
    a.chunk_states = chunk_states;
    a.problem_chunk = s->chunk;
    ws_varlen_plan<<<1, 1024>>>(cu, nseq, (int)s->seqlen, chunk_states ? (int)s->chunk : 0, (int)pph,
                                (int)groups_cap, a.published, (int)items, order, order + nseq, groups);
    cuda_check_launch();

    const int slabs = wgmma_slabs(s);
    const size_t smem = slabs == 2 ? ws_smem_bytes<2>() : ws_smem_bytes<1>();
    void (*kernel)(WgmmaArgs, WsMaps) = slabs == 2 ? ssd_wgmma_ws_kernel<T, 2, false, 0, false, true>
                                                   : ssd_wgmma_ws_kernel<T, 1, false, 0, false, true>;
    static size_t allowed[2];  // the shared memory each kernel is opted in to
    allow_smem(kernel, smem, &allowed[slabs - 1]);
    kernel<<<(unsigned)(groups_cap * s->heads), WS_THREADS, smem>>>(a, maps);
    cuda_check_launch();
}

extern "C" void ssd_wgmma_ws_varlen(const SsdTensors *t, void *workspace) {
    launch_varlen<__half>(t, nullptr, nullptr, workspace);
}
extern "C" void ssd_wgmma_ws_varlen_bf16(const SsdTensors *t, void *workspace) {
    launch_varlen<__nv_bfloat16>(t, nullptr, nullptr, workspace);
}
extern "C" void ssd_wgmma_ws_varlen_packed(const SsdPacked *pk, void *workspace) {
    launch_varlen<__half>(&pk->t, pk->cu_seqlens, pk->chunk_states, workspace);
}
extern "C" void ssd_wgmma_ws_varlen_bf16_packed(const SsdPacked *pk, void *workspace) {
    launch_varlen<__nv_bfloat16>(&pk->t, pk->cu_seqlens, pk->chunk_states, workspace);
}
