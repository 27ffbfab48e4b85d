/* cuda_check(call): every CUDA runtime call and every launch goes through it.
 * On failure it prints the file, line, call and CUDA's message and exits 1. */
#ifndef CUDA_CHECK_H
#define CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define cuda_check(call)                                                         \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(err_));                            \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* After a kernel launch: catches bad launch configurations at once. */
#define cuda_check_launch() cuda_check(cudaGetLastError())

#endif
