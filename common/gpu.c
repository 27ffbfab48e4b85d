/* The GPU side of the harness in plain C over the CUDA runtime API. */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "cuda_check.h"

/* ---- device presence ---- */

static int g_state = -1;  // -1 not queried, 0 unusable, 1 usable
static char g_reason[256];
static struct cudaDeviceProp g_prop;

bool gpu_available(void) {
    if (g_state >= 0) return g_state == 1;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count == 0) err = cudaErrorNoDevice;
    if (err == cudaSuccess) err = cudaGetDeviceProperties(&g_prop, 0);
    if (err == cudaSuccess) err = cudaSetDevice(0);
    if (err != cudaSuccess) {
        /* The runtime reports a machine without a driver as a driver too old:
         * tell the two apart by looking for the driver's library. */
        void *driver = err == cudaErrorInsufficientDriver ? dlopen("libcuda.so.1", RTLD_LAZY) : NULL;
        if (err == cudaErrorInsufficientDriver && !driver)
            snprintf(g_reason, sizeof(g_reason), "no CUDA driver on this machine: libcuda.so.1 not found");
        else if (err == cudaErrorNoDevice)
            snprintf(g_reason, sizeof(g_reason), "no CUDA device on this machine");
        else
            snprintf(g_reason, sizeof(g_reason), "no usable CUDA device: %s", cudaGetErrorString(err));
        if (driver) dlclose(driver);
        g_state = 0;
        return false;
    }
    g_state = 1;
    return true;
}

const char *gpu_unavailable_reason(void) { return g_reason; }
const char *gpu_name(void) { return gpu_available() ? g_prop.name : "cpu"; }
size_t gpu_l2_bytes(void) { return gpu_available() ? (size_t)g_prop.l2CacheSize : 0; }

size_t gpu_free_bytes(void) {
    size_t free_b = 0, total_b = 0;
    cuda_check(cudaMemGetInfo(&free_b, &total_b));
    return free_b;
}

/* ---- device-memory tracker ---- */

#define MAX_LIVE 64
static struct { void *p; size_t bytes; MemRole role; } g_live[MAX_LIVE];
static size_t g_bytes[3];            // live bytes per role
static size_t g_peak, g_peak_io;     // peak total, and inputs+outputs at that peak

void *dev_alloc(size_t bytes, MemRole role, const char *what) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        cudaGetLastError();  // clear the sticky allocation error
        fprintf(stderr, "%s: cannot allocate %zu bytes (%.1f MiB) of device memory for %s: %s\n",
                g_prog, bytes, bytes / 1048576.0, what, cudaGetErrorString(err));
        exit(EXIT_USAGE);
    }
    int slot = -1;
    for (int i = 0; i < MAX_LIVE && slot < 0; i++)
        if (!g_live[i].p) slot = i;
    if (slot < 0) {
        fprintf(stderr, "%s: more than %d live device buffers\n", g_prog, MAX_LIVE);
        exit(EXIT_FAIL);
    }
    g_live[slot].p = p;
    g_live[slot].bytes = bytes;
    g_live[slot].role = role;
    g_bytes[role] += bytes;
    size_t total = g_bytes[MEM_INPUT] + g_bytes[MEM_OUTPUT] + g_bytes[MEM_WORKSPACE];
    if (total > g_peak) {
        g_peak = total;
        g_peak_io = g_bytes[MEM_INPUT] + g_bytes[MEM_OUTPUT];
    }
    return p;
}

void dev_free(void *p) {
    if (!p) return;
    for (int i = 0; i < MAX_LIVE; i++) {
        if (g_live[i].p == p) {
            g_bytes[g_live[i].role] -= g_live[i].bytes;
            g_live[i].p = NULL;
            cuda_check(cudaFree(p));
            return;
        }
    }
    fprintf(stderr, "%s: dev_free of an untracked pointer\n", g_prog);
    exit(EXIT_FAIL);
}

void dev_poison(void *p, size_t bytes) { cuda_check(cudaMemset(p, 0xff, bytes)); }

void mem_reset_peak(void) {
    g_peak = g_bytes[MEM_INPUT] + g_bytes[MEM_OUTPUT] + g_bytes[MEM_WORKSPACE];
    g_peak_io = g_bytes[MEM_INPUT] + g_bytes[MEM_OUTPUT];
}

double mem_peak_mib(void) { return g_peak / 1048576.0; }
double mem_workspace_mib(void) { return (g_peak - g_peak_io) / 1048576.0; }

void h2d(void *dst, const void *src, size_t bytes) {
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
void d2h(void *dst, const void *src, size_t bytes) {
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
void d2d_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t row_bytes, size_t rows) {
    cuda_check(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice));
}
void gpu_sync(void) { cuda_check(cudaDeviceSynchronize()); }

/* ---- timer ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and minimum of reps times in ms (sorted in place), then freed. */
static Timing timing_of(double *ms, int reps) {
    qsort(ms, reps, sizeof(double), cmp_double);
    Timing out = {reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]), ms[0], reps};
    free(ms);
    return out;
}

Timing gpu_time(GpuFn fn, void *ctx, int reps, bool per_thread) {
    if (reps < 20) reps = 20;
    /* Writing twice the L2 size evicts what the last repetition left there,
     * as triton.testing.do_bench does. The buffer and the events are made
     * once per run (untracked: not part of a forward). */
    static void *flush = NULL;
    static cudaEvent_t start, stop;
    size_t flush_bytes = 2 * gpu_l2_bytes();
    if (!flush) {
        cuda_check(cudaMalloc(&flush, flush_bytes));
        cuda_check(cudaEventCreate(&start));
        cuda_check(cudaEventCreate(&stop));
    }
    const cudaStream_t stream = per_thread ? cudaStreamPerThread : 0;
    for (int i = 0; i < 3; i++) fn(ctx);  // warm-up
    cuda_check(cudaDeviceSynchronize());
    double *ms = malloc(sizeof(double) * reps);
    if (!ms) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(EXIT_FAIL); }
    for (int r = 0; r < reps; r++) {
        cuda_check(cudaMemsetAsync(flush, r & 0xff, flush_bytes, stream));
        cuda_check(cudaEventRecord(start, stream));
        fn(ctx);
        cuda_check(cudaEventRecord(stop, stream));
        cuda_check(cudaEventSynchronize(stop));
        float t = 0.0f;
        cuda_check(cudaEventElapsedTime(&t, start, stop));
        ms[r] = t;
    }
    Timing out = timing_of(ms, reps);
    return out;
}

Timing gpu_time_loop(GpuFn fn, void *ctx, int steps, bool graph, int reps) {
    if (reps < 20) reps = 20;
    cudaStream_t stream = cudaStreamPerThread;
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start));
    cuda_check(cudaEventCreate(&stop));
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    if (graph) {
        cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < steps; i++) fn(ctx);
        cuda_check(cudaStreamEndCapture(stream, &g));
        cuda_check(cudaGraphInstantiate(&exec, g, 0));
    }
    double *ms = malloc(sizeof(double) * reps);
    if (!ms) { fprintf(stderr, "%s: out of host memory\n", g_prog); exit(EXIT_FAIL); }
    for (int r = -1; r < reps; r++) {  // r = -1: warm-up
        cuda_check(cudaEventRecord(start, stream));
        if (graph) cuda_check(cudaGraphLaunch(exec, stream));
        else for (int i = 0; i < steps; i++) fn(ctx);
        cuda_check(cudaEventRecord(stop, stream));
        cuda_check(cudaEventSynchronize(stop));
        float t = 0.0f;
        cuda_check(cudaEventElapsedTime(&t, start, stop));
        if (r >= 0) ms[r] = t / steps;
    }
    Timing out = timing_of(ms, reps);
    if (graph) {
        cuda_check(cudaGraphExecDestroy(exec));
        cuda_check(cudaGraphDestroy(g));
    }
    cuda_check(cudaEventDestroy(start));
    cuda_check(cudaEventDestroy(stop));
    return out;
}
