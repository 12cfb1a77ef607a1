/*
 * cu_cli_queue.c - `cueue queue list` (the queues with their counts) and
 * `cueue queue pending` (pending workloads in admission order): the
 * controller's /debug/pending, else the model from the API objects.
 */
#include "cu_cli_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- cueue queue ---------------- */

/* Notes on what the engine computed that the API does not show yet. */
static void note_model(cli *c, const model *m)
{
    if (m->synth.n)
        cu_buf_printf(&c->notes,
                      "(%zu labelled Job%s no Workload yet: queued as the Workload%s "
                      "the controller would create)\n",
                      m->synth.n, m->synth.n == 1 ? " has" : "s have", m->synth.n == 1 ? "" : "s");
    if (m->would_admit)
        cu_buf_printf(&c->notes,
                      "(%d Workload%s pending in the API %s admitted by the engine on "
                      "these objects: is the controller running?)\n",
                      m->would_admit, m->would_admit == 1 ? "" : "s",
                      m->would_admit == 1 ? "is" : "are");
}

static const char help_queue[] =
    "Usage: cueue queue list [OPTIONS]\n"
    "       cueue queue pending [OPTIONS] [CLUSTERQUEUE | NAMESPACE/LOCALQUEUE]\n"
    "\n"
    "Queue visibility: what Kueue's visibility API shows.\n"
    "\n"
    "  list      the ClusterQueues and LocalQueues with their numbers of pending,\n"
    "            reserving and admitted Workloads\n"
    "  pending   the pending Workloads of a ClusterQueue, of a LocalQueue\n"
    "            (NAMESPACE/NAME), or of every ClusterQueue, in admission order:\n"
    "            POSITION (0-based, in the ClusterQueue; in the LocalQueue when one\n"
    "            is given), NAMESPACE/NAME, LOCALQUEUE, PRIORITY, REQUESTS (the\n"
    "            total of all pods: cpu=4,memory=8Gi), AGE and the pending REASON\n"
    "\n"
    "Sources, in order:\n"
    "  1. the running controller: GET /debug/pending on its metrics server (its\n"
    "     queues now); for 'list', the admitted and reserving counts come from\n"
    "     the queues' status, read with the kubeconfig;\n"
    "  2. when no controller answers (connection refused, nothing within 2 s\n"
    "     to connect or 5 s to answer) or it is not ready: the API objects, read\n"
    "     with the kubeconfig; the admission engine runs on them and the first\n"
    "     line of the output says that the answer was computed this way.\n"
    "     Labelled Jobs without a Workload yet are queued as the Workloads the\n"
    "     controller would create for them.\n"
    "\n"
    "Options:\n"
    "      --controller URL   the controller's metrics server (default\n"
    "                         $CUEUE_CONTROLLER, else " DEFAULT_CONTROLLER ")\n"
    "      --kubeconfig FILE  kubeconfig (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      the controller's Configuration\n"
    "                         (config.kueue.x-k8s.io), used when computing from\n"
    "                         the API objects\n"
    "  -o, --output FORMAT    table (default), wide (pending: with the OWNER,\n"
    "                         KIND/NAME of the object the Workload is for: a\n"
    "                         Job, a JobSet, a LeaderWorkerSet, a pod, \"Pod/P (+N)\"\n"
    "                         for a pod group; and the MESSAGE)\n"
    "                         or json: for pending the PendingWorkloads document\n"
    "                         {\"kind\", \"generatedAt\", \"items\": [{\"namespace\",\n"
    "                         \"name\", \"localQueue\", \"clusterQueue\",\n"
    "                         \"positionInClusterQueue\", \"positionInLocalQueue\",\n"
    "                         \"priority\", \"requests\", \"createdAt\", \"reason\",\n"
    "                         \"message\", \"owner\"}]}; for list {\"clusterQueues\": [...],\n"
    "                         \"localQueues\": [...]}; with json, the notes go to\n"
    "                         stderr\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit codes: 0 ok, 1 no such queue or a runtime error (API server\n"
    "unreachable, unexpected answer), 2 bad usage.\n";

/* Returns the PendingWorkloads document from the controller (0), or NULL
 * with *offline set when it does not answer, or an exit code. */
static int pending_ep(cli *c, const char *cq, const char *lq, json_object **doc, int *offline)
{
    cu_buf p;
    cu_buf_init(&p, 0);
    cu_buf_puts(&p, "/debug/pending");
    if (cq) {
        cu_buf_puts(&p, "?clusterQueue=");
        cli_put_query_value(&p, cq);
    } else if (lq) {
        cu_buf_puts(&p, "?localQueue=");
        cli_put_query_value(&p, lq);
    }
    ep_resp r;
    cli_ep_get(c, cu_buf_str(&p), &r);
    cu_buf_free(&p);
    *doc = NULL;
    *offline = 0;
    int rc = 0;
    char line[300];
    if (cli_ep_unavailable(&r)) {
        cli_note_offline(c, &r);
        *offline = 1;
    } else if (r.code != 200) {
        cli_say(c, "the controller at %s answered HTTP %ld: %s", c->url, r.code,
                cli_first_line(&r.body, line, sizeof(line)));
        rc = RC_FAIL;
    } else if (!(*doc = cu_json_parse_str(cu_buf_str(&r.body))) ||
               !json_object_is_type(cu_jget(*doc, "items"), json_type_array)) {
        cli_say(c, "the controller at %s answered with no PendingWorkloads document", c->url);
        json_object_put(*doc);
        *doc = NULL;
        rc = RC_FAIL;
    }
    cu_buf_free(&r.body);
    return rc;
}

static void emit_json(json_object *o, cu_buf *out)
{
    cu_buf_puts(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                           JSON_C_TO_STRING_SPACED |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    cu_buf_puts(out, "\n");
}

static int queue_pending(cli *c, const char *target, cu_buf *out)
{
    char ns[254], name[254], lqkey[600];
    const char *cq = NULL, *lq = NULL;
    if (target && strchr(target, '/')) {
        int rc = cli_split_target(c, target, ns, name, "LocalQueue");
        if (rc)
            return rc;
        snprintf(lqkey, sizeof(lqkey), "%s/%s", ns, name);
        lq = lqkey;
    } else if (target) {
        if (!cli_valid_name(target))
            return cli_usage(c,
                             "'%s' is not a valid ClusterQueue name (lowercase letters, digits, "
                             "'-' and '.')",
                             target);
        cq = target;
    }
    json_object *doc = NULL;
    int offline = 0;
    int rc = pending_ep(c, cq, lq, &doc, &offline);
    if (rc)
        return rc;
    api a = { 0 };
    model m;
    int have_model = 0;
    if (offline) {
        rc = cli_api_open(c, &a);
        if (!rc) {
            rc = cli_model_load(c, &a, &m);
            have_model = 1;
        }
        if (!rc) {
            int found = !target;
            for (size_t i = 0; cq && i < m.w.cqs.n && !found; i++)
                found = strcmp(m.w.cqs.items[i]->meta.name, cq) == 0;
            for (size_t i = 0; lq && i < m.w.lqs.n && !found; i++)
                found = strcmp(m.w.lqs.items[i]->meta.name, name) == 0 &&
                        strcmp(m.w.lqs.items[i]->meta.ns ? m.w.lqs.items[i]->meta.ns : "default",
                               ns) == 0;
            if (!found) {
                cli_say(c, "no %s %s", cq ? "ClusterQueue" : "LocalQueue", target);
                rc = RC_FAIL;
            } else if (!(doc = cli_offline_pending(&m, cq, lq))) {
                cli_say(c, "out of memory");
                rc = RC_FAIL;
            }
            if (!rc)
                note_model(c, &m);
        }
    } else if (target && json_object_array_length(cu_jget(doc, "items")) == 0) {
        /* an empty answer: say so when the queue does not exist at all */
        json_object *obj = NULL;
        if (cli_api_open(c, &a) == 0) {
            int gr;
            if (cq) {
                areq q;
                memset(&q, 0, sizeof(q));
                snprintf(q.path, sizeof(q.path), "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s",
                         cq);
                cli_api_run(&a, &q, 1);
                gr = q.code == 404 ? 0 : -1;
                cli_areq_clear(&q);
            } else {
                gr = cli_api_get_obj(c, &a, "/apis/kueue.x-k8s.io/v1beta2", ns, "localqueues", name,
                                     &obj) == 0 &&
                             !obj
                         ? 0
                         : -1;
            }
            if (gr == 0) {
                cli_say(c, "no %s %s", cq ? "ClusterQueue" : "LocalQueue", target);
                rc = RC_FAIL;
            }
            json_object_put(obj);
        }
    }
    if (!rc) {
        if (c->json) {
            emit_json(doc, out);
        } else if (json_object_array_length(cu_jget(doc, "items")) == 0) {
            if (target)
                cu_buf_printf(out, "No pending Workloads in %s %s.\n",
                              cq ? "ClusterQueue" : "LocalQueue", target);
            else
                cu_buf_puts(out, "No pending Workloads.\n");
        } else {
            cli_render_pending(c, doc, lq, !target, out);
        }
    }
    json_object_put(doc);
    if (have_model)
        cli_model_free(&m);
    cli_api_close(&a);
    return rc;
}

typedef struct qrow {
    char ns[254], name[254], cq[254], cohort[254];
    int pending, reserving, admitted;
    int known; /* counts beyond pending are known */
} qrow;

typedef struct qrows {
    qrow *v;
    size_t n, cap;
} qrows;

static qrow *qrows_get(qrows *q, const char *ns, const char *name)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].name, name) == 0 && strcmp(q->v[i].ns, ns ? ns : "") == 0)
            return &q->v[i];
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 32;
        qrow *p = realloc(q->v, cap * sizeof(*p));
        if (!p)
            return NULL;
        q->v = p;
        q->cap = cap;
    }
    qrow *r = &q->v[q->n++];
    memset(r, 0, sizeof(*r));
    snprintf(r->ns, sizeof(r->ns), "%s", ns ? ns : "");
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

static int cmp_qrow(const void *pa, const void *pb)
{
    const qrow *a = pa, *b = pb;
    int c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

static void render_list(const cli *c, qrows *cqs, qrows *lqs, cu_buf *out)
{
    qsort(cqs->v, cqs->n, sizeof(qrow), cmp_qrow);
    qsort(lqs->v, lqs->n, sizeof(qrow), cmp_qrow);
    if (c->json) {
        json_object *doc = json_object_new_object();
        json_object *a = json_object_new_array(), *b = json_object_new_array();
        for (size_t i = 0; i < cqs->n; i++) {
            json_object *o = json_object_new_object();
            cu_jset_str(o, "name", cqs->v[i].name);
            if (cqs->v[i].cohort[0])
                cu_jset_str(o, "cohort", cqs->v[i].cohort);
            json_object_object_add(o, "pending", json_object_new_int(cqs->v[i].pending));
            if (cqs->v[i].known) {
                json_object_object_add(o, "reserving", json_object_new_int(cqs->v[i].reserving));
                json_object_object_add(o, "admitted", json_object_new_int(cqs->v[i].admitted));
            }
            json_object_array_add(a, o);
        }
        for (size_t i = 0; i < lqs->n; i++) {
            json_object *o = json_object_new_object();
            cu_jset_str(o, "namespace", lqs->v[i].ns);
            cu_jset_str(o, "name", lqs->v[i].name);
            cu_jset_str(o, "clusterQueue", lqs->v[i].cq);
            json_object_object_add(o, "pending", json_object_new_int(lqs->v[i].pending));
            if (lqs->v[i].known) {
                json_object_object_add(o, "reserving", json_object_new_int(lqs->v[i].reserving));
                json_object_object_add(o, "admitted", json_object_new_int(lqs->v[i].admitted));
            }
            json_object_array_add(b, o);
        }
        json_object_object_add(doc, "clusterQueues", a);
        json_object_object_add(doc, "localQueues", b);
        emit_json(doc, out);
        json_object_put(doc);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        qrows *q = pass ? lqs : cqs;
        table t = { .ncols = 5 };
        const char *hdr[5] = { pass ? "LOCALQUEUE" : "CLUSTERQUEUE",
                               pass ? "CLUSTERQUEUE" : "COHORT", "PENDING", "RESERVING",
                               "ADMITTED" };
        cli_tbl_row(&t, hdr);
        for (size_t i = 0; i < q->n; i++) {
            char name[520], p[16], r[16], a[16];
            if (pass)
                snprintf(name, sizeof(name), "%s/%s", q->v[i].ns, q->v[i].name);
            else
                snprintf(name, sizeof(name), "%s", q->v[i].name);
            snprintf(p, sizeof(p), "%d", q->v[i].pending);
            snprintf(r, sizeof(r), "%d", q->v[i].reserving);
            snprintf(a, sizeof(a), "%d", q->v[i].admitted);
            const char *row[5] = { name, pass ? q->v[i].cq : q->v[i].cohort, p,
                                   q->v[i].known ? r : "?", q->v[i].known ? a : "?" };
            cli_tbl_row(&t, row);
        }
        if (pass)
            cu_buf_puts(out, "\n");
        if (t.failed)
            out->failed = 1;
        else if (q->n)
            cli_tbl_print(&t, out);
        else
            cu_buf_printf(out, "No %s.\n", pass ? "LocalQueues" : "ClusterQueues");
        cli_tbl_free(&t);
    }
}

static int queue_list(cli *c, cu_buf *out)
{
    json_object *doc = NULL;
    int offline = 0;
    int rc = pending_ep(c, NULL, NULL, &doc, &offline);
    if (rc)
        return rc;
    qrows cqs = { 0 }, lqs = { 0 };
    api a = { 0 };
    int oom = 0;
    if (offline) {
        model m;
        rc = cli_api_open(c, &a);
        if (!rc) {
            rc = cli_model_load(c, &a, &m);
            if (!rc) {
                for (size_t i = 0; i < cu_engine_ncqs(m.e) && !oom; i++) {
                    const cu_cq_info *ci = cu_engine_cq_info(m.e, i);
                    qrow *r = qrows_get(&cqs, NULL, ci->name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    snprintf(r->cohort, sizeof(r->cohort), "%s", ci->cohort ? ci->cohort : "");
                    r->pending = ci->pending;
                    r->reserving = ci->reserving;
                    r->admitted = ci->admitted;
                    r->known = 1;
                }
                for (size_t i = 0; i < cu_engine_nlqs(m.e) && !oom; i++) {
                    const cu_lq_info *li = cu_engine_lq_info(m.e, i);
                    qrow *r = qrows_get(&lqs, li->ns, li->name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    snprintf(r->cq, sizeof(r->cq), "%s",
                             li->cluster_queue ? li->cluster_queue : "");
                    r->pending = li->pending;
                    r->reserving = li->reserving;
                    r->admitted = li->admitted;
                    r->known = 1;
                }
                note_model(c, &m);
            }
            cli_model_free(&m);
        }
    } else {
        /* the queues and their status counts from the API, the pending
         * counts from the controller */
        if (cli_api_open(c, &a) == 0) {
            areq q[2];
            memset(q, 0, sizeof(q));
            snprintf(q[0].path, sizeof(q[0].path), "%s", cli_res_tab[R_CQ].path);
            snprintf(q[1].path, sizeof(q[1].path), "%s", cli_res_tab[R_LQ].path);
            cli_api_run(&a, q, 2);
            for (int k = 0; k < 2 && !oom; k++) {
                json_object *l =
                    q[k].code == 200 && q[k].body ? cu_json_parse_str(q[k].body) : NULL;
                json_object *items = cu_jget(l, "items");
                if (!json_object_is_type(items, json_type_array)) {
                    cli_say_api_error(c, &a, &q[k]);
                    cli_say(c, "warning: the %s and their admitted counts are not known",
                            k ? "LocalQueues" : "ClusterQueues");
                }
                size_t n = items ? json_object_array_length(items) : 0;
                for (size_t i = 0; i < n && !oom; i++) {
                    json_object *it = json_object_array_get_idx(items, i);
                    json_object *md = cu_jget(it, "metadata"), *st = cu_jget(it, "status");
                    const char *name = cu_jstr(md, "name");
                    if (!name)
                        continue;
                    qrow *r = qrows_get(k ? &lqs : &cqs, k ? cu_jstr(md, "namespace") : NULL, name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    const char *other =
                        cu_jstr(cu_jget(it, "spec"), k ? "clusterQueue" : "cohortName");
                    if (!other && !k)
                        other = cu_jstr(cu_jget(it, "spec"), "cohort");
                    snprintf(k ? r->cq : r->cohort, sizeof(r->cq), "%s", other ? other : "");
                    r->reserving = cu_jint(st, "reservingWorkloads");
                    r->admitted = cu_jint(st, "admittedWorkloads");
                    r->known = 1;
                }
                json_object_put(l);
                cli_areq_clear(&q[k]);
            }
        } else {
            cli_say(c, "warning: the queues' admitted counts are not known");
        }
        json_object *items = cu_jget(doc, "items");
        size_t n = json_object_array_length(items);
        for (size_t i = 0; i < n && !oom; i++) {
            json_object *it = json_object_array_get_idx(items, i);
            const char *cq = cu_jstr(it, "clusterQueue"), *lq = cu_jstr(it, "localQueue");
            const char *ns = cu_jstr(it, "namespace");
            qrow *r = cq && *cq ? qrows_get(&cqs, NULL, cq) : NULL;
            if (r)
                r->pending++;
            r = lq && *lq && ns ? qrows_get(&lqs, ns, lq) : NULL;
            if (r) {
                r->pending++;
                if (!r->cq[0] && cq)
                    snprintf(r->cq, sizeof(r->cq), "%s", cq);
            }
        }
    }
    if (oom) {
        cli_say(c, "out of memory");
        rc = RC_FAIL;
    }
    if (!rc)
        render_list(c, &cqs, &lqs, out);
    free(cqs.v);
    free(lqs.v);
    json_object_put(doc);
    cli_api_close(&a);
    return rc;
}

int cu_queue_main(int argc, char **argv)
{
    cli c = { .cmd = "queue" };
    int rc = cli_begin(&c, argc, argv, 1, help_queue);
    if (rc >= 0)
        return rc;
    cu_buf out;
    cu_buf_init(&out, MAX_BODY);
    const char *sub = optind < argc ? argv[optind] : NULL;
    int nargs = argc - optind - 1;
    if (!sub) {
        rc = cli_usage(&c, "no subcommand given (list or pending)");
    } else if (strcmp(sub, "list") == 0) {
        rc = nargs > 0 ? cli_usage(&c, "list takes no arguments, got '%s'", argv[optind + 1])
                       : queue_list(&c, &out);
    } else if (strcmp(sub, "pending") == 0) {
        rc = nargs > 1 ? cli_usage(&c,
                                   "pending takes one queue (CLUSTERQUEUE or "
                                   "NAMESPACE/LOCALQUEUE), got extra '%s'",
                                   argv[optind + 2])
                       : queue_pending(&c, nargs ? argv[optind + 1] : NULL, &out);
    } else {
        rc = cli_usage(&c, "unknown subcommand '%s' (use list or pending)", sub);
    }
    if (!rc)
        rc = cli_emit(&c, &out);
    cu_buf_free(&out);
    cli_say_fallback(&c, rc);
    cu_buf_free(&c.notes);
    return rc;
}
