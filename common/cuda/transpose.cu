/* The batched transpose of transpose.h. */
#include "transpose.h"

#include "cuda_check.h"

constexpr int kTile = 32;  // tiles of 32 x 32, blocks of 32 x 8 threads

static __host__ __device__ __forceinline__ int64_t tiles_of(int64_t n) { return (n + kTile - 1) / kTile; }

/* Through a shared 32 x 32 tile (one column of padding against bank
 * conflicts), so that both the reads and the writes are coalesced. Blocks:
 * (batch, row tile, column tile) flattened, grid-stride. Bytes: read once,
 * written once. */
__global__ void __launch_bounds__(kTile * 8) transpose_kernel(float *dst,        // (batch, cols, rows) fp32
                                                             const float *src,  // (batch, rows, cols) fp32
                                                             int64_t batch, int64_t rows, int64_t cols) {
    __shared__ float tile[kTile][kTile + 1];
    const int64_t row_tiles = tiles_of(rows), col_tiles = tiles_of(cols);
    for (int64_t blk = blockIdx.x; blk < batch * row_tiles * col_tiles; blk += gridDim.x) {
        const int64_t tc = blk % col_tiles, tr = (blk / col_tiles) % row_tiles, bt = blk / (col_tiles * row_tiles);
        const int64_t r0 = tr * kTile, c0 = tc * kTile;
        const float *in = src + bt * rows * cols;  // (rows, cols) of batch entry bt
        float *out = dst + bt * rows * cols;       // (cols, rows) of batch entry bt
        for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
            const int64_t r = r0 + k, c = c0 + threadIdx.x;
            if (r < rows && c < cols) tile[k][threadIdx.x] = in[r * cols + c];
        }
        __syncthreads();
        for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
            const int64_t c = c0 + k, r = r0 + threadIdx.x;
            if (r < rows && c < cols) out[c * rows + r] = tile[threadIdx.x][k];
        }
        __syncthreads();
    }
}

extern "C" void transpose_batched(float *dst, const float *src, int64_t batch, int64_t rows, int64_t cols) {
    const int64_t blocks = batch * tiles_of(rows) * tiles_of(cols);
    const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    transpose_kernel<<<grid, dim3(kTile, 8)>>>(dst, src, batch, rows, cols);
    cuda_check_launch();
}
