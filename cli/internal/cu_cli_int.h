/*
 * cu_cli_int.h - what the files of `cueue explain` and `cueue queue` share:
 * the options and messages, tables, the controller's endpoints, the API
 * server, and the model computed from the API objects.
 */
#ifndef CU_CLI_INT_H
#define CU_CLI_INT_H

#include "cu_cli.h"
#include "cu_clock.h"
#include "cu_duration.h"
#include "cu_exclude.h"
#include "cu_json.h"
#include "cu_controller.h"
#include "cu_status.h"
#include "cu_explain.h"
#include "cu_kclient.h"
#include "cu_kconfig.h"
#include "cu_quantity.h"
#include "cu_strmap.h"

#include <curl/curl.h>
#include <json-c/json.h>

enum { RC_OK = 0, RC_FAIL = 1, RC_USAGE = 2 };

#define DEFAULT_CONTROLLER "http://127.0.0.1:8080"
#define CONNECT_TIMEOUT_MS 2000L  /* "unreachable" past this */
#define ENDPOINT_TIMEOUT_MS 5000L /* a whole answer from the controller */
#define API_TIMEOUT_MS 30000      /* one LIST from the API server */
#define MAX_CYCLES 100000
#define MAX_BODY (256u << 20)

typedef struct cli {
    const char *cmd; /* "explain" or "queue" */
    char url[512];   /* the controller's base URL, no trailing '/' */
    const char *kubeconfig, *context, *config;
    int json, wide;
    cu_buf notes;       /* "(...)" lines: first on stdout (text), stderr (json) */
    int api_failed;     /* the API server could not be used */
    char fallback[300]; /* why the controller was not used, "" when it was */
} cli;

typedef struct table {
    size_t ncols, nrows, cap;
    char **cells; /* nrows * ncols, malloc'd */
    int failed;
} table;

typedef struct ep_resp {
    long code;     /* HTTP status; 0 when the controller did not answer */
    int timed_out; /* connected, but no whole answer in time */
    cu_buf body;
    char err[CURL_ERROR_SIZE];
} ep_resp;

typedef struct api {
    cu_kconfig *cfg;
    struct ev_loop *loop;
    cu_kclient *kc;
} api;

typedef struct areq {
    char path[600];
    int done, code;
    char *body; /* malloc'd, NUL-terminated, NULL when none */
    char *err;  /* malloc'd transport error, NULL */
} areq;

enum { R_RF, R_CQ, R_COHORT, R_LQ, R_WPC, R_PC, R_NS, R_AC, R_WL, R_JOB, NRES };

/* The resources the model LISTs, by R_* index. */
typedef struct res_info {
    const char *path, *api_version, *kind;
    int optional; /* a 404 means "none" (resource not served) */
} res_info;
extern const res_info cli_res_tab[NRES];

typedef struct model {
    cu_world w;          /* the API objects */
    cu_world cw;         /* the --config file */
    const cu_config *cf; /* NULL without --config */
    cu_engine *e;
    cu_strmap synth;     /* "ns/name" of Workloads built from Jobs that have none */
    cu_arena keys;       /* the keys of synth */
    json_object *owners; /* "ns/name" of a Workload -> its owner (cu_status_owner_text) */
    int have_ns;         /* the Namespaces were listed */
    int would_admit;     /* pending in the API, admitted by the engine */
} model;

/* Prints "cueue: CMD: message" to stderr. */
void cli_say(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the message and "Try 'cueue CMD --help'." to stderr; returns RC_USAGE. */
int cli_usage(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cu_cli.c */
/* Prints every message of d (borrowed) with cli_say. */
void cli_say_diag(const cli *c, const cu_diag *d);
/* Writes the notes (stdout for text, stderr for JSON) and out to stdout;
 * returns the exit code. */
int cli_emit(const cli *c, const cu_buf *out);
/* After rc == RC_FAIL reading the API: says why the controller was not used. */
void cli_say_fallback(const cli *c, int rc);
/* 1 when s is a Kubernetes object name (lowercase, digits, '-', '.'; 1-253 bytes). */
int cli_valid_name(const char *s);
/* Appends s percent-encoded for a query value ('/' kept) to b. */
void cli_put_query_value(cu_buf *b, const char *s);
/* Appends a row of t->ncols cells (copied; NULL or "" shows as "-"). */
void cli_tbl_row(table *t, const char *const *cells);
/* Appends t to out: columns padded to their widest cell, three spaces apart. */
void cli_tbl_print(const table *t, cu_buf *out);
/* Frees the cells of t. */
void cli_tbl_free(table *t);
/* GETs the controller's URL + path_query into r; the caller frees r->body
 * with cu_buf_free. */
void cli_ep_get(const cli *c, const char *path_query, ep_resp *r);
/* The first line of b, copied into out (n bytes); returns out. */
const char *cli_first_line(const cu_buf *b, char *out, size_t n);
/* Records in c why the API objects are used instead of the controller. */
void cli_note_offline(cli *c, const ep_resp *r);
/* 1 when r means "ask the API objects instead" (no answer, or 503). */
int cli_ep_unavailable(const ep_resp *r);
/* Frees the body and error of q. */
void cli_areq_clear(areq *q);
/* Loads the kubeconfig and starts a client into a (close with cli_api_close).
 * Returns 0, or RC_FAIL with the problem printed. */
int cli_api_open(cli *c, api *a);
/* Stops the client and frees a. */
void cli_api_close(api *a);
/* Runs the GETs q[0..n) at once and waits for all of them. */
void cli_api_run(api *a, areq *q, size_t n);
/* Prints why GET q failed. */
void cli_say_api_error(cli *c, const api *a, const areq *q);
/* Splits "[NS/]NAME" into ns and name (254-byte buffers); the namespace
 * defaults to the kubeconfig context's, else "default". Returns 0 or RC_USAGE. */
int cli_split_target(const cli *c, const char *arg, char *ns, char *name, const char *what);
/* cu_cli_owner.c: kubectl-style references to the owners of Workloads */
typedef struct cli_kind {
    const char *kind, *api_version, *prefix, *plural; /* prefix: "/apis/GROUP/VERSION" */
    const char *words[6]; /* what a reference may call it, NULL-terminated */
} cli_kind;
/* Workload, Job, JobSet, LeaderWorkerSet, Pod; ends with a NULL kind. */
extern const cli_kind cli_kinds[];
/* The kind a reference word names ("jobset", "pods", "lws", ...), or NULL. */
const cli_kind *cli_kind_of(const char *word);
/* Splits "[NAMESPACE/][KIND/]NAME" (KIND/NAME when the first of two parts
 * is a kind word, else NAMESPACE/NAME) into ns, *kind (NULL when none is
 * given) and name, as cli_split_target. Returns 0 or RC_USAGE. */
int cli_split_ref(const cli *c, const char *arg, char *ns, const cli_kind **kind, char *name,
                  const char *what);
/* The names (sorted, in ar) of the Workloads of namespace ns whose
 * ownerReferences name the object kind/name. Returns 0 or RC_FAIL (said). */
int cli_owned_workloads(cli *c, api *a, const char *ns, const cli_kind *k, const char *name,
                        cu_strs *out, cu_arena *ar);
/* GET of a namespaced object: 0 with *obj (new, caller puts) or NULL for
 * 404; else an exit code with the problem printed. */
int cli_api_get_obj(cli *c, api *a, const char *prefix, const char *ns, const char *plural,
                    const char *name, json_object **obj);
/* Parses the options of explain (allow_wide 0) or queue (1) into c; *help
 * when --help. Returns 0 or RC_USAGE. Borrows argv. */
int cli_parse_opts(cli *c, int argc, char **argv, int allow_wide, int *help);

/* Starts command c: its notes buffer and options (cli_parse_opts); prints
 * help_text on --help. Returns -1 to go on (free c->notes at the end),
 * else the exit code, everything freed. */
int cli_begin(cli *c, int argc, char **argv, int allow_wide, const char *help_text);

/* cu_cli_model.c */
/* Frees everything m holds. */
void cli_model_free(model *m);
/* LISTs the objects, builds m (free with cli_model_free, also on failure)
 * and runs the engine. Returns 0, or an exit code with the problem printed. */
int cli_model_load(cli *c, api *a, model *m);
/* The world's Workload ns/name (borrowed from m), or NULL. */
const cu_workload *cli_find_wl(const model *m, const char *ns, const char *name);
/* 1 when the listed Namespaces hold ns (or none were listed). */
int cli_have_namespace(const model *m, const char *ns);
/* The PendingWorkloads document computed from m's engine, filtered by cq
 * and lq (either NULL). Returns a new object (caller puts), NULL on OOM. */
json_object *cli_offline_pending(model *m, const char *cq, const char *lq);
/* Appends the table of doc's items to out. lq: one LocalQueue was asked
 * for (its positions, names without namespace); all: no filter. */
void cli_render_pending(const cli *c, json_object *doc, const char *lq, int all, cu_buf *out);

/* cu_cli_explain.c */
/* Explains ns/name into out: the controller first, then the API objects. */
int cli_explain(cli *c, const char *ns, const char *name, cu_buf *out);

#endif
