/* compare.h - numerical comparison of a tensor computed two ways (the
 * reference interpreter against the simulated chip), as `atoll compare`,
 * the chip conformance runner and the demo use it.
 *
 * Per tensor: cosine similarity, max absolute error, max relative error and
 * a verdict against thresholds chosen by the dtype the chip computed in:
 *   - fp32 (and fp64): every element within atol + rtol*|ref|, rtol 1e-4,
 *     atol 1e-4 * max|ref| unless given (scale-aware: accumulation order
 *     changes absolute error in proportion to the tensor's magnitude);
 *   - fp16 / bf16: cosine >= 0.999 (elementwise bounds are meaningless at
 *     3 significant digits);
 *   - integer dtypes: |got - ref| <= atol (default 1, one quantisation
 *     step), rtol 0.
 * Any threshold given explicitly (CmpThresholds.set_*) replaces the default
 * and is also applied (a given rtol/atol applies to fp16 too, a given
 * min_cos to fp32 too). NaN must match NaN, infinities must match exactly.
 */
#ifndef ATOLL_COMPILER_COMPARE_H
#define ATOLL_COMPILER_COMPARE_H
#include <stdint.h>
#include <stdio.h>
#include "compiler/ir/ir.h"

typedef struct CmpThresholds {
    int check_tol;          /* check |got - ref| <= atol + rtol*|ref| per element */
    double rtol, atol;
    int atol_of_max;        /* atol is a fraction of max|ref| */
    double min_cos;         /* < 0: cosine not checked */
    int set_rtol, set_atol, set_cos;  /* given by the user (only these are read from `user`) */
} CmpThresholds;

typedef struct CmpStats {
    int64_t n;              /* elements compared */
    double cosine;          /* 1 when both are all zero */
    double max_abs;         /* max |got - ref| (finite pairs) */
    double max_rel;         /* max |got - ref| / |ref| over |ref| >= 1e-3 * max|ref| */
    double ref_absmax;      /* max |ref| */
    int64_t worst;          /* index of the element with max_abs */
    int64_t nonfinite_mismatch; /* NaN/inf in one but not equal in the other */
    int64_t over_tol;       /* elements outside atol + rtol*|ref| (when checked) */
} CmpStats;

/* Compares got against ref (any numeric dtypes; shapes must have the same
 * element count and, where both known, the same dims). Fails naming the
 * tensor on a shape mismatch or missing data. */
int cmp_tensors(const IrTensor *ref, const IrTensor *got, CmpStats *s, AtlErr *e);

/* The thresholds for `dtype` (ONNX numbering), user settings in *user kept
 * where set; user may be NULL. */
void cmp_thresholds_for(int dtype, const CmpThresholds *user, CmpThresholds *out);

/* Applies th to ref/got: fills s->over_tol and returns 1 if the tensor
 * passes. s must come from cmp_tensors on the same pair. */
int cmp_verdict(const IrTensor *ref, const IrTensor *got, const CmpThresholds *th, CmpStats *s);

/* One row of a comparison report. */
typedef struct CmpRow {
    char *name;
    int is_output;          /* a model output (decides the exit status) */
    int dtype;              /* the dtype the chip computed in */
    char shape[64];
    CmpStats st;
    CmpThresholds th;
    int pass;
    int skipped;            /* not compared (reason in note) */
    char note[96];
} CmpRow;

typedef struct CmpReport {
    CmpRow *rows;
    int n, cap;
} CmpReport;

/* Compares ref and got and appends a row (name copied). */
int cmp_report_add(CmpReport *r, const char *name, int is_output, int chip_dtype,
                   const IrTensor *ref, const IrTensor *got, const CmpThresholds *user, AtlErr *e);
/* Appends a row that was not compared (e.g. storage reused). */
int cmp_report_skip(CmpReport *r, const char *name, int is_output, const char *why, AtlErr *e);
/* Index of the first compared row that fails (report order), -1 if none. */
int cmp_report_first_failure(const CmpReport *r);
/* Number of failing output rows. */
int cmp_report_failed_outputs(const CmpReport *r);
/* Prints the table and a summary line naming the first diverging tensor. */
void cmp_report_print(const CmpReport *r, FILE *fp);
void cmp_report_free(CmpReport *r);
#endif
