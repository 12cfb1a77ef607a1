/*
 * cu_ctrlretry.h - how the controller answers a write the API server
 * refused: how long before the same write is sent again, which refusals
 * cannot succeed as they are, and the text that reports one. Pure
 * functions: no I/O.
 */
#ifndef CU_CTRLRETRY_H
#define CU_CTRLRETRY_H

#include <stddef.h>
#include <stdint.h>

/* The Warning Event on an object the controller cannot decode, and the
 * condition it sets on such a Workload (True, reason DecodeFailed, the
 * problem as message; False, reason Decoded, once it decodes again). Kueue
 * has no condition for this; ours carries the project's domain. */
#define CU_EV_DECODE_FAILED "DecodeFailed"
#define CU_COND_DECODE_FAILED "cueue.dev/DecodeFailed"

/* The Warning Event on a Job whose Workload could not be created. */
#define CU_EV_FAILED_CREATE_WORKLOAD "FailedCreateWorkload"

/* The delay before the same write (same object, same resourceVersion) is
 * sent again after the n-th refusal in a row (n >= 1) with HTTP code
 * (0: no answer): 200 ms, doubling per refusal, at most 10 s for a conflict
 * (409), a throttle (429), a server error (5xx) or no answer, at most
 * 1000 s (client-go's workqueue limit) for any other refusal (4xx), which
 * only a change of the object can cure. A new version of the object is
 * written at once, whatever the delay. */
int64_t cu_ctrl_retry_delay_ms(int code, int n);

/* 1 when a create refused with code cannot succeed as it is (400, 403,
 * 404, 422): reported once and sent again only when what it asks for
 * changes. */
int cu_ctrl_refused_for_good(int code);

/* Writes what an answer says, for a log line or an Event, into out
 * (NUL-terminated, truncated to n): "HTTP 422 Invalid: <the Status
 * message>", or the transport error ("HTTP 0: <error>"). Returns out. */
const char *cu_ctrl_status_text(int code, const char *error, const char *body, char *out, size_t n);

/* What is known of the connection to the API server, for saying once
 * what fails (a TLS verification failure, a refused token) and when it
 * works again. Zero-initialized; cu_ctrl_api_health_free releases it. */
typedef struct cu_api_health {
    char *failing; /* the failure last reported, NULL while healthy */
} cu_api_health;

/* Takes one attempt's outcome (as cu_kclient_opts.on_outcome gives it)
 * for the API server at server (a URL). Returns 1 with a line to log in
 * out when it changes what is known: a failure unlike the one last
 * reported (no answer, 401, 403: what failed, the server's message or
 * curl's error, the server), or the first success after one. Other
 * answers (404, 409, 422, 5xx ...) change nothing: their requests report
 * them. */
int cu_ctrl_api_outcome(cu_api_health *h, const char *server, int code, const char *error,
                        const char *body, char *out, size_t n);
void cu_ctrl_api_health_free(cu_api_health *h);

#endif
