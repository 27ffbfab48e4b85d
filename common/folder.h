/* --dump and --load folders: every tensor of a problem as DIR/<name>.npy
 * beside DIR/meta.json. Every problem with a folder is exit 2 with one line
 * naming the file. */
#ifndef FOLDER_H
#define FOLDER_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "npy.h"
#include "tensor.h"

/* A --load folder: which of the operation's files it holds (table order),
 * their shapes, and meta.json. */
typedef struct {
    const char *dir;
    bool given[MAX_TENSORS];        // DIR/<name>.npy was there
    NpyShape shape[MAX_TENSORS];    // and had this shape
    char meta[4096];                // meta.json's text, "" without one
    bool has_meta;                  // DIR/meta.json was there
    JsonObject meta_obj;            // meta.json read as JSON
    JsonObject *json;               // = &meta_obj: the meta_* readers mark what they read through a const folder
    const TensorSpec *table;        // the names folder_read looked for, ntable of them
    int ntable;
    bool sized[MAX_TENSORS];        // the op's infer read the sizes from file k (folder_shape)
    bool *sized_by;                 // = sized: folder_shape marks it through a const folder
} LoadFolder;

/* Every present tensor of the table t as DIR/<name>.npy from x[k] (fp32),
 * written as fp16 where it follows the dtype and dt is fp16, then
 * DIR/meta.json holding `meta`: all into DIR.part<pid> beside it, renamed
 * to DIR once whole (a dump that fails leaves nothing). */
void folder_write(const char *dir, const TensorSpec *t, int n, const float *const *x, DType dt, const char *meta);
/* Whether two paths name the same place, however spelled ("d/x", "d/./x",
 * "./d//x/"), whether or not it exists yet. */
bool same_path(const char *a, const char *b);
/* An output file (--csv's), before any work: exit 2 naming flag unless path
 * is a regular file it can write, or a new file it can create (made and
 * removed at once: a device, a FIFO, a folder, /sys are refused). */
void check_output_file(const char *flag, const char *path);
/* Whether path names a file in the folder dir (however either is spelled). */
bool path_in_folder(const char *path, const char *dir);
/* --dump DIR, before any work: exit 2 where DIR exists and is not an empty
 * folder (a dump is never mixed with an older one), is --load's folder
 * (load_dir, or NULL), or cannot be created. */
void folder_check_target(const char *dir, const char *load_dir);
/* meta.json and the header of every file the table t names (an INPUT must
 * be there): f->shape[k], f->given[k]. No data is read. The sizes in t are
 * not used. */
void folder_read(LoadFolder *f, const char *dir, const TensorSpec *t, int n);
/* File k's shape, for an op's infer: the file is marked as one the sizes
 * were read from, which folder_expect_shapes names. */
const NpyShape *folder_shape(const LoadFolder *f, int k);
/* Exit 2 unless every file the folder holds has its tensor's shape in t
 * (n of them): one file off is named; several off are named with the files
 * the sizes came from, for the odd one may be among those. */
void folder_expect_shapes(const LoadFolder *f, const TensorSpec *t, int n);
/* The data of every file folder_read found: x[k] fp32 (malloc'd), NULL where
 * absent; read once every shape has been checked. Exit 2 at a NaN or inf in
 * a tensor the table marks finite; returns whether every input value read is
 * finite. */
bool folder_read_data(const LoadFolder *f, const TensorSpec *t, int n, float **x);
/* meta.json values; dflt (NULL for a string) when the key is absent; exit 2
 * when it holds another kind of value. */
bool meta_bool(const LoadFolder *f, const char *key, bool dflt);
int64_t meta_int(const LoadFolder *f, const char *key, int64_t dflt);
const char *meta_string(const LoadFolder *f, const char *key);
/* Once the folder is read and checked: one line on stderr for each .npy in
 * it that the table does not name (not read), each key of meta.json that no
 * reader asked for (ignored), or a folder without meta.json (every flag
 * takes the official function's default). */
void folder_notes(const LoadFolder *f);

#endif
