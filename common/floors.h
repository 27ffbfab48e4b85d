/* Floor probes: the device's copy bandwidth and exp2 rate, measured once per
 * run with buffers far larger than L2, its fp16 mma.sync rate (fp32
 * accumulate), and the floor of a row:
 *   floor_ms = max(bytes / bandwidth, exps / exp_rate, flops / matrix_rate) */
#ifndef FLOORS_H
#define FLOORS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double bw_gbps;        // copy bandwidth, bytes read + written, GB/s
    double exp_rate;       // ex2.approx.f32 results per second
    double matrix_tflops;  // fp16 mma.sync with fp32 accumulate, TFLOP/s (rows with flops = 0 ignore it)
} Floors;

/* Probes on first call (about a second), then returns the cached values. */
const Floors *floors_get(void);
double floor_ms(const Floors *f, double bytes, double exps, double flops);

#ifdef __cplusplus
}
#endif

#endif
