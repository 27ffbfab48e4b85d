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

static double median_ms(double *ms, int n) {
    std::sort(ms, ms + n);
    return ms[n / 2];
}

static Floors g_floors;
static bool g_probed = false;

extern "C" const Floors *floors_get(void) {
    if (g_probed) return &g_floors;
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0));
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start));
    cuda_check(cudaEventCreate(&stop));
    double ms[10];

    /* Copy: 1 GiB read + 1 GiB written per repetition. */
    size_t bytes = (size_t)1 << 30, n4 = bytes / sizeof(float4);
    float4 *src = NULL, *dst = NULL;
    cuda_check(cudaMalloc(&src, bytes));
    cuda_check(cudaMalloc(&dst, bytes));
    cuda_check(cudaMemset(src, 0, bytes));
    int blocks = prop.multiProcessorCount * 8;
    for (int r = 0; r < 12; r++) {
        cuda_check(cudaEventRecord(start));
        probe_copy<<<blocks, 256>>>(src, dst, n4);
        cuda_check_launch();
        cuda_check(cudaEventRecord(stop));
        cuda_check(cudaEventSynchronize(stop));
        float t;
        cuda_check(cudaEventElapsedTime(&t, start, stop));
        if (r >= 2) ms[r - 2] = t;
    }
    g_floors.bw_gbps = 2.0 * bytes / (median_ms(ms, 10) * 1e-3) / 1e9;
    cuda_check(cudaFree(src));
    cuda_check(cudaFree(dst));

    /* exp2: 256-thread blocks, 32 blocks per SM, 8 chains x iters per thread. */
    int eblocks = prop.multiProcessorCount * 32, iters = 4096;
    float *out = NULL;
    cuda_check(cudaMalloc(&out, (size_t)eblocks * 256 * sizeof(float)));
    for (int r = 0; r < 12; r++) {
        cuda_check(cudaEventRecord(start));
        probe_exp2<<<eblocks, 256>>>(out, iters);
        cuda_check_launch();
        cuda_check(cudaEventRecord(stop));
        cuda_check(cudaEventSynchronize(stop));
        float t;
        cuda_check(cudaEventElapsedTime(&t, start, stop));
        if (r >= 2) ms[r - 2] = t;
    }
    double exps = (double)eblocks * 256 * 8 * iters;
    g_floors.exp_rate = exps / (median_ms(ms, 10) * 1e-3);
    g_floors.matrix_tflops = 0.0;
    cuda_check(cudaFree(out));
    cuda_check(cudaEventDestroy(start));
    cuda_check(cudaEventDestroy(stop));
    g_probed = true;
    return &g_floors;
}

extern "C" double floor_ms(const Floors *f, double bytes, double exps, double flops) {
    double t = bytes / (f->bw_gbps * 1e9);
    t = std::max(t, exps / f->exp_rate);
    if (f->matrix_tflops > 0.0) t = std::max(t, flops / (f->matrix_tflops * 1e12));
    return t * 1e3;
}
