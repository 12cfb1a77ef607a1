/*
 * cu_quantity.h - Kubernetes resource quantities (resource.Quantity) as
 * exact int64 counts of a unit: milli-units (scale 3) or whole units
 * (scale 0).
 *
 * The amount of a resource is counted in the unit Kueue counts it in
 * (its resources.ResourceValue): cpu in milli-units, every other resource
 * in whole units (bytes, GPUs, pods). cu_qty_res_scale is the one place
 * that decides it; every amount in the engine (requests, quotas, usage)
 * is in that unit, parsed with cu_qty_parse_res and printed with
 * cu_qty_format_res. So memory holds up to 2^63-1 bytes (8Ei), as in
 * Kueue, and cpu up to 2^63-1 milli-cores.
 *
 * In milli-units "1500m" is 1500, "2Gi" is 2*2^30*1000, "1e3" is
 * 1000*1000; in whole units "2Gi" is 2*2^30. A value that is not a whole
 * number of the unit ("0.1m" in milli, "1.5" or "500m" in units) is
 * rounded up (Kubernetes' MilliValue / Value). Values that do not fit in
 * int64 are CU_EOVERFLOW, never a wrap.
 *
 * Ratios that are not resource amounts (fair-sharing weights, the
 * multipliers of resource transformations) stay in milli-units
 * (cu_qty_parse / cu_qty_format).
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

/* Scales: the number of decimal places a count keeps. */
#define CU_QTY_SCALE_UNIT 0  /* whole units */
#define CU_QTY_SCALE_MILLI 3 /* milli-units */

/* Parses s (a full Kubernetes quantity string, optional sign, no spaces)
 * into milli-units. fmt may be NULL. Returns CU_EINVAL for a malformed
 * string, CU_EOVERFLOW when the value does not fit. Borrows s. */
cu_err cu_qty_parse(const char *s, int64_t *milli, cu_qfmt *fmt);

/* cu_qty_parse into a count of 10^-scale (scale CU_QTY_SCALE_UNIT or
 * CU_QTY_SCALE_MILLI; another scale is CU_EINVAL), rounded up. */
cu_err cu_qty_parse_scaled(const char *s, int scale, int64_t *v, cu_qfmt *fmt);

/* The scale Kueue counts resource `name` in: CU_QTY_SCALE_MILLI for
 * "cpu", CU_QTY_SCALE_UNIT for every other resource (and NULL). */
int cu_qty_res_scale(const char *name);

/* One whole unit of resource `name` in its scale: 1000 for cpu, else 1. */
int64_t cu_qty_res_one(const char *name);

/* count whole units of resource `name` in its scale (count * one),
 * saturating at INT64_MAX / INT64_MIN. */
int64_t cu_qty_res_units(const char *name, int64_t count);

/* The whole units of an amount v >= 0 of resource `name` (in its scale),
 * rounded up: Kubernetes' Value() of that quantity (cpu 1500 -> 2,
 * memory 1500 -> 1500). */
int64_t cu_qty_res_whole(const char *name, int64_t v);

/* An amount v of resource `name` (in its scale) as a number of whole
 * units: cores for cpu, bytes for memory (Kueue's metric values). */
double cu_qty_res_float(const char *name, int64_t v);

/* Parses s as an amount of resource `name`, in its scale (Kueue's
 * ResourceValue: "1.5" memory is 2, "500m" nvidia.com/gpu is 1, "1.5"
 * cpu is 1500). Errors as cu_qty_parse. */
cu_err cu_qty_parse_res(const char *name, const char *s, int64_t *v, cu_qfmt *fmt);

/* Prints milli in Kubernetes canonical form for fmt into out (size n,
 * 32 bytes always suffice): "1500m", "2Gi", "4", "1536Mi", "1e3".
 * BinarySI values that are not whole multiples of 1 or lie in
 * (-1024, 1024) print as DecimalSI, as Kubernetes does. Returns out. */
char *cu_qty_format(int64_t milli, cu_qfmt fmt, char *out, size_t n);

/* cu_qty_format of a count v of 10^-scale units (scale as
 * cu_qty_parse_scaled). */
char *cu_qty_format_scaled(int64_t v, int scale, cu_qfmt fmt, char *out, size_t n);

/* The format Kueue uses to print a total of resource `name`: BinarySI
 * for memory, ephemeral-storage and hugepages-*, DecimalSI otherwise. */
cu_qfmt cu_qty_fmt_for_resource(const char *name);

/* Prints an amount v of resource `name` (in its scale) the way Kueue
 * writes it back (its ResourceQuantity): cpu 1500 -> "1500m", memory
 * 2147483648 -> "2Gi", nvidia.com/gpu 4 -> "4". */
char *cu_qty_format_res(const char *name, int64_t v, char *out, size_t n);

/* Checked arithmetic: returns CU_EOVERFLOW instead of wrapping. */
cu_err cu_qty_add(int64_t a, int64_t b, int64_t *out);
cu_err cu_qty_mul(int64_t a, int64_t count, int64_t *out);

/* Saturating arithmetic for quota math (INF stays INF). */
int64_t cu_qty_sat_add(int64_t a, int64_t b);
int64_t cu_qty_sat_sub(int64_t a, int64_t b);

#endif
