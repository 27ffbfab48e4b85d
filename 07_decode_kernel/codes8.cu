/* 07_decode_kernel, GPU: versions 17-20, decode_lean_state_int8, _int8_sr,
 * decode_lean_state_fp8 and _fp8_sr: versions 13-16 on the GPU (x, dt, z,
 * B, C, y fp32). What changed from version 6: the state moves as one byte a
 * value and 4 bytes a row (its scale, common/codes8.h), a quarter of 6's
 * state bytes; what it should buy: a step near that quarter's copy time, if
 * the instructions an element adds (a max, the rounding, the decode) stay
 * under the memory time. The kernel's comment says how.
 * Bytes: 2·b·(d or h·p)·(N + 4) for the state, plus x, dt, z, B, C, y in
 * fp32 a token. Exps: as version 6.
 * SKIPs N not a multiple of 16 or above 512 (a lane's 16 codes are one
 * 16-byte load; at most 32 lanes a row). */
#include "kernels.h"

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <limits.h>
#include <stdint.h>

#include "codes8.h"
#include "cuda_check.h"
#include "lanes.cuh"

constexpr int kCodeThreads = 256;  // threads per block
constexpr int kCodesPerLane = 16;  // codes a lane: one 16-byte load
constexpr int kCodeRows = 4;       // R: rows a thread, of one head (M2) or entry (M1): B and C loaded once for them

/* int8 codes without the conversion pipe (I2F and F2I issue at a quarter of
 * the FMA rate on sm_90, and a step would spend two an element). There:
 * 1.5·2^23 + x, for |x| < 2^22, lies in [2^23, 2^24), where a float's step
 * is 1, so the sum is 1.5·2^23 + x rounded to an integer by the add's mode,
 * and x's two's complement is its low mantissa byte (1.5·2^23's is 0).
 * Back: b ^ 0x80 = b + 128, in 0..255, as the low byte under 2^23's
 * exponent bits (0x4b000000) is the float 2^23 + b + 128; less 2^23 + 128,
 * b exactly. */
constexpr float kRoundInt = 12582912.f;        // 1.5·2^23
constexpr float kOffsetInt = 8388608.f + 128.f;  // 2^23 + 128

/* The code of x (a value times its row's 1 / scale), as a byte: int8 an
 * integer in -127..127, to the nearest (the add rounds to nearest even) or
 * SR floor(x + u) (the add rounds down), as round_to_grid (codes8.h); e4m3
 * on e4m3's grid (3 mantissa bits: a step of 2^(e-3) in [2^e, 2^(e+1)),
 * 2^-9 below 2^-6), to the nearest by the converter or SR floor(x / step +
 * u)·step in registers and then converted exactly. */
template <Codes8 CODE, bool SR>
static __device__ __forceinline__ uint32_t code_byte(float x, float u) {
    if constexpr (CODE == CODES_INT8) {
        float k = SR ? __fadd_rd(__fadd_rn(x, u), kRoundInt) : __fadd_rn(x, kRoundInt);
        // nearest: |x| is 127 and a few ulps at most, which rounds to ±127; floor(x + u) can reach ±128
        if constexpr (SR) k = fminf(fmaxf(k, kRoundInt - INT8_CODE_MAX), kRoundInt + INT8_CODE_MAX);
        return __float_as_uint(k) & 0xffu;
    } else {
        if constexpr (SR) {
            const float v = fabsf(x);
            const int e = max((int)((__float_as_uint(v) >> 23) & 0xff) - 127, -6);  // v's binade, -6 below 2^-6
            const float step = __uint_as_float((uint32_t)(e - 3 + 127) << 23);       // 2^(e-3)
            const float k = v * __uint_as_float((uint32_t)(3 - e + 127) << 23);      // v / step, exact
            x = copysignf(fminf(floorf(__fadd_rn(k, u)) * step, E4M3_MAX), x);
        }
        return (uint32_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    }
}

/* The 16 codes of a uint4 (byte i of word i / 4) as values: code · scale. */
template <Codes8 CODE>
static __device__ __forceinline__ void widen_codes(uint4 q, float scale, float (&v)[kCodesPerLane]) {
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};  // (4,) uint32: 4 codes a word
#pragma unroll
    for (int i = 0; i < kCodesPerLane; i++) {
        float code;
        if constexpr (CODE == CODES_INT8) {
            // byte_perm: the word's byte i % 4 (as offset binary), then 0x00, 0x00, 0x4b: 2^23 + b + 128
            code = __uint_as_float(__byte_perm(words[i / 4] ^ 0x80808080u, 0x4b000000u, 0x7650 + i % 4)) - kOffsetInt;
        } else {
            const uint32_t b = (words[i / 4] >> (8 * (i % 4))) & 0xffu;
            code = __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, __NV_E4M3)));
        }
        v[i] = code * scale;
    }
}

/* A lane's 16 fp32 values at p (16-byte aligned), 0 past the row. */
static __device__ __forceinline__ void load_lane(const float *p, bool in_row, float (&v)[kCodesPerLane]) {
#pragma unroll
    for (int i = 0; i < kCodesPerLane; i += 4) {
        const float4 q = in_row ? *reinterpret_cast<const float4 *>(p + i) : make_float4(0.f, 0.f, 0.f, 0.f);
        v[i] = q.x, v[i + 1] = q.y, v[i + 2] = q.z, v[i + 3] = q.w;
    }
}

/* What a launch needs beyond the tensors: where the scales start and the
 * server's pool. */
struct CodesLaunch {
    int64_t state_scales;  // byte offset of the scales in state and state_out: codes8_scales_at(pool rows·N)
    int64_t inter_scales;  // the same in the intermediate states: codes8_scales_at(b·T·rows·N)
    DecodePool pool;       // slot of each entry and the intermediate states (NULL: none)
};

/* S lanes a row (a power of two, 16·S >= N: M2 N 128 8 lanes, M1 N 16 one),
 * 16 codes a lane, one 16-byte load. Each group of S lanes takes a unit of
 * R consecutive rows of one head (M2) or one batch entry (M1), so that B
 * and C (and M2's Δ and dA) are loaded once for R rows: B and C are 8 bytes
 * an element from L1 against the code's one from DRAM, and sharing them
 * keeps their L1 traffic from outpacing the codes'. Unit: M2 (b, h, p / R),
 * M1 (b, c / R); a row past the head's p (or the entry's d) is not valid.
 * The state's rows are the slot's (a pool) or the entry's.
 * Between tokens a row stays as its codes and scale (5 registers a row);
 * each token decodes it into fp32, updates it as version 6 does and writes
 * y from the fp32 values; then the row's largest |value| (a max over its
 * lanes, like y's sum) gives the new scale (codes8_scale's) and each value
 * is rounded to a code, so that the next token starts from what memory
 * holds and one launch of T tokens stores exactly what T launches of one
 * would (make check holds it to that). A stochastic rounding draws its
 * number from (slot, token, element) (codes8_key, codes8_uniform). */
template <Codes8 CODE, bool SR, bool M2, int S>
__global__ void __launch_bounds__(kCodeThreads) decode_codes8_kernel(DecodeTensors t, CodesLaunch L) {
    constexpr int R = kCodeRows;
    const DecodeShape s = t.s;
    const int64_t N = s.dstate, T = s.tokens;
    const int64_t width = M2 ? s.heads * s.headdim : s.dim;  // rows of an entry: x, z, y per token
    const int64_t run = M2 ? s.headdim : s.dim;               // rows that share B and C: a head's, an entry's
    const int64_t per_run = ceil_div(run, R);                 // units of a run
    const int64_t units = s.batch * (M2 ? s.heads : 1) * per_run;
    const int64_t unit = (int64_t)blockIdx.x * (kCodeThreads / S) + threadIdx.x / S;  // this lane group's
    const int sub = threadIdx.x % S;
    const bool in_row = (int64_t)sub * kCodesPerLane < N;  // this lane's 16 values are in the row
    const int64_t e0 = (int64_t)sub * kCodesPerLane;       // its first element
    const float *x = static_cast<const float *>(t.x);      // M1 (b, T, d)  M2 (b, T, h, p)  fp32
    const float *dt = static_cast<const float *>(t.dt);    // M1 (b, T, d)  M2 (b, T, h)     fp32
    const float *B = static_cast<const float *>(t.B);      // M1 (b, T, N)  M2 (b, T, g, N)  fp32
    const float *C = static_cast<const float *>(t.C);      // like B
    const float *z = static_cast<const float *>(t.z);      // like x, NULL without z
    float *y = static_cast<float *>(t.y);                  // like x, written
    const uint8_t *codes = reinterpret_cast<const uint8_t *>(t.state);  // (pool rows, N) codes, then the scales
    uint8_t *codes_out = reinterpret_cast<uint8_t *>(t.state_out);     // like state, written
    const float *scales = reinterpret_cast<const float *>(codes + L.state_scales);  // (pool rows,) fp32
    float *scales_out = reinterpret_cast<float *>(codes_out + L.state_scales);     // like scales, written
    uint8_t *inter = static_cast<uint8_t *>(L.pool.inter);  // (b, T, rows, N) codes, then scales; NULL: none
    float *inter_scales = inter ? reinterpret_cast<float *>(inter + L.inter_scales) : nullptr;  // (b, T, rows) fp32

    /* The unit's batch entry, head (M2) and first row in the entry, by
     * 32-bit divisions (units < 2^31: decode_codes8_unsupported; a 64-bit
     * division is a long software routine). */
    const uint32_t u32 = unit < units ? (uint32_t)unit : 0u, run_units = (uint32_t)per_run;
    const uint32_t unit_in_run = u32 % run_units, run_index = u32 / run_units;  // run: (b, h) or b
    const int64_t bi = M2 ? run_index / (uint32_t)s.heads : run_index;
    const int64_t hi = M2 ? run_index % (uint32_t)s.heads : 0;
    const int64_t c0 = (M2 ? hi * s.headdim : 0) + (int64_t)unit_in_run * R;
    const int64_t bc_group = M2 ? hi / (s.heads / s.groups) : 0;  // M2: the head's group of B and C
    const int64_t slot = unit >= units ? -1 : L.pool.slot_of ? L.pool.slot_of[bi] : bi;  // negative: padding
    bool valid[R], live[R];  // row c0 + j exists; and is not padding
    /* The lane's codes of its rows and the rows' scales, held from token to
     * token as memory holds them (a row is decoded where it is used): 5
     * registers a row where its fp32 values would take 16, so that R rows'
     * loads are in flight at once. */
    uint4 q[R];   // (R,) the lane's 16 codes of each row
    float sc[R];  // (R,) fp32: the rows' scales
#pragma unroll
    for (int j = 0; j < R; j++) {
        valid[j] = unit < units && (int64_t)unit_in_run * R + j < run;
        live[j] = valid[j] && slot >= 0;
        const int64_t sr = live[j] ? slot * width + c0 + j : 0;  // the state's row
        q[j] = live[j] && in_row ? __ldcs(reinterpret_cast<const uint4 *>(codes + sr * N + e0)) : make_uint4(0u, 0u, 0u, 0u);
        sc[j] = live[j] ? scales[sr] : 0.f;
    }
    const bool any = live[0];  // the unit has a live row (its first one, when any)
    for (int64_t tok = 0; tok < T; tok++) {
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc = ((bi * T + tok) * (M2 ? s.groups : 1) + bc_group) * N;
        float Bv[kCodesPerLane], Cv[kCodesPerLane];  // the lane's B and C, the R rows' own
        load_lane(B + bc + e0, any && in_row, Bv);
        load_lane(C + bc + e0, any && in_row, Cv);
        const int64_t at = (bi * T + tok) * width + c0;  // x, z, y of row c0
        float delta_head = 0.f, dA_head = 1.f;            // M2: the head's Δ and dA
        if constexpr (M2) {
            // dt = F.softplus(dt + dt_bias) if dt_softplus else dt + dt_bias: delta_poly (lanes.cuh)
            delta_head = any ? delta_poly(dt[(bi * T + tok) * s.heads + hi], t.dt_bias ? t.dt_bias[hi] : 0.f,
                                          s.softplus) : 0.f;
            // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
            dA_head = exp2_approx(delta_head * LOG2E_F * t.A[hi]);
        }
        const uint32_t key = SR ? codes8_key((uint64_t)slot, (uint64_t)(s.first_token + tok)) : 0u;
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int64_t c = c0 + j;  // the row in the entry
            const float xv = live[j] ? x[at + j] : 0.f;
            // M1: dt = F.softplus(dt + dt_bias) if dt_softplus else dt + dt_bias, the channel's own
            const float delta = M2 ? delta_head
                                   : live[j] ? delta_poly(dt[at + j], t.dt_bias ? t.dt_bias[c] : 0.f, s.softplus) : 0.f;
            float Av[kCodesPerLane];  // M1: A of the lane's elements
            if constexpr (!M2) load_lane(t.A + c * N + e0, live[j] && in_row, Av);
            const float d2 = delta * LOG2E_F, dx = delta * xv;
            float h[kCodesPerLane];  // the lane's values of row j, fp32
            widen_codes<CODE>(q[j], sc[j], h);
            float acc = 0.f, top = 0.f;  // the lane's share of Σ_n h·C, its largest |h|
#pragma unroll
            for (int i = 0; i < kCodesPerLane; i++) {
                // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                const float dA = M2 ? dA_head : exp2_approx(d2 * Av[i]);
                // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1")), dB = dt·B: as B·(dt·x)
                h[i] = fmaf(Bv[i], dx, h[i] * dA);
                // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                acc = fmaf(h[i], Cv[i], acc);
                top = fmaxf(top, fabsf(h[i]));
            }
            for (int off = S / 2; off > 0; off /= 2) {
                acc += __shfl_xor_sync(0xffffffffu, acc, off);
                top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, off));
            }
            if (sub == 0 && valid[j]) {  // padding: y = 0
                float out = acc;
                // if D is not None: out += (x * D).to(out.dtype)
                if (t.D) out += xv * t.D[M2 ? hi : c];
                // return (out if z is None else out * F.silu(z)).to(x.dtype)
                if (z && live[j]) out *= silu(z[at + j]);
                y[at + j] = live[j] ? out : 0.f;
            }
            /* The row to codes: the scale of its largest value, each value
             * rounded (codes8_store_row, codes8.h); the next token decodes them. */
            const float scale = codes8_scale_of_max(top, codes8_max(CODE));
            const float inv = __frcp_rn(scale);
            uint32_t w[4] = {0u, 0u, 0u, 0u};  // (4,) uint32: the lane's 16 new codes, 4 a word
#pragma unroll
            for (int i = 0; i < kCodesPerLane; i++) {
                const float uniform = SR ? codes8_uniform(key, (uint64_t)(c * N + e0 + i)) : 0.f;
                w[i / 4] |= code_byte<CODE, SR>(__fmul_rn(h[i], inv), uniform) << (8 * (i % 4));
            }
            q[j] = make_uint4(w[0], w[1], w[2], w[3]);
            sc[j] = scale;
            if (inter && valid[j]) {  // padding: codes 0, scale 0
                const int64_t ir = (bi * T + tok) * width + c;
                if (in_row) *reinterpret_cast<uint4 *>(inter + ir * N + e0) = live[j] ? q[j] : make_uint4(0u, 0u, 0u, 0u);
                if (sub == 0) inter_scales[ir] = live[j] ? scale : 0.f;
            }
            if (tok + 1 == T && live[j]) {
                const int64_t sr = slot * width + c;
                if (in_row) __stcs(reinterpret_cast<uint4 *>(codes_out + sr * N + e0), q[j]);
                if (sub == 0) scales_out[sr] = scale;
            }
        }
    }
}

/* ---- Host side ---- */

/* Units of R rows: (b, h, p / R) or (b, d / R). */
static int64_t codes8_units(const DecodeShape *s) {
    return s->form == DECODE_M2 ? s->batch * s->heads * ceil_div(s->headdim, kCodeRows)
                                : s->batch * ceil_div(s->dim, kCodeRows);
}

extern "C" const char *decode_codes8_unsupported(const DecodeShape *s) {
    if (s->dstate % kCodesPerLane != 0 || s->dstate > 32 * kCodesPerLane)
        return "N not a multiple of 16 up to 512: a lane's 16 codes are one 16-byte load, a row 32 lanes at most";
    if (codes8_units(s) > INT_MAX) return "more than 2^31 - 1 units of rows";
    return NULL;
}

template <Codes8 CODE, bool SR, bool M2>
static void launch_codes8(const DecodeTensors *t, const CodesLaunch &L) {
    const DecodeShape *s = &t->s;
    const int S = pow2_at_least(ceil_div(s->dstate, kCodesPerLane));  // lanes a row: 16 codes each
    const int64_t blocks = ceil_div(codes8_units(s), kCodeThreads / S);  // at most 2^31 - 1 (decode_codes8_unsupported)
    const unsigned grid = (unsigned)(blocks > 0 ? blocks : 1);
    switch (S) {
    case 1: decode_codes8_kernel<CODE, SR, M2, 1><<<grid, kCodeThreads>>>(*t, L); break;
    case 2: decode_codes8_kernel<CODE, SR, M2, 2><<<grid, kCodeThreads>>>(*t, L); break;
    case 4: decode_codes8_kernel<CODE, SR, M2, 4><<<grid, kCodeThreads>>>(*t, L); break;
    case 8: decode_codes8_kernel<CODE, SR, M2, 8><<<grid, kCodeThreads>>>(*t, L); break;
    case 16: decode_codes8_kernel<CODE, SR, M2, 16><<<grid, kCodeThreads>>>(*t, L); break;
    default: decode_codes8_kernel<CODE, SR, M2, 32><<<grid, kCodeThreads>>>(*t, L); break;
    }
    cuda_check_launch();
}

/* A server's step (DecodeServing) or a plain one (slots 0, no pool), in
 * place on the pool (pool_in_place, lanes.cuh: codes and scales copied). */
template <Codes8 CODE, bool SR>
static void run_codes8(const DecodeServing *sv) {
    const DecodeShape *s = &sv->t.s;
    const int64_t W = decode_width(s), N = s->dstate;
    const int64_t pool_values = decode_pool_values(sv);
    const DecodeTensors t = pool_in_place(sv, codes8_bytes(pool_values, N));
    const CodesLaunch L = {(int64_t)codes8_scales_at(pool_values), (int64_t)codes8_scales_at(s->batch * s->tokens * W * N),
                           DecodePool{sv->state_batch_indices, sv->intermediate_states}};
    if (s->form == DECODE_M2) launch_codes8<CODE, SR, true>(&t, L);
    else launch_codes8<CODE, SR, false>(&t, L);
}

extern "C" void decode_lean_state_int8_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    run_codes8<CODES_INT8, false>(sv);
}
extern "C" void decode_lean_state_int8_sr_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    run_codes8<CODES_INT8, true>(sv);
}
extern "C" void decode_lean_state_fp8_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    run_codes8<CODES_E4M3, false>(sv);
}
extern "C" void decode_lean_state_fp8_sr_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    run_codes8<CODES_E4M3, true>(sv);
}

extern "C" void decode_lean_state_int8(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_lean_state_int8_serving(&sv, workspace);
}
extern "C" void decode_lean_state_int8_sr(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_lean_state_int8_sr_serving(&sv, workspace);
}
extern "C" void decode_lean_state_fp8(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_lean_state_fp8_serving(&sv, workspace);
}
extern "C" void decode_lean_state_fp8_sr(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_lean_state_fp8_sr_serving(&sv, workspace);
}
