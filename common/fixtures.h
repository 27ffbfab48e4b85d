/* The fp64 oracle against the official fixtures (common/fixtures/README.md):
 * each folder's inputs go through the oracle and every output it holds gets a
 * check line (relative L2 <= 1e-5), then a perturbed copy of y must fail.
 * A folder that cannot be loaded is a failed check with the reason. */
#ifndef FIXTURES_H
#define FIXTURES_H

/* mamba1 and mamba1_plain (selective_scan_ref). dir holds the folders. */
void fixtures_check_mamba1(const char *dir);

/* ssd (ssd_selective_scan, the Mamba-2 -> Mamba-1 mapping). */
void fixtures_check_ssd(const char *dir);

/* bidir and bidir_hydra (both forms of bidirectional Mamba-2). */
void fixtures_check_bidir(const char *dir);

/* decode_m1 and decode_m2 (selective_state_update_ref, both forms). */
void fixtures_check_decode(const char *dir);

/* All seven: mamba1, mamba1_plain, ssd, bidir, bidir_hydra, decode_m1, decode_m2. */
void fixtures_check_all(const char *dir);

/* The repository's common/fixtures, found from the program's own path (the
 * nearest folder above it that holds common/fixtures: build/ is one below the
 * root, build/asan/ two), so that a program run from any folder finds them;
 * "common/fixtures" if that fails. */
const char *fixtures_dir(void);

#endif
