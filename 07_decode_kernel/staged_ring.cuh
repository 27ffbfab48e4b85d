/* 07_decode_kernel, GPU: the persistent grid of versions 10-12 (staged.cu,
 * staged_m1.cuh). A block of a persistent grid walks units u = blockIdx.x,
 * blockIdx.x + gridDim.x, ...; a ring of stages in shared memory holds the
 * next units' bulk copies while the block works on the oldest. This file
 * holds the ring (device) and the launch of as many blocks as fit (host). */
#ifndef STAGED_RING_CUH
#define STAGED_RING_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "tma_sm90.cuh"

/* The ring of a persistent block, whose units are u = blockIdx.x,
 * blockIdx.x + gridDim.x, ...: thread 0 sets up the Stages barriers and,
 * the block synced, issues the block's first Stages units (issue(u, i):
 * unit u into buffer i, completing on full[i]); once every thread holds
 * unit u of buffer i, ring_refill issues the unit Stages ahead into it.
 * SPREAD (the Serve kernels, whose issue looks up a pool's slot of the unit
 * before its copy): thread i issues unit i, lanes of one warp, so that the
 * lookups are one load, not one after the other. Only the Serve kernels
 * spread: without a pool it bought nothing (versions.md). */
template <int Stages, bool SPREAD, typename Issue>
static __device__ __forceinline__ void ring_start(uint64_t *full, int64_t units, Issue issue) {
    if (threadIdx.x == 0)
        for (int i = 0; i < Stages; i++) mbar_init(&full[i], 1);
    __syncthreads();
    if (SPREAD) {
        const int i = (int)threadIdx.x;
        if (i < Stages && blockIdx.x + (int64_t)i * gridDim.x < units) issue(blockIdx.x + (int64_t)i * gridDim.x, i);
    } else if (threadIdx.x == 0)
        for (int i = 0; i < Stages; i++)
            if (blockIdx.x + (int64_t)i * gridDim.x < units) issue(blockIdx.x + (int64_t)i * gridDim.x, i);
}
template <int Stages, typename Issue>
static __device__ __forceinline__ void ring_refill(int64_t u, int i, int64_t units, Issue issue) {
    if (threadIdx.x == 0 && u + (int64_t)Stages * gridDim.x < units) issue(u + (int64_t)Stages * gridDim.x, i);
}

/* The state, the intermediate states, B, C (and Mamba-1's A) 16-byte aligned, or exit 2. */
static void check_staged_alignment(const DecodeTensors *t, const void *inter) {
    if (!aligned(t->state, 16) || !aligned(t->state_out, 16) || !aligned(t->B, 16) || !aligned(t->C, 16) ||
        !aligned(inter, 16) || (t->s.form == DECODE_M1 && !aligned(t->A, 16))) {
        fprintf(stderr, "decode_staged: the state, the intermediate states, B, C and (Mamba-1) A must be 16-byte "
                        "aligned (bulk copies, 16-byte loads and stores)\n");
        exit(2);
    }
}

/* A kernel's launch facts, found at its first launch: each kernel's shared
 * memory is fixed by its template arguments (N by K, the unit by F). */
struct PersistentFit {
    size_t allowed;  // the shared memory it is opted in to
    int64_t fit;     // its blocks that fit on the SMs at once; 0 until found
};

/* Blocks of kernel k (`threads` each, smem bytes of shared memory, opted
 * in) that fit on the SMs at once, asked once a kernel (c). */
template <typename Kernel>
static int64_t persistent_fit(Kernel k, int threads, size_t smem, PersistentFit *c) {
    if (c->fit == 0) {
        allow_smem(k, smem, &c->allowed);
        int per_sm = 0;
        cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
        c->fit = (int64_t)(per_sm > 0 ? per_sm : 1) * sm_count();
    }
    return c->fit;
}

/* Kernel k over `units` units: blocks of `threads`, as many as fit on the
 * SMs with smem bytes of shared memory each (persistent). */
template <typename Kernel>
static void launch_persistent(Kernel k, int threads, const DecodeTensors *t, DecodePool pool, int64_t units,
                              size_t smem, PersistentFit *c) {
    check_staged_alignment(t, pool.inter);
    const int64_t fit = persistent_fit(k, threads, smem, c);
    const unsigned grid = (unsigned)(units < fit ? units : fit);
    k<<<grid, threads, smem>>>(*t, pool, units);
    cuda_check_launch();
}

#endif  // STAGED_RING_CUH
