/*
 * cu_cli_explain.c - `cueue explain [NAMESPACE/]NAME`: the controller's
 * /debug/explain, else the explanation computed from the API objects.
 */
#include "cu_cli_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- cueue explain ---------------- */

static const char help_explain[] =
    "Usage: cueue explain [OPTIONS] [NAMESPACE/][KIND/]NAME\n"
    "\n"
    "Explains why a Workload (or the Workload of a Job, a JobSet, a\n"
    "LeaderWorkerSet or a pod) is pending, or\n"
    "where it is admitted: the queue chain (LocalQueue -> ClusterQueue ->\n"
    "cohorts), its position, what it requests, for each flavor tried why it did\n"
    "not fit (quota numbers: requested, free, borrowable, limit), what\n"
    "preemption could do and what would unblock it.\n"
    "\n"
    "NAME is a Workload; when no Workload NAMESPACE/NAME exists, a Job of that\n"
    "name is looked up and its Workload explained. KIND/NAME, as kubectl writes\n"
    "it, names the owner: job (the same as a plain NAME), jobset,\n"
    "leaderworkerset (lws) or pod (a single pod, or one of a pod group); its\n"
    "Workloads are those whose ownerReferences name it (a LeaderWorkerSet has\n"
    "one per group: each is explained in turn). Without NAMESPACE, the\n"
    "kubeconfig context's namespace (default \"default\"); a namespace named\n"
    "like a kind is written NAMESPACE/KIND/NAME.\n"
    "\n"
    "Sources, in order:\n"
    "  1. the running controller: GET /debug/explain on its metrics server\n"
    "     (what the controller's engine knows now);\n"
    "  2. when no controller answers (connection refused, nothing within 2 s\n"
    "     to connect or 5 s to answer) or it is not ready (a standby replica,\n"
    "     still syncing): the API objects, read with the kubeconfig; the\n"
    "     admission engine runs on them and the first line of the output says\n"
    "     that the answer was computed this way. A labelled Job without a\n"
    "     Workload yet is explained as the Workload the controller would create\n"
    "     for it.\n"
    "\n"
    "Options:\n"
    "      --controller URL   the controller's metrics server (default\n"
    "                         $CUEUE_CONTROLLER, else " DEFAULT_CONTROLLER ")\n"
    "      --kubeconfig FILE  kubeconfig (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      the controller's Configuration\n"
    "                         (config.kueue.x-k8s.io): fair sharing,\n"
    "                         excludeResourcePrefixes and transformations, when\n"
    "                         computing from the API objects\n"
    "  -o, --output FORMAT    text (default) or json (the explanation as a\n"
    "                         document: workload, status, reason, message,\n"
    "                         queue, podSets, preemption, unblock); with json,\n"
    "                         the notes go to stderr\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit codes: 0 explained, 1 no such Workload or owner, or a runtime error (API\n"
    "server unreachable, unexpected answer), 2 bad usage.\n";

/* Asks the controller to explain ns/name; on 200 appends the body to out
 * and returns 1. Leaves the answer in r otherwise (free r->body). */
static int explain_ep(const cli *c, const char *ns, const char *name, ep_resp *r, cu_buf *out)
{
    cu_buf p;
    cu_buf_init(&p, 0);
    cu_buf_puts(&p, "/debug/explain?workload=");
    cli_put_query_value(&p, ns);
    cu_buf_puts(&p, "/");
    cli_put_query_value(&p, name);
    if (c->json)
        cu_buf_puts(&p, "&format=json");
    cli_ep_get(c, cu_buf_str(&p), r);
    cu_buf_free(&p);
    if (r->code != 200)
        return 0;
    cu_buf_append(out, r->body.data ? r->body.data : "", r->body.len);
    if (out->len && out->data[out->len - 1] != '\n')
        cu_buf_puts(out, "\n");
    return 1;
}

/* Explains ns/name from the API objects (the notes say why). */
static int explain_offline(cli *c, api *a, const char *ns, const char *name, cu_buf *out)
{
    model m;
    int rc = cli_model_load(c, a, &m);
    if (rc) {
        cli_model_free(&m);
        return rc;
    }
    char wlname[300];
    snprintf(wlname, sizeof(wlname), "%s", name);
    if (!cli_find_wl(&m, ns, name)) {
        json_object *job = NULL;
        rc = cli_api_get_obj(c, a, "/apis/batch/v1", ns, "jobs", name, &job);
        if (rc) {
            cli_model_free(&m);
            return rc;
        }
        if (!job) {
            if (cli_have_namespace(&m, ns))
                cli_say(c, "no Workload or Job %s/%s (namespace %s)", ns, name, ns);
            else
                cli_say(c, "no Workload or Job %s/%s (namespace %s does not exist)", ns, name, ns);
            cli_model_free(&m);
            return RC_FAIL;
        }
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        const char *uid = cu_jstr(cu_jget(job, "metadata"), "uid");
        const char *wn = uid ? cu_job_workload_name(&tmp, name, uid) : NULL;
        snprintf(wlname, sizeof(wlname), "%s", wn ? wn : "");
        const char *label =
            cu_jstr(cu_jget(cu_jget(job, "metadata"), "labels"), CU_LABEL_QUEUE_NAME);
        char key[600];
        snprintf(key, sizeof(key), "%s/%s", ns, wlname);
        if (!wn || !cli_find_wl(&m, ns, wlname)) {
            if (!label || !*label)
                cli_say(c, "Job %s/%s has no Workload: it has no %s label", ns, name,
                        CU_LABEL_QUEUE_NAME);
            else
                cli_say(c, "Job %s/%s has no Workload (expected Workload %s)", ns, name, key);
            json_object_put(job);
            cu_arena_free(&tmp);
            cli_model_free(&m);
            return RC_FAIL;
        }
        if (cu_strmap_get(&m.synth, key) >= 0)
            cu_buf_printf(&c->notes,
                          "(Job %s/%s has no Workload yet: explained as the Workload "
                          "%s the controller would create for it)\n",
                          ns, name, key);
        else
            cu_buf_printf(&c->notes, "(Job %s/%s: its Workload is %s)\n", ns, name, key);
        json_object_put(job);
        cu_arena_free(&tmp);
    }
    const cu_workload *wl = cli_find_wl(&m, ns, wlname);
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, wlname);
    /* pending in the API, admitted by the engine: the controller is late or absent */
    size_t nw = cu_engine_nworkloads(m.e);
    for (size_t i = 0; i < nw; i++) {
        const cu_wl_info *wi = cu_engine_workload_info(m.e, i);
        if (wi && wi->obj == wl && wi->admitted && !cu_workload_has_quota(wl))
            cu_buf_printf(&c->notes, "(not admitted in the API yet: the engine admits it on "
                                     "these objects; is the controller running?)\n");
    }
    cu_diag d;
    cu_diag_init(&d);
    cu_err err;
    if (c->json) {
        cu_arena ar;
        cu_arena_init(&ar, 0);
        cu_node *doc = NULL;
        err = cu_engine_explain_doc(m.e, key, &ar, &doc, &d);
        if (err == CU_OK)
            err = cu_node_emit_json(doc, out, 2);
        if (err == CU_OK && (!out->len || out->data[out->len - 1] != '\n'))
            cu_buf_puts(out, "\n");
        cu_arena_free(&ar);
    } else {
        err = cu_engine_explain(m.e, key, out, &d);
    }
    if (err != CU_OK) {
        cli_say_diag(c, &d);
        if (!d.n)
            cli_say(c, "cannot explain %s: %s", key, cu_strerror(err));
        rc = RC_FAIL;
    }
    cu_diag_free(&d);
    cli_model_free(&m);
    return rc;
}

/* Explains ns/name: the controller first, then the API objects. */
int cli_explain(cli *c, const char *ns, const char *name, cu_buf *out)
{
    ep_resp r;
    if (explain_ep(c, ns, name, &r, out)) {
        cu_buf_free(&r.body);
        return 0;
    }
    api a;
    int rc;
    if (cli_ep_unavailable(&r)) {
        cli_note_offline(c, &r);
        cu_buf_free(&r.body);
        rc = cli_api_open(c, &a);
        if (!rc)
            rc = explain_offline(c, &a, ns, name, out);
        cli_api_close(&a);
        return rc;
    }
    if (r.code != 404) {
        char line[300];
        cli_say(c, "the controller at %s answered HTTP %ld: %s", c->url, r.code,
                cli_first_line(&r.body, line, sizeof(line)));
        cu_buf_free(&r.body);
        return RC_FAIL;
    }
    cu_buf_free(&r.body);
    /* the controller's engine does not know ns/name: a Job's name, a
     * finished Workload, or one the controller has not seen */
    rc = cli_api_open(c, &a);
    if (rc) {
        cli_say(c, "the controller at %s does not know Workload %s/%s", c->url, ns, name);
        return rc;
    }
    json_object *wl = NULL, *job = NULL;
    rc = cli_api_get_obj(c, &a, "/apis/kueue.x-k8s.io/v1beta2", ns, "workloads", name, &wl);
    if (!rc && !wl)
        rc = cli_api_get_obj(c, &a, "/apis/batch/v1", ns, "jobs", name, &job);
    if (!rc && job) {
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        const char *uid = cu_jstr(cu_jget(job, "metadata"), "uid");
        const char *wn = uid ? cu_job_workload_name(&tmp, name, uid) : NULL;
        cu_buf jn;
        cu_buf_init(&jn, 0);
        if (wn && explain_ep(c, ns, wn, &r, &jn)) {
            cu_buf_printf(&c->notes, "(Job %s/%s: its Workload is %s/%s)\n", ns, name, ns, wn);
            cu_buf_append(out, jn.data ? jn.data : "", jn.len);
            cu_buf_free(&r.body);
            cu_buf_free(&jn);
            cu_arena_free(&tmp);
            json_object_put(job);
            cli_api_close(&a);
            return 0;
        }
        if (wn)
            cu_buf_free(&r.body);
        cu_buf_free(&jn);
        cu_buf_printf(&c->notes,
                      "(the controller at %s does not know the Workload of Job "
                      "%s/%s: computed from the API objects)\n",
                      c->url, ns, name);
        cu_arena_free(&tmp);
    } else if (!rc && wl) {
        cu_buf_printf(&c->notes,
                      "(the controller at %s does not know Workload %s/%s: computed "
                      "from the API objects)\n",
                      c->url, ns, name);
    }
    json_object_put(wl);
    json_object_put(job);
    /* explain_offline reports "no Workload or Job" itself */
    if (!rc)
        rc = explain_offline(c, &a, ns, name, out);
    cli_api_close(&a);
    return rc;
}

/* Explains the Workloads of the object kind/name in ns (a JobSet, a
 * LeaderWorkerSet, a pod, ...: those whose ownerReferences name it), one
 * after the other. */
static int explain_owner(cli *c, const char *ns, const cli_kind *k, const char *name, cu_buf *out)
{
    api a;
    int rc = cli_api_open(c, &a);
    if (rc) {
        cli_api_close(&a);
        return rc;
    }
    cu_arena ar;
    cu_arena_init(&ar, 0);
    cu_strs wls = { 0, NULL };
    json_object *obj = NULL;
    rc = cli_api_get_obj(c, &a, k->prefix, ns, k->plural, name, &obj);
    if (!rc)
        rc = cli_owned_workloads(c, &a, ns, k, name, &wls, &ar);
    cli_api_close(&a);
    if (!rc && !wls.n) {
        if (obj)
            cli_say(c, "%s %s/%s has no Workload%s", k->kind, ns, name,
                    cu_jstr(cu_jpath(obj, "metadata.labels"), CU_LABEL_QUEUE_NAME)
                        ? ""
                        : " (it has no " CU_LABEL_QUEUE_NAME " label)");
        else
            cli_say(c, "no %s %s/%s", k->kind, ns, name);
        rc = RC_FAIL;
    }
    json_object_put(obj);
    for (size_t i = 0; !rc && i < wls.n; i++) {
        if (wls.n > 1 && !c->json && i > 0)
            cu_buf_puts(out, "\n");
        cu_buf_printf(&c->notes, "(%s %s/%s: its Workload %s/%s", k->kind, ns, name, ns,
                      wls.items[i]);
        if (wls.n > 1)
            cu_buf_printf(&c->notes, ", %zu of %zu", i + 1, wls.n);
        cu_buf_puts(&c->notes, ")\n");
        if (wls.n > 1 && !c->json) {
            /* the notes come first: each explanation says its Workload */
            cu_buf_printf(out, "== Workload %s/%s (%s %s, %zu of %zu)\n", ns, wls.items[i], k->kind,
                          name, i + 1, wls.n);
        }
        rc = cli_explain(c, ns, wls.items[i], out);
    }
    cu_arena_free(&ar);
    return rc;
}

int cu_explain_main(int argc, char **argv)
{
    cli c = { .cmd = "explain" };
    int rc = cli_begin(&c, argc, argv, 0, help_explain);
    if (rc >= 0)
        return rc;
    if (optind >= argc) {
        cu_buf_free(&c.notes);
        return cli_usage(&c, "no workload given ([NAMESPACE/][KIND/]NAME of a Workload or "
                             "of its owner)");
    }
    if (argc - optind > 1) {
        cu_buf_free(&c.notes);
        return cli_usage(&c, "one workload at a time, got extra '%s'", argv[optind + 1]);
    }
    char ns[254], name[254];
    const cli_kind *k = NULL;
    rc = cli_split_ref(&c, argv[optind], ns, &k, name, "workload");
    if (!rc) {
        cu_buf out;
        cu_buf_init(&out, MAX_BODY);
        /* a Workload, or a Job by the name rules (its Workload may not
         * exist yet): as before; the other kinds by ownerReferences */
        if (!k || strcmp(k->kind, "Workload") == 0 || strcmp(k->kind, "Job") == 0)
            rc = cli_explain(&c, ns, name, &out);
        else
            rc = explain_owner(&c, ns, k, name, &out);
        if (!rc)
            rc = cli_emit(&c, &out);
        cu_buf_free(&out);
    }
    cli_say_fallback(&c, rc);
    cu_buf_free(&c.notes);
    return rc;
}
