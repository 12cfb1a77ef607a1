/*
 * cu_duration.h - durations as Kubernetes writes them: Go's
 * time.ParseDuration syntax ("1h30m", "1.5s", "250ms", "300us"), and
 * kubectl's age notation ("45s", "3m10s", "2d4h") for tables.
 *
 * The one parser for every Go duration in the tree (metav1.Duration
 * fields of the Configuration, the controller's flags, kubesim's
 * annotations). Exact integer arithmetic in nanoseconds; anything that
 * does not fit an int64 of nanoseconds is refused, never wrapped.
 */
#ifndef CU_DURATION_H
#define CU_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"

/* Parses s as time.ParseDuration does into *ns: an optional sign, then
 * one or more <number><unit> (number: digits with an optional fraction,
 * at least one digit; unit: ns, us, µs (U+00B5 or U+03BC), ms, s, m, h);
 * "0" alone (signed or not) needs no unit. Fractions past 17 digits are
 * dropped. Returns CU_OK, or CU_EINVAL (NULL, empty, malformed, unknown
 * or missing unit, or more than INT64_MAX ns); *ns is untouched then.
 * Callers that refuse negative durations test *ns < 0, or *s == '-' to
 * refuse "-0" too. Callers with bounds (e.g. 1 ms .. 24 h) test *ns. */
cu_err cu_duration_parse(const char *s, int64_t *ns);

/* cu_duration_parse, then nanoseconds to milliseconds truncated toward
 * zero ("1500us" is 1, "-1500us" is -1). */
cu_err cu_duration_parse_ms(const char *s, int64_t *ms);

/* kubectl's age of a span of ms milliseconds (its HumanDuration): 45s,
 * 3m10s, 42m, 2h4m, 30h, 3d4h, 45d, 2y10d, 9y; a span down to -1 s reads
 * "0s", anything more negative "<invalid>". Writes into out (n bytes,
 * 16 are always enough), truncating as snprintf does. */
void cu_duration_human(int64_t ms, char *out, size_t n);

#endif
