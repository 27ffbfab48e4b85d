/* Floor probes: copy bandwidth and exp2 rate, measured once per run with
 * buffers far larger than L2, and the tensor-core rates: fp16 mma.sync with
 * fp32 accumulate here, dense wgmma in wgmma_probe.cu (sm_90a only). */
#include "floors.h"

#include <algorithm>
#include <cuda_fp16.h>
#include <stdio.h>
#include <string.h>

#include "cuda_check.h"
#include "wgmma_probe.h"

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

/* Tensor cores: fp16 mma.sync with fp32 accumulate, the instruction the
 * tensor-core SSD kernels issue (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32,
 * SASS HMMA.16816.F32), 2·16·8·16 = 4096 FLOPs each. Every warp runs
 * kMmaChains independent accumulator chains back to back, operands in
 * registers, so the tensor pipe always has work while an mma's latency runs
 * out. This is what mma.sync reaches, below the dense wgmma peak
 * (wgmma_probe.cu): the floor's matrix rate where wgmma cannot run, and the
 * lower roof of the roofline figure. The small operands keep the sums far
 * from overflow; the sums are stored, so nothing can be dropped. */
constexpr int kMmaChains = 8;
constexpr int kMmaThreads = 256;

__global__ void __launch_bounds__(kMmaThreads) probe_mma(float *out, int iters) {
    const __half2 a_val = __floats2half2_rn(0.01f, 0.001f * (threadIdx.x % 8));
    const __half2 b_val = __floats2half2_rn(0.02f, 0.002f * (threadIdx.x % 4));
    unsigned a, b;  // a half2 each: A takes 4 registers, B 2
    memcpy(&a, &a_val, sizeof a);
    memcpy(&b, &b_val, sizeof b);
    float acc[kMmaChains][4] = {};
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < kMmaChains; k++)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[k][0]), "+f"(acc[k][1]), "+f"(acc[k][2]), "+f"(acc[k][3])
                : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b));
    }
    float s = 0.0f;
    for (int k = 0; k < kMmaChains; k++) s += (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]);
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

struct MmaProbe { float *out; int blocks, iters; };
static void launch_mma(void *ctx) {
    MmaProbe *p = (MmaProbe *)ctx;
    probe_mma<<<p->blocks, kMmaThreads>>>(p->out, p->iters);
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
    cuda_check(cudaFree(ex.out));

    /* mma.sync: one full wave (as many blocks as fit on every SM at once),
     * 8 chains x 4096 iterations per warp: long enough that launch costs vanish. */
    int per_sm = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe_mma, kMmaThreads, 0));
    MmaProbe mma = {NULL, prop.multiProcessorCount * std::max(per_sm, 1), 4096};
    cuda_check(cudaMalloc(&mma.out, (size_t)mma.blocks * kMmaThreads * sizeof(float)));
    double flops = (double)mma.blocks * (kMmaThreads / 32) * kMmaChains * mma.iters * (2.0 * 16 * 8 * 16);
    g_floors.mma_sync_tflops = flops / (median_launch_ms(launch_mma, &mma) * 1e-3) / 1e12;
    cuda_check(cudaFree(mma.out));

    /* Dense wgmma (0 without sm_90a code or off compute capability 9.0): where
     * the device has it, the tensor cores' peak, and the floor's matrix rate. */
    g_floors.wgmma_fp16_tflops = wgmma_probe_tflops(0, median_launch_ms);
    g_floors.wgmma_bf16_tflops = wgmma_probe_tflops(1, median_launch_ms);
    g_floors.matrix_tflops =
        g_floors.wgmma_fp16_tflops > 0.0 ? g_floors.wgmma_fp16_tflops : g_floors.mma_sync_tflops;
    g_probed = true;
    return &g_floors;
}

extern "C" double floor_ms(const Floors *f, double bytes, double exps, double flops) {
    double t = bytes / (f->bw_gbps * 1e9);
    t = std::max(t, exps / f->exp_rate);
    if (f->matrix_tflops > 0.0) t = std::max(t, flops / (f->matrix_tflops * 1e12));
    return t * 1e3;
}
