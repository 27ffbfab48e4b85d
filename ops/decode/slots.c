/* A server's state slots: the indices the checks draw and the check of
 * loaded ones (slots.h). */
#include "slots.h"

#include <stdlib.h>

#include "args.h"
#include "tensor.h"

void slot_indices_fill(int32_t *idx, int64_t batch, int64_t slots) {
    int32_t *perm = host_alloc(slots * 4, "slot permutation");  // (S,) int32
    for (int64_t i = 0; i < slots; i++) perm[i] = (int32_t)i;
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int64_t i = slots - 1; i > 0; i--) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int64_t j = (int64_t)((r >> 33) % (uint64_t)(i + 1));
        int32_t x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    for (int64_t b = 0; b < batch; b++) idx[b] = b % 3 == 2 ? -1 : perm[b];
    free(perm);
}

void slot_indices_check(const int32_t *idx, int64_t batch, int64_t slots) {
    unsigned char *seen = calloc((size_t)slots, 1);  // (S,) slot named already
    if (!seen) die_usage("--load: cannot allocate %lld bytes", (long long)slots);
    for (int64_t b = 0; b < batch; b++) {
        if (idx[b] < 0) continue;
        if (idx[b] >= slots)
            die_usage("--load: state_batch_indices.npy entry %lld is slot %d, past the pool's %lld", (long long)b,
                      idx[b], (long long)slots);
        if (seen[idx[b]]) die_usage("--load: state_batch_indices.npy names slot %d twice", idx[b]);
        seen[idx[b]] = 1;
    }
    free(seen);
}
