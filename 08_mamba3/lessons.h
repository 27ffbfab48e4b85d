/* 08_mamba3: what the program prints after its timings (driver.h's
 * Chapter.lesson): how far the angle state drifts over a long sequence,
 * summed three ways in fp32. */
#ifndef MAMBA3_LESSONS_H
#define MAMBA3_LESSONS_H

#include "args.h"

void mamba3_lessons(const Args *a);

#endif
