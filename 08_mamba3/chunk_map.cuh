/* 08_mamba3: the chunks of a problem, listed once on the GPU, for the
 * chunked versions (4, and the fused 5 and 6). A sequence starts a chunk:
 * a rectangle's batch entries, or each sequence of a packed row, cut into
 * chunks of Q steps from its first (the last one shorter). */
#ifndef MAMBA3_CHUNK_MAP_CUH
#define MAMBA3_CHUNK_MAP_CUH

#include <stdint.h>

#include "mamba3.h"

/* map   (chunks, 2)  int64  the chunk's sequence (-1: none) and first step
 * first (n + 1,)     int64  sequence n's chunks are [first[n], first[n + 1]) */
typedef struct {
    int64_t *map, *first;
} ChunkMap;

/* The chunks a problem can have at most: each sequence one partial chunk
 * beyond its length / Q (a rectangle: ceil(L / Q) a batch entry). */
__host__ __device__ static inline int64_t max_chunks(const Mamba3Shape *s) {
    const int64_t Q = s->chunk;
    return s->nseq ? s->nseq + s->seqlen / Q : s->batch * ((s->seqlen + Q - 1) / Q);
}

/* The map's int64s: (chunks, 2) then (n + 1,). */
static inline size_t chunk_map_words(const Mamba3Shape *s) {
    return (size_t)(2 * max_chunks(s) + (s->nseq ? s->nseq : s->batch) + 1);
}

static inline ChunkMap chunk_map_at(const Mamba3Shape *s, int64_t *words) {
    ChunkMap c = {words, words + 2 * max_chunks(s)};
    return c;
}

/* One thread lists the chunks: sequence by sequence, Q steps each from the sequence's first. */
static __global__ void chunk_map_kernel(Mamba3Tensors t, ChunkMap w) {
    const int64_t n_seq = t.s.nseq ? t.s.nseq : t.s.batch, C = max_chunks(&t.s), Q = t.s.chunk;
    int64_t c = 0;
    for (int64_t n = 0; n < n_seq; n++) {
        int64_t r, t0, t1;
        mamba3_sequence(&t, n, &r, &t0, &t1);
        w.first[n] = c;
        for (int64_t c0 = t0; c0 < t1; c0 += Q, c++) w.map[2 * c] = n, w.map[2 * c + 1] = c0;
    }
    w.first[n_seq] = c;
    for (; c < C; c++) w.map[2 * c] = -1, w.map[2 * c + 1] = 0;
}

/* Chunk c of the map: its row r and steps [c0, c0 + m); false for a slot
 * the map left empty. */
__device__ static inline bool chunk_of(const Mamba3Tensors &t, const ChunkMap &w, int64_t c, int64_t *r,
                                       int64_t *c0, int64_t *m) {
    const int64_t n = w.map[2 * c];
    if (n < 0) return false;
    int64_t t0, t1;
    mamba3_sequence(&t, n, r, &t0, &t1);
    *c0 = w.map[2 * c + 1];
    *m = t1 - *c0 < t.s.chunk ? t1 - *c0 : t.s.chunk;
    return true;
}

#endif
