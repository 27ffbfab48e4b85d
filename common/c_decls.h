/* Declarations that C and CUDA C++ share: a header's functions defined in a
 * .cu file (the kernels' extern "C" launchers, the device probes) stand
 * between BEGIN_C_DECLS and END_C_DECLS, which give them C linkage where the
 * header is read as C++ (nvcc) and are empty where it is read as C. */
#ifndef C_DECLS_H
#define C_DECLS_H

#ifdef __cplusplus
#define BEGIN_C_DECLS extern "C" {
#define END_C_DECLS }
#else
#define BEGIN_C_DECLS
#define END_C_DECLS
#endif

#endif
