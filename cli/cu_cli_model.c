/*
 * cu_cli_model.c - the answer when no controller answers: the API objects
 * LISTed, decoded into one cu_world and run through an engine until it
 * settles (model_load), and the PendingWorkloads document computed from it
 * and rendered as a table (both sources).
 */
#include "cu_cli_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- the model computed from the API objects ---------------- */

const res_info cli_res_tab[NRES] = {
    { "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", CU_GROUP "/v1beta2", "ResourceFlavor", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", CU_GROUP "/v1beta2", "ClusterQueue", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/cohorts", CU_GROUP "/v1beta2", "Cohort", 1 },
    { "/apis/kueue.x-k8s.io/v1beta2/localqueues", CU_GROUP "/v1beta2", "LocalQueue", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", CU_GROUP "/v1beta2",
      "WorkloadPriorityClass", 1 },
    { "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", 1 },
    { "/api/v1/namespaces", "v1", "Namespace", 1 },
    { "/apis/kueue.x-k8s.io/v1beta2/admissionchecks", CU_GROUP "/v1beta2", "AdmissionCheck", 1 },
    { "/apis/kueue.x-k8s.io/v1beta2/workloads", CU_GROUP "/v1beta2", "Workload", 0 },
    { "/apis/batch/v1/jobs", "batch/v1", "Job", 1 },
};

void cli_model_free(model *m)
{
    if (m->e)
        cu_engine_free(m->e);
    cu_world_free(&m->w);
    cu_world_free(&m->cw);
    cu_strmap_free(&m->synth);
    cu_arena_free(&m->keys);
    json_object_put(m->owners);
    m->owners = NULL;
}

/* Decodes one LIST item of resource r into m->w; problems go to d. */
static void decode_item(model *m, int r, json_object *item, cu_diag *d)
{
    cu_arena tmp;
    cu_arena_init(&tmp, 16 * 1024);
    cu_node *n = cu_node_from_json(&tmp, item);
    if (n && n->type == CU_NODE_MAP) {
        cu_node_set(&tmp, n, "apiVersion", cu_node_new_str(&tmp, cli_res_tab[r].api_version));
        cu_node_set(&tmp, n, "kind", cu_node_new_str(&tmp, cli_res_tab[r].kind));
        cu_doc doc = { .file = "api", .root = n };
        cu_world_decode(&m->w, &doc, d);
    }
    cu_arena_free(&tmp);
}

/* Reads the --config file into m->cw / m->cf. Returns 0 or RC_USAGE. */
static int load_config(const cli *c, model *m)
{
    if (!c->config)
        return 0;
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_world_load(&m->cw, &c->config, 1, &d);
    if (err != CU_OK || m->cw.configs.n != 1 || d.nerrors) {
        cli_say_diag(c, &d);
        if (err == CU_OK && m->cw.configs.n != 1)
            cli_say(c, "%s: expected one config.kueue.x-k8s.io Configuration, found %zu", c->config,
                    m->cw.configs.n);
        cu_diag_free(&d);
        return RC_USAGE;
    }
    cu_diag_free(&d);
    m->cf = m->cw.configs.items[0];
    return 0;
}

/* LISTs the objects, builds the world and runs the engine on it. Returns
 * 0, or an exit code with the problem printed. */
int cli_model_load(cli *c, api *a, model *m)
{
    memset(m, 0, sizeof(*m));
    cu_world_init(&m->w);
    cu_world_init(&m->cw);
    cu_strmap_init(&m->synth);
    cu_arena_init(&m->keys, 0);
    int rc = load_config(c, m);
    if (rc)
        return rc;

    areq q[NRES];
    memset(q, 0, sizeof(q));
    for (int r = 0; r < NRES; r++)
        snprintf(q[r].path, sizeof(q[r].path), "%s", cli_res_tab[r].path);
    cli_api_run(a, q, NRES);

    cu_diag d;
    cu_diag_init(&d);
    json_object *lists[NRES] = { 0 };
    for (int r = 0; r < NRES && !rc; r++) {
        if (q[r].code == 404 && cli_res_tab[r].optional)
            continue;
        if (q[r].code == 404) {
            cli_say(c, "the API server at %s does not serve %s (are Kueue's CRDs installed?)",
                    a->cfg->server, cli_res_tab[r].path);
            rc = RC_FAIL;
        } else if (q[r].code != 200) {
            cli_say_api_error(c, a, &q[r]);
            rc = RC_FAIL;
        } else if (!q[r].body || !(lists[r] = cu_json_parse_str(q[r].body)) ||
                   !json_object_is_type(cu_jget(lists[r], "items"), json_type_array)) {
            cli_say(c, "GET %s: the answer is not a list", q[r].path);
            rc = RC_FAIL;
        }
    }
    if (!rc) {
        for (int r = 0; r < R_JOB; r++) {
            json_object *items = cu_jget(lists[r], "items");
            size_t n = items ? json_object_array_length(items) : 0;
            for (size_t i = 0; i < n; i++)
                decode_item(m, r, json_object_array_get_idx(items, i), &d);
        }
        /* the Workloads' owners, for the pending list */
        m->owners = json_object_new_object();
        json_object *wls = cu_jget(lists[R_WL], "items");
        for (size_t i = 0, n = cu_jarr_len(wls); i < n; i++) {
            json_object *md = cu_jget(json_object_array_get_idx(wls, i), "metadata");
            char wk[600], own[600];
            snprintf(wk, sizeof(wk), "%s/%s",
                     cu_jstr(md, "namespace") ? cu_jstr(md, "namespace") : "",
                     cu_jstr(md, "name") ? cu_jstr(md, "name") : "");
            if (cu_status_owner_text(cu_jget(md, "ownerReferences"), own, sizeof(own)))
                json_object_object_add(m->owners, wk, json_object_new_string(own));
        }
        m->have_ns = lists[R_NS] != NULL;
        /* labelled Jobs without their Workload yet: the Workload the
         * controller would create for each */
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        cu_strmap have;
        cu_strmap_init(&have);
        char key[600];
        for (size_t i = 0; i < m->w.workloads.n; i++) {
            const cu_workload *wl = m->w.workloads.items[i];
            snprintf(key, sizeof(key), "%s/%s", wl->meta.ns ? wl->meta.ns : "default",
                     wl->meta.name);
            cu_strmap_put(&have, cu_arena_strdup(&tmp, key), 1);
        }
        /* namespaces with a LocalQueue named "default": their unlabelled
         * Jobs go there, as the controller manages them */
        cu_strmap dflt;
        cu_strmap_init(&dflt);
        json_object *lqs = cu_jget(lists[R_LQ], "items");
        for (size_t i = 0, nl = lqs ? json_object_array_length(lqs) : 0; i < nl; i++) {
            json_object *lmd = cu_jget(json_object_array_get_idx(lqs, i), "metadata");
            const char *ln = cu_jstr(lmd, "name"), *lns = cu_jstr(lmd, "namespace");
            if (ln && lns && strcmp(ln, "default") == 0)
                cu_strmap_put(&dflt, cu_arena_strdup(&tmp, lns), 1);
        }
        json_object *items = cu_jget(lists[R_JOB], "items");
        size_t n = items ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *job = json_object_array_get_idx(items, i);
            json_object *md = cu_jget(job, "metadata");
            const char *q_name = cu_jstr(cu_jget(md, "labels"), CU_LABEL_QUEUE_NAME);
            const char *name = cu_jstr(md, "name"), *ns = cu_jstr(md, "namespace");
            const char *uid = cu_jstr(md, "uid");
            int to_default = (!q_name || !*q_name) && ns && cu_strmap_get(&dflt, ns) >= 0;
            if ((!to_default && (!q_name || !*q_name)) || !name || !ns || !uid ||
                cu_ctrl_job_finished(job, NULL))
                continue;
            const char *wn = cu_job_workload_name(&tmp, name, uid);
            snprintf(key, sizeof(key), "%s/%s", ns, wn ? wn : "");
            if (!wn || cu_strmap_get(&have, key) >= 0)
                continue;
            size_t before = m->w.workloads.n;
            json_object *copy = NULL;
            if (to_default && json_object_deep_copy(job, &copy, NULL) == 0) {
                json_object *cmd = cu_jget(copy, "metadata"), *lb = cu_jget(cmd, "labels");
                if (!lb) {
                    lb = json_object_new_object();
                    json_object_object_add(cmd, "labels", lb);
                }
                json_object_object_add(lb, CU_LABEL_QUEUE_NAME, json_object_new_string("default"));
            }
            decode_item(m, R_JOB, copy ? copy : job, &d);
            json_object_put(copy);
            if (m->w.workloads.n > before) {
                cu_strmap_put(&m->synth, cu_arena_strdup(&m->keys, key), 1);
                char own[600];
                snprintf(own, sizeof(own), "Job/%s", name);
                json_object_object_add(m->owners, key, json_object_new_string(own));
            }
        }
        cu_strmap_free(&dflt);
        cu_arena_free(&tmp);
        cu_strmap_free(&have);
        /* objects that did not decode are left out, as the controller does */
        for (size_t i = 0; i < d.n; i++)
            cli_say(c, "warning: left out: %s", d.msgs[i]);
        cu_diag_free(&d);
        cu_diag_init(&d);
        cu_err xerr = cu_world_effective_requests(&m->w, m->cf);

        cu_engine_opts eo = { 0 };
        eo.clock.now_ms = cu_clock_system_now;
        eo.manual_evictions = 1;
        if (m->cf) {
            eo.fair_sharing = m->cf->fair_sharing;
            eo.nstrategies = m->cf->nstrategies;
            memcpy(eo.strategies, m->cf->strategies, sizeof(eo.strategies));
            eo.afs = m->cf->afs;
            eo.afs_half_life_ms = m->cf->afs_half_life_ms;
            eo.afs_sampling_ms = m->cf->afs_sampling_ms;
            eo.afs_weights = m->cf->afs_weights.n ? &m->cf->afs_weights : NULL;
        }
        m->e = xerr ? NULL : cu_engine_new(&eo);
        cu_err err = xerr ? xerr : m->e ? cu_engine_load(m->e, &m->w, &d) : CU_ENOMEM;
        if (err != CU_OK) {
            cli_say_diag(c, &d);
            cli_say(c, "cannot load the admission engine: %s", cu_strerror(err));
            rc = RC_FAIL;
        } else {
            cu_engine_run(m->e, MAX_CYCLES);
            size_t nw = cu_engine_nworkloads(m->e);
            for (size_t i = 0; i < nw; i++) {
                const cu_wl_info *wi = cu_engine_workload_info(m->e, i);
                if (wi && wi->admitted && !wi->finished && !cu_workload_has_quota(wi->obj))
                    m->would_admit++;
            }
        }
    }
    cu_diag_free(&d);
    for (int r = 0; r < NRES; r++) {
        json_object_put(lists[r]);
        cli_areq_clear(&q[r]);
    }
    return rc;
}

/* The world's Workload ns/name, or NULL. */
const cu_workload *cli_find_wl(const model *m, const char *ns, const char *name)
{
    for (size_t i = 0; i < m->w.workloads.n; i++) {
        const cu_workload *wl = m->w.workloads.items[i];
        if (strcmp(wl->meta.name, name) == 0 &&
            strcmp(wl->meta.ns ? wl->meta.ns : "default", ns) == 0)
            return wl;
    }
    return NULL;
}

int cli_have_namespace(const model *m, const char *ns)
{
    if (!m->have_ns)
        return 1;
    for (size_t i = 0; i < m->w.namespaces.n; i++)
        if (strcmp(m->w.namespaces.items[i]->meta.name, ns) == 0)
            return 1;
    return 0;
}

/* ---------------- pending workloads (both sources) ---------------- */

/* The PendingWorkloads document of the endpoint, computed from the engine:
 * pending workloads in a queue (filtered by cq, or lq "ns/name"), in
 * admission order; the Workloads built from Jobs that have none are
 * marked noWorkloadYet. Returns a new object (json_object_put) or NULL
 * (OOM). */
json_object *cli_offline_pending(model *m, const char *cq, const char *lq)
{
    size_t n = cu_engine_nworkloads(m->e), k = 0;
    const cu_wl_info **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(m->e, i);
        if (!w || w->admitted || w->finished || w->evicting || w->position < 0 || !w->cluster_queue)
            continue;
        v[k++] = w;
    }
    json_object *doc = cu_status_pending_doc(v, k, cq, lq, cu_clock_system_now(NULL));
    free(v);
    json_object *items = cu_jget(doc, "items");
    char key[600];
    for (size_t i = 0, ni = items ? json_object_array_length(items) : 0; i < ni; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        snprintf(key, sizeof(key), "%s/%s", cu_jstr(it, "namespace"), cu_jstr(it, "name"));
        if (cu_strmap_get(&m->synth, key) >= 0)
            json_object_object_add(it, "noWorkloadYet", json_object_new_boolean(1));
        const char *own = cu_jstr(m->owners, key);
        if (own)
            json_object_object_add(it, "owner", json_object_new_string(own));
    }
    return doc;
}

/* Appends the table of doc's items to out. lq: one LocalQueue was asked
 * for (positions in it, names without namespace); all: no filter. */
void cli_render_pending(const cli *c, json_object *doc, const char *lq, int all, cu_buf *out)
{
    json_object *items = cu_jget(doc, "items");
    size_t n = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
    table t = { 0 };
    const char *hdr[10];
    size_t nc = 0;
    hdr[nc++] = "POSITION";
    hdr[nc++] = lq ? "NAME" : "NAMESPACE/NAME";
    if (all)
        hdr[nc++] = "CLUSTERQUEUE";
    hdr[nc++] = "LOCALQUEUE";
    hdr[nc++] = "PRIORITY";
    hdr[nc++] = "REQUESTS";
    hdr[nc++] = "AGE";
    hdr[nc++] = "REASON";
    if (c->wide) {
        hdr[nc++] = "OWNER";
        hdr[nc++] = "MESSAGE";
    }
    t.ncols = nc;
    cli_tbl_row(&t, hdr);
    int64_t now = cu_clock_system_now(NULL);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        char pos[24], name[600], prio[24], age[32];
        cu_buf req;
        cu_buf_init(&req, 4096);
        const char *row[10];
        nc = 0;
        snprintf(pos, sizeof(pos), "%d",
                 json_object_get_int(
                     cu_jget(it, lq ? "positionInLocalQueue" : "positionInClusterQueue")));
        row[nc++] = pos;
        if (lq)
            snprintf(name, sizeof(name), "%s", cu_jstr(it, "name") ? cu_jstr(it, "name") : "");
        else
            snprintf(name, sizeof(name), "%s/%s",
                     cu_jstr(it, "namespace") ? cu_jstr(it, "namespace") : "",
                     cu_jstr(it, "name") ? cu_jstr(it, "name") : "");
        row[nc++] = name;
        if (all)
            row[nc++] = cu_jstr(it, "clusterQueue");
        row[nc++] = cu_jstr(it, "localQueue");
        snprintf(prio, sizeof(prio), "%d", json_object_get_int(cu_jget(it, "priority")));
        row[nc++] = prio;
        json_object *rq = cu_jget(it, "requests");
        if (json_object_is_type(rq, json_type_object)) {
            int first = 1;
            json_object_object_foreach (rq, k, v) {
                cu_buf_printf(&req, "%s%s=%s", first ? "" : ",", k, json_object_get_string(v));
                first = 0;
            }
        }
        row[nc++] = cu_buf_str(&req);
        int64_t created;
        const char *ca = cu_jstr(it, "createdAt");
        if (ca && cu_time_parse(ca, &created) == CU_OK)
            cu_duration_human(now - created, age, sizeof(age));
        else
            snprintf(age, sizeof(age), "<unknown>");
        row[nc++] = age;
        row[nc++] = cu_jstr(it, "reason");
        if (c->wide) {
            row[nc++] = cu_jstr(it, "owner");
            row[nc++] = cu_jstr(it, "message");
        }
        cli_tbl_row(&t, row);
        cu_buf_free(&req);
    }
    if (t.failed)
        out->failed = 1;
    else
        cli_tbl_print(&t, out);
    cli_tbl_free(&t);
}
