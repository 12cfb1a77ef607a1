/*
 * cu_quantity.h - Kubernetes resource quantities (resource.Quantity) as
 * exact int64 milli-units.
 *
 * A quantity "1500m" is 1500 milli, "2Gi" is 2*2^30*1000 milli, "1e3" is
 * 1000*1000 milli. Values whose milli representation is not an integer
 * (e.g. "0.1m") are rounded up to the next milli-unit, as Kubernetes rounds
 * up when it scales a quantity to milli precision. Values that do not fit
 * in int64 milli-units are CU_EOVERFLOW, never a wrap.
 */
#ifndef CU_QUANTITY_H
#define CU_QUANTITY_H

#include "cu_base.h"

/* The format a quantity was written in, kept for printing. */
typedef enum cu_qfmt {
    CU_QFMT_DECIMAL_SI = 0, /* m, "", k, M, G, T, P, E */
    CU_QFMT_BINARY_SI = 1,  /* Ki, Mi, Gi, Ti, Pi, Ei */
    CU_QFMT_DECIMAL_EXP = 2 /* 1e3, 2E-3 */
} cu_qfmt;

/* Largest representable value: saturation marker for "unlimited". */
#define CU_QTY_INF INT64_MAX

/* Parses s (a full Kubernetes quantity string, optional sign, no spaces)
 * into milli-units. fmt may be NULL. Returns CU_EINVAL for a malformed
 * string, CU_EOVERFLOW when the value does not fit. Borrows s. */
cu_err cu_qty_parse(const char *s, int64_t *milli, cu_qfmt *fmt);

/* Prints milli in Kubernetes canonical form for fmt into out (size n,
 * 32 bytes always suffice): "1500m", "2Gi", "4", "1536Mi", "1e3".
 * BinarySI values that are not whole multiples of 1 or lie in
 * (-1024, 1024) print as DecimalSI, as Kubernetes does. Returns out. */
char *cu_qty_format(int64_t milli, cu_qfmt fmt, char *out, size_t n);

/* The format Kueue uses to print a total of resource `name`: BinarySI
 * for memory, ephemeral-storage and hugepages-*, DecimalSI otherwise. */
cu_qfmt cu_qty_fmt_for_resource(const char *name);

/* Convenience: prints with cu_qty_fmt_for_resource(name). */
char *cu_qty_format_res(const char *name, int64_t milli, char *out, size_t n);

/* Checked arithmetic: returns CU_EOVERFLOW instead of wrapping. */
cu_err cu_qty_add(int64_t a, int64_t b, int64_t *out);
cu_err cu_qty_mul(int64_t a, int64_t count, int64_t *out);

/* Saturating arithmetic for quota math (INF stays INF). */
int64_t cu_qty_sat_add(int64_t a, int64_t b);
int64_t cu_qty_sat_sub(int64_t a, int64_t b);

#endif
