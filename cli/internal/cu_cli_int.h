/*
 * cu_cli_int.h - what the files of `cueue explain` and `cueue queue` share:
 * the options and messages, tables, the controller's endpoints, the API
 * server, and the model computed from the API objects.
 */
#ifndef CU_CLI_INT_H
#define CU_CLI_INT_H

#include "cu_cli.h"
#include "cu_controller.h"
#include "cu_ctrlstatus.h"
#include "cu_explain.h"
#include "cu_kclient.h"
#include "cu_kconfig.h"
#include "cu_quantity.h"
#include "cu_strmap.h"

#include <curl/curl.h>
#include <json-c/json.h>

enum { RC_OK = 0, RC_FAIL = 1, RC_USAGE = 2 };

#define DEFAULT_CONTROLLER "http://127.0.0.1:8080"
#define CONNECT_TIMEOUT_MS 2000L    /* "unreachable" past this */
#define ENDPOINT_TIMEOUT_MS 5000L   /* a whole answer from the controller */
#define API_TIMEOUT_MS 30000        /* one LIST from the API server */
#define MAX_CYCLES 100000
#define MAX_BODY (256u << 20)

typedef struct cli {
    const char *cmd;            /* "explain" or "queue" */
    char url[512];              /* the controller's base URL, no trailing '/' */
    const char *kubeconfig, *context, *config;
    int json, wide;
    cu_buf notes;               /* "(...)" lines: first on stdout (text), stderr (json) */
    int api_failed;             /* the API server could not be used */
    char fallback[300];         /* why the controller was not used, "" when it was */
} cli;

typedef struct table {
    size_t ncols, nrows, cap;
    char **cells;               /* nrows * ncols, malloc'd */
    int failed;
} table;

typedef struct ep_resp {
    long code;                  /* HTTP status; 0 when the controller did not answer */
    int timed_out;              /* connected, but no whole answer in time */
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
    char *body;                 /* malloc'd, NUL-terminated, NULL when none */
    char *err;                  /* malloc'd transport error, NULL */
} areq;

enum { R_RF, R_CQ, R_COHORT, R_LQ, R_WPC, R_PC, R_NS, R_WL, R_JOB, NRES };

/* The resources the model LISTs, by R_* index. */
typedef struct res_info {
    const char *path, *api_version, *kind;
    int optional;               /* a 404 means "none" (resource not served) */
} res_info;
extern const res_info cli_res_tab[NRES];

typedef struct model {
    cu_world w;                 /* the API objects */
    cu_world cw;                /* the --config file */
    const cu_config *cf;        /* NULL without --config */
    cu_engine *e;
    cu_strmap synth;            /* "ns/name" of Workloads built from Jobs that have none */
    cu_arena keys;              /* the keys of synth */
    int have_ns;                /* the Namespaces were listed */
    int would_admit;            /* pending in the API, admitted by the engine */
} model;

void cli_say(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_usage(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cu_cli.c */
void cli_say_diag(const cli *c, const cu_diag *d);
int64_t cli_real_now(void *ud);
int cli_emit(const cli *c, const cu_buf *out);
void cli_say_fallback(const cli *c, int rc);
int cli_valid_name(const char *s);
void cli_put_query_value(cu_buf *b, const char *s);
void cli_human_age(int64_t ms, char *out, size_t n);
void cli_tbl_row(table *t, const char *const *cells);
void cli_tbl_print(const table *t, cu_buf *out);
void cli_tbl_free(table *t);
void cli_ep_get(const cli *c, const char *path_query, ep_resp *r);
const char *cli_first_line(const cu_buf *b, char *out, size_t n);
void cli_note_offline(cli *c, const ep_resp *r);
int cli_ep_unavailable(const ep_resp *r);
void cli_areq_clear(areq *q);
int cli_api_open(cli *c, api *a);
void cli_api_close(api *a);
void cli_api_run(api *a, areq *q, size_t n);
void cli_say_api_error(cli *c, const api *a, const areq *q);
int cli_split_target(const cli *c, const char *arg, char *ns, char *name, const char *what);
int cli_api_get_obj(cli *c, api *a, const char *prefix, const char *ns,
                       const char *plural, const char *name, json_object **obj);
int cli_parse_opts(cli *c, int argc, char **argv, int allow_wide, int *help);

/* cu_cli_model.c */
void cli_model_free(model *m);
const char *cli_jstr(json_object *o, const char *k);
json_object *cli_jget(json_object *o, const char *k);
int cli_model_load(cli *c, api *a, model *m);
const cu_workload *cli_find_wl(const model *m, const char *ns, const char *name);
int cli_have_namespace(const model *m, const char *ns);
void cli_jset_str(json_object *o, const char *k, const char *v);
json_object *cli_offline_pending(model *m, const char *cq, const char *lq);
void cli_render_pending(const cli *c, json_object *doc, const char *lq, int all, cu_buf *out);

/* cu_cli_explain.c */
int cli_explain(cli *c, const char *ns, const char *name, cu_buf *out);

#endif
