/* Floor probes: copy bandwidth and exp2 rate, measured once per run with
 * buffers far larger than L2. */
#include "floors.h"

#include <algorithm>
#include <stdio.h>

#include "cuda_check.h"

/* Plain float4 grid-stride copy: reads n float4, writes n float4. */
__global__ void probe_copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

/* 8 independent chains of ex2.approx.ftz.f32 per thread; the FMA that keeps
 * each chain bounded runs on the FMA pipe, which is 8x wider than the MUFU. */
__global__ void probe_exp2(float *out, int iters) {
    float x[8];
    for (int k = 0; k < 8; k++) x[k] = 0.01f * (threadIdx.x + k);
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            float y;
            asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x[k]));
            x[k] = fmaf(y, -0.5f, 0.3f);
        }
    }
    float s = 0.0f;
    for (int k = 0; k < 8; k++) s += x[k];
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* Median of 10 timed launches after 2 warm-ups. */
static double median_launch_ms(void (*launch)(void *), void *ctx) {
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start));
    cuda_check(cudaEventCreate(&stop));
    double ms[10];
    for (int r = 0; r < 12; r++) {
        cuda_check(cudaEventRecord(start));
        launch(ctx);
        cuda_check(cudaEventRecord(stop));
        cuda_check(cudaEventSynchronize(stop));
        float t;
        cuda_check(cudaEventElapsedTime(&t, start, stop));
        if (r >= 2) ms[r - 2] = t;
    }
    cuda_check(cudaEventDestroy(start));
    cuda_check(cudaEventDestroy(stop));
    std::sort(ms, ms + 10);
    return 0.5 * (ms[4] + ms[5]);
}

struct CopyProbe { const float4 *src; float4 *dst; size_t n4; int blocks; };
static void launch_copy(void *ctx) {
    CopyProbe *p = (CopyProbe *)ctx;
    probe_copy<<<p->blocks, 256>>>(p->src, p->dst, p->n4);
    cuda_check_launch();
}

struct ExpProbe { float *out; int blocks, iters; };
static void launch_exp2(void *ctx) {
    ExpProbe *p = (ExpProbe *)ctx;
    probe_exp2<<<p->blocks, 256>>>(p->out, p->iters);
    cuda_check_launch();
}

static Floors g_floors;
static bool g_probed = false;

extern "C" const Floors *floors_get(void) {
    if (g_probed) return &g_floors;
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0));

    /* Copy: 1 GiB read + 1 GiB written per launch. */
    size_t bytes = (size_t)1 << 30;
    float4 *src = NULL, *dst = NULL;
    cuda_check(cudaMalloc(&src, bytes));
    cuda_check(cudaMalloc(&dst, bytes));
    cuda_check(cudaMemset(src, 0, bytes));
    CopyProbe copy = {src, dst, bytes / sizeof(float4), prop.multiProcessorCount * 8};
    g_floors.bw_gbps = 2.0 * bytes / (median_launch_ms(launch_copy, &copy) * 1e-3) / 1e9;
    cuda_check(cudaFree(src));
    cuda_check(cudaFree(dst));

    /* exp2: 256-thread blocks, 32 blocks per SM, 8 chains x iters per thread. */
    ExpProbe ex = {NULL, prop.multiProcessorCount * 32, 4096};
    cuda_check(cudaMalloc(&ex.out, (size_t)ex.blocks * 256 * sizeof(float)));
    double exps = (double)ex.blocks * 256 * 8 * ex.iters;
    g_floors.exp_rate = exps / (median_launch_ms(launch_exp2, &ex) * 1e-3);
    g_floors.matrix_tflops = 0.0;
    cuda_check(cudaFree(ex.out));
    g_probed = true;
    return &g_floors;
}

extern "C" double floor_ms(const Floors *f, double bytes, double exps, double flops) {
    double t = bytes / (f->bw_gbps * 1e9);
    t = std::max(t, exps / f->exp_rate);
    if (f->matrix_tflops > 0.0) t = std::max(t, flops / (f->matrix_tflops * 1e12));
    return t * 1e3;
}
