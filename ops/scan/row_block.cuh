/* The map of a fused Mamba-1 scan block's threads onto channels, shared by
 * 03's and 04's tiled versions (scan_tiles.cuh) and 04's versions 2-7
 * (lanes16.cuh). A block is kThreads threads on `rows` consecutive channels
 * of one (batch, group), S lanes per channel (S = kThreads / rows), each lane
 * a slice of the channel's states; block x = channel block of a group,
 * y = b·G + g. */
#ifndef SCAN_ROW_BLOCK_CUH
#define SCAN_ROW_BLOCK_CUH

#include <stdint.h>

#include "scan.h"

constexpr int kThreads = 128;  // threads per block: rows x S lanes

/* Where the block and this thread sit: the block's rows (the tiled versions
 * walk them all) and this thread's own row (04's versions 2-7 keep to it). */
struct RowBlock {
    int S, rows;     // lanes per row, rows per block (rows·S = kThreads)
    int r, s;        // this thread's row in the block and its lane (slice of the states)
    int nvalid;      // rows of the block that exist: a group can end inside the block
    int64_t bg;      // b·G + g, the block's slice of B and C
    int64_t c0;      // channel of the block's first row
    int64_t row0;    // b·d + c0
    bool valid;      // this thread's row exists (r < nvalid)
    int64_t c;       // this thread's channel (the group's first for an invalid row)
    int64_t row;     // b·d + c
};

static __device__ RowBlock row_block(const ScanShape &s, int S) {
    RowBlock w;
    w.S = S;
    w.rows = kThreads / S;
    w.r = threadIdx.x / S;
    w.s = threadIdx.x % S;
    const int64_t per_group = s.dim / s.groups;
    const int64_t first = (int64_t)blockIdx.x * w.rows;  // channel index inside the group
    const int64_t b = blockIdx.y / s.groups, g = blockIdx.y % s.groups;
    w.bg = blockIdx.y;
    w.c0 = g * per_group + first;
    w.row0 = b * s.dim + w.c0;
    w.nvalid = (int)min((int64_t)w.rows, per_group - first);
    w.valid = first + w.r < per_group;
    w.c = g * per_group + (w.valid ? first + w.r : 0);
    w.row = b * s.dim + w.c;
    return w;
}

#endif
