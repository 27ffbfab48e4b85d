/* 07_decode_kernel: what the program prints after its timings (driver.h's
 * Chapter.lesson): the state against a KV cache, and what storing the state
 * in 16 bits costs over a long decode. */
#ifndef DECODE_LESSONS_H
#define DECODE_LESSONS_H

#include "args.h"

void decode_lessons(const Args *a);

#endif
