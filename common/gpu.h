/* The GPU side of the harness, callable from C: is a device usable, the
 * device-memory tracker (peak and workspace MiB), and the CUDA-event timer
 * that flushes L2 between repetitions. */
#ifndef GPU_H
#define GPU_H

#include <stdbool.h>
#include <stddef.h>

/* True when a CUDA device can be used. False (and the reason in
 * gpu_unavailable_reason) on cudaErrorNoDevice, cudaErrorInsufficientDriver
 * or any failure of the device query. Queried once, then cached. */
bool gpu_available(void);
const char *gpu_unavailable_reason(void);
const char *gpu_name(void);        // "NVIDIA H200", or "cpu" without a device
size_t gpu_l2_bytes(void);
size_t gpu_free_bytes(void);

/* ---- device-memory tracker ---- */
typedef enum { MEM_INPUT, MEM_OUTPUT, MEM_WORKSPACE } MemRole;

/* cudaMalloc through the tracker. If the device cannot hold it, prints one
 * line naming `what` and the bytes and exits 2. */
void *dev_alloc(size_t bytes, MemRole role, const char *what);
void dev_free(void *p);
/* Fill with 0xff bytes: NaN in fp32 and fp16, so unwritten outputs fail checks. */
void dev_poison(void *p, size_t bytes);
void mem_reset_peak(void);          // start of one forward's accounting
double mem_peak_mib(void);          // largest live total since the reset
double mem_workspace_mib(void);     // that peak minus inputs and outputs live then

/* Copies (checked). d2d_rows: `rows` rows of row_bytes, each dst_pitch
 * apart at dst and src_pitch apart at src, device to device. */
void h2d(void *dst, const void *src, size_t bytes);
void d2h(void *dst, const void *src, size_t bytes);
void d2d_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t row_bytes, size_t rows);
void gpu_sync(void);

/* ---- timer ---- */
typedef void (*GpuFn)(void *ctx);
typedef struct { double median_ms, min_ms; int reps; } Timing;

/* Runs fn a few times to warm up, then `reps` times (>= 20), each preceded by
 * a write of a buffer twice the L2 size and timed alone with CUDA events.
 * per_thread: fn's kernels go to the per-thread default stream (nvcc
 * --default-stream per-thread), so the write and the events go there too;
 * on the legacy default stream, its implicit synchronization with that
 * stream would be timed with the kernels. */
Timing gpu_time(GpuFn fn, void *ctx, int reps, bool per_thread);

/* The token loop as it runs: `steps` calls of fn back to back with no L2
 * flush (the state stays in L2 where it fits), launched one by one or, with
 * graph, captured once into a CUDA graph and replayed; `reps` (>= 20) loops
 * after a warm-up one. fn's kernels must go to the per-thread default stream
 * (nvcc --default-stream per-thread) to be captured. Times are per step. */
Timing gpu_time_loop(GpuFn fn, void *ctx, int steps, bool graph, int reps);

#endif
