/* The benchmark CSV writer. */
#include "csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "check.h"
#include "commit.h"  // GIT_COMMIT, written by the Makefile into build/
#include "gpu.h"

const char *commit_id(void) {
    const char *c = getenv("COMMIT");
    return (c && c[0]) ? c : GIT_COMMIT;
}

void csv_append(const char *path, const CsvRow *r) {
    FILE *f = fopen(path, "a+");
    if (!f) die_usage("cannot open CSV file %s for writing", path);
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0) fprintf(f, "%s,%s,%s\n", CSV_HEADER_FIRST, r->columns, CSV_HEADER_REST);
    fprintf(f, "%s,%d,%s,%s,", r->chapter, r->version, r->name, r->dtype);
    for (int k = 0; k < r->nsizes; k++) fprintf(f, "%lld,", (long long)r->sizes[k]);
    fprintf(f,
            "%s,%.5f,%.5f,%.0f,%.0f,%.0f,%.1f,%.1f,%.4g,%.5f,%.3f,%.2f,%.2f,%.3g,%s,%s\n",
            r->flags, r->ms_median, r->ms_min, r->bytes,
            r->exps, r->flops, r->gbps, r->bw_gbps, r->exp_rate, r->floor_ms, r->time_over_floor,
            r->peak_mib, r->workspace_mib, r->rel_l2_err, gpu_name(), commit_id());
    if (fclose(f) != 0) die_usage("cannot write CSV file %s", path);
}

void csv_sibling_path(const char *csv, const char *suffix, char *path, size_t len) {
    const char *slash = strrchr(csv, '/');
    const char *dot = strrchr(csv, '.');
    if (dot && slash && dot < slash) dot = NULL;  // "out.d/rows": the dot is the folder's
    int stem = dot ? (int)(dot - csv) : (int)strlen(csv);
    snprintf(path, len, "%.*s_%s.csv", stem, csv, suffix);
}

FILE *csv_sibling(const char *csv, const char *suffix, char *path, size_t len) {
    if (!csv) return NULL;
    csv_sibling_path(csv, suffix, path, len);
    struct stat st;
    const bool existed = stat(path, &st) == 0;
    if (existed && !S_ISREG(st.st_mode)) die_usage("cannot write %s: it is not a regular file", path);
    FILE *f = fopen(path, "w");
    if (!f) die_usage("cannot write %s", path);
    if (existed) printf("%s: replaced by this run's table (a table of its own beside %s)\n", path, csv);
    return f;
}
