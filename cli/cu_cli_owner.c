/*
 * cu_cli_owner.c - kubectl-style references to the objects that own
 * Workloads (job/NAME, jobset/NAME, pod/NAME, leaderworkerset/NAME, ...)
 * and their Workloads, found generically through the Workloads'
 * ownerReferences as every integration writes them (a JobSet's, a
 * LeaderWorkerSet group's, a single pod's or every pod of a pod group).
 */
#include "cu_cli_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the kinds, with the words kubectl accepts for them */
const cli_kind cli_kinds[] = {
    { "Workload",
      CU_GROUP "/v1beta2",
      "/apis/" CU_GROUP "/v1beta2",
      "workloads",
      { "workload", "workloads", "wl", "workload." CU_GROUP, "workloads." CU_GROUP } },
    { "Job", "batch/v1", "/apis/batch/v1", "jobs", { "job", "jobs", "job.batch", "jobs.batch" } },
    { "JobSet",
      "jobset.x-k8s.io/v1alpha2",
      "/apis/jobset.x-k8s.io/v1alpha2",
      "jobsets",
      { "jobset", "jobsets", "jobset.jobset.x-k8s.io", "jobsets.jobset.x-k8s.io" } },
    { "LeaderWorkerSet",
      "leaderworkerset.x-k8s.io/v1",
      "/apis/leaderworkerset.x-k8s.io/v1",
      "leaderworkersets",
      { "leaderworkerset", "leaderworkersets", "lws", "leaderworkerset.leaderworkerset.x-k8s.io",
        "leaderworkersets.leaderworkerset.x-k8s.io" } },
    { "Pod", "v1", "/api/v1", "pods", { "pod", "pods", "po" } },
    { NULL, NULL, NULL, NULL, { NULL } },
};

const cli_kind *cli_kind_of(const char *word)
{
    for (const cli_kind *k = cli_kinds; word && k->kind; k++)
        for (size_t i = 0; i < sizeof(k->words) / sizeof(k->words[0]) && k->words[i]; i++)
            if (strcmp(k->words[i], word) == 0)
                return k;
    return NULL;
}

int cli_split_ref(const cli *c, const char *arg, char *ns, const cli_kind **kind, char *name,
                  const char *what)
{
    *kind = NULL;
    const char *s1 = strchr(arg, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    char first[300], second[300];
    if (s1) {
        snprintf(first, sizeof(first), "%.*s", (int)(s1 - arg < 299 ? s1 - arg : 299), arg);
        if (s2)
            snprintf(second, sizeof(second), "%.*s", (int)(s2 - s1 - 1 < 299 ? s2 - s1 - 1 : 299),
                     s1 + 1);
    }
    if (s2) {
        /* NAMESPACE/KIND/NAME */
        if (strchr(s2 + 1, '/'))
            return cli_usage(c, "%s: expected [NAMESPACE/][KIND/]NAME, got '%s'", what, arg);
        if (!(*kind = cli_kind_of(second)))
            return cli_usage(c,
                             "%s: unknown kind '%s' (workload, job, jobset, leaderworkerset, "
                             "pod)",
                             what, second);
        char ref[600];
        snprintf(ref, sizeof(ref), "%s/%s", first, s2 + 1);
        return cli_split_target(c, ref, ns, name, what);
    }
    if (s1 && (*kind = cli_kind_of(first)) != NULL)
        /* KIND/NAME (a namespace named like a kind: NAMESPACE/KIND/NAME) */
        return cli_split_target(c, s1 + 1, ns, name, what);
    return cli_split_target(c, arg, ns, name, what);
}

/* 1 when Workload wl lists kind/name among its ownerReferences */
static int owned_by(json_object *wl, const cli_kind *k, const char *name)
{
    json_object *refs = cu_jpath(wl, "metadata.ownerReferences");
    for (size_t i = 0, n = cu_jarr_len(refs); i < n; i++) {
        json_object *o = json_object_array_get_idx(refs, i);
        const char *kd = cu_jstr(o, "kind"), *nm = cu_jstr(o, "name"),
                   *av = cu_jstr(o, "apiVersion");
        if (kd && nm && strcmp(kd, k->kind) == 0 && strcmp(nm, name) == 0 &&
            (!av || strcmp(av, k->api_version) == 0 ||
             strncmp(av, k->api_version, strcspn(k->api_version, "/")) == 0))
            return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cli_owned_workloads(cli *c, api *a, const char *ns, const cli_kind *k, const char *name,
                        cu_strs *out, cu_arena *ar)
{
    out->n = 0;
    out->items = NULL;
    areq q;
    memset(&q, 0, sizeof(q));
    snprintf(q.path, sizeof(q.path), "/apis/%s/v1beta2/namespaces/%s/workloads", CU_GROUP, ns);
    cli_api_run(a, &q, 1);
    int rc = 0;
    json_object *list = NULL;
    if (q.code != 200) {
        cli_say_api_error(c, a, &q);
        rc = RC_FAIL;
    } else if (!(list = q.body ? cu_json_parse_str(q.body) : NULL)) {
        cli_say(c, "GET %s: the answer is not JSON", q.path);
        rc = RC_FAIL;
    }
    json_object *items = cu_jget(list, "items");
    size_t n = cu_jarr_len(items);
    const char **v = n ? cu_arena_alloc(ar, n * sizeof(*v)) : NULL;
    for (size_t i = 0; v && i < n; i++) {
        json_object *wl = json_object_array_get_idx(items, i);
        const char *wn = cu_jpath_str(wl, "metadata.name");
        if (wn && owned_by(wl, k, name))
            v[out->n++] = cu_arena_strdup(ar, wn);
    }
    if (out->n > 1)
        qsort(v, out->n, sizeof(*v), cmp_str);
    out->items = v;
    json_object_put(list);
    cli_areq_clear(&q);
    return rc;
}
