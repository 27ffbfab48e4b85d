/* The benchmark CSV (docs/design.md §5): one row per (version, config). */
#ifndef CSV_H
#define CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The columns: these, the op's size columns (Op.csv_columns), then the rest. */
#define CSV_HEADER_FIRST "chapter,version,name,dtype"
#define CSV_HEADER_REST                                                      \
    "flags,ms_median,ms_min,bytes,exps,flops,gbps,bw_gbps,exp_rate,floor_ms," \
    "time_over_floor,peak_mib,workspace_mib,rel_l2_err,device,commit"
#define CSV_MAX_SIZES 12

typedef struct {
    const char *chapter, *name, *dtype, *flags;
    int version;
    const char *columns;             // the op's size columns, "batch,dim,..."
    int64_t sizes[CSV_MAX_SIZES];    // their values
    int nsizes;
    double ms_median, ms_min, bytes, exps, flops, gbps, bw_gbps, exp_rate;
    double floor_ms, time_over_floor, peak_mib, workspace_mib, rel_l2_err;
} CsvRow;

/* Append a row to path, writing the header first when the file is new or
 * empty. device and commit are filled in here. */
void csv_append(const char *path, const CsvRow *r);

/* The path of csv's table "suffix": "out/rows.csv" and "precision" give
 * "out/rows_precision.csv". */
void csv_sibling_path(const char *csv, const char *suffix, char *path, size_t len);

/* A chapter's own table beside the benchmark CSV: csv's path with "_suffix"
 * before its .csv, opened for writing (exit 2 if it cannot be, or is not a
 * regular file), its path in path; NULL when csv is NULL. A file it replaces
 * is named in a line. */
FILE *csv_sibling(const char *csv, const char *suffix, char *path, size_t len);

/* The commit: $COMMIT if set, else the build's git commit, else "unknown". */
const char *commit_id(void);

#endif
