/* 05_ssd_mamba2's lesson (Chapter.lesson): what the precision of the
 * matrix products' operands (fp32, TF32, 3xTF32, fp16) costs in accuracy. */
#ifndef SSD_PRECISION_H
#define SSD_PRECISION_H

#include "args.h"

/* Prints the table; with --csv FILE also writes it to FILE's name with
 * _precision before .csv. */
void ssd_precision_lesson(const Args *a);

#endif
