/*
 * cu_jobctl.c - the Job controller of the simulated cluster: pods for
 * unsuspended Jobs, deletion on suspend, Job status.
 *
 * Job pods carry the finalizer batch.kubernetes.io/job-tracking, as with
 * the real Job controller: a terminal pod is first recorded in the Job's
 * status.uncountedTerminatedPods, then its finalizer is removed, then it
 * is folded into status.succeeded / status.failed, so a pod is counted
 * exactly once even across restarts. Pods the controller deletes itself
 * (suspension, completion, failure, lowered parallelism) lose their
 * finalizer first and are not counted as failed. Orphan pods (their Job
 * is gone) lose the finalizer so garbage collection can remove them.
 */
#include "ks_int.h"

/* ================= the Job controller ================= */

typedef struct podref {
    const char *uid;
    json_object *pod;
} podref;

static int cmp_podref(const void *a, const void *b)
{
    const podref *x = a, *y = b;
    return strcmp(x->uid, y->uid);
}

/* The uid of pod's controller Job, or NULL. */
/* Whether any ownerReference of pod is marked controller. */
static int has_controller(json_object *pod)
{
    json_object *refs = cu_jpath(pod, "metadata.ownerReferences");
    for (size_t i = 0; i < cu_jarr_len(refs); i++)
        if (cu_jas_true(cu_jget(jidx(refs, i), "controller")))
            return 1;
    return 0;
}

static const char *job_owner_uid(json_object *pod)
{
    json_object *refs = cu_jpath(pod, "metadata.ownerReferences");
    for (size_t i = 0; i < cu_jarr_len(refs); i++) {
        json_object *r = jidx(refs, i);
        if (cu_jas_true(cu_jget(r, "controller")) && str_eq(cu_jstr(r, "kind"), "Job"))
            return cu_jstr(r, "uid");
    }
    return NULL;
}

static json_object *pod_for_job(json_object *job)
{
    json_object *tmpl = cu_jpath(job, "spec.template"), *pod = json_object_new_object();
    json_object *md, *lb, *refs, *ref, *fins, *spec, *st;
    char gen[300];
    cu_jset_str(pod, "apiVersion", "v1");
    cu_jset_str(pod, "kind", "Pod");
    md = cu_jchild(pod, "metadata");
    snprintf(gen, sizeof gen, "%s-", ks_name_of(job));
    cu_jset_str(md, "generateName", gen);
    cu_jset_str(md, "namespace", ks_ns_of(job));
    lb = cu_jget(cu_jget(tmpl, "metadata"), "labels");
    lb = lb ? cu_jcopy(lb) : json_object_new_object();
    json_object_object_add(md, "labels", lb);
    cu_jset_str(lb, "batch.kubernetes.io/controller-uid", ks_uid_of(job) ? ks_uid_of(job) : "");
    cu_jset_str(lb, "batch.kubernetes.io/job-name", ks_name_of(job));
    cu_jset_str(lb, "controller-uid", ks_uid_of(job) ? ks_uid_of(job) : "");
    cu_jset_str(lb, "job-name", ks_name_of(job));
    if (cu_jget(cu_jget(tmpl, "metadata"), "annotations"))
        json_object_object_add(md, "annotations",
                               cu_jcopy(cu_jget(cu_jget(tmpl, "metadata"), "annotations")));
    refs = json_object_new_array();
    ref = json_object_new_object();
    cu_jset_str(ref, "apiVersion", "batch/v1");
    cu_jset_str(ref, "kind", "Job");
    cu_jset_str(ref, "name", ks_name_of(job));
    cu_jset_str(ref, "uid", ks_uid_of(job) ? ks_uid_of(job) : "");
    json_object_object_add(ref, "controller", json_object_new_boolean(1));
    json_object_object_add(ref, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(refs, ref);
    json_object_object_add(md, "ownerReferences", refs);
    fins = json_object_new_array();
    json_object_array_add(fins, json_object_new_string(KS_TRACKING_FINALIZER));
    json_object_object_add(md, "finalizers", fins);
    spec = cu_jget(tmpl, "spec");
    spec = spec ? cu_jcopy(spec) : json_object_new_object();
    json_object_object_add(pod, "spec", spec);
    st = cu_jchild(pod, "status");
    cu_jset_str(st, "phase", "Pending");
    cu_jset_str(st, "qosClass", ks_pod_qos(spec));
    return pod;
}

static int uid_in(json_object *arr, const char *uid)
{
    for (size_t i = 0; i < cu_jarr_len(arr); i++)
        if (str_eq(cu_jas_str(jidx(arr, i)), uid))
            return 1;
    return 0;
}

static json_object *find_pod_uid(podref *pods, size_t n, const char *uid)
{
    for (size_t i = 0; i < n; i++)
        if (str_eq(pods[i].uid, uid))
            return pods[i].pod;
    return NULL;
}

/* Ranks pods for deletion when there are too many: unbound first, then
 * not ready, then the newest. */
static int del_rank(json_object *p)
{
    if (!cu_jpath_str(p, "spec.nodeName"))
        return 0;
    if (!ks_cond_true(p, "Ready"))
        return 1;
    return 2;
}

static int cmp_del(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    int rx = del_rank(x), ry = del_rank(y);
    const char *tx = cu_jpath_str(x, "metadata.creationTimestamp");
    const char *ty = cu_jpath_str(y, "metadata.creationTimestamp");
    if (rx != ry)
        return rx - ry;
    return -strcmp(tx ? tx : "", ty ? ty : ""); /* newest first */
}

/* One Job; pods: its pods (by controller uid). */
static int sync_job(cu_store *s, const ks_types *t, json_object *job, podref *pods, size_t np,
                    int64_t now, int64_t *next_due)
{
    int writes = 0;
    char ts[32];
    json_object *spec = cu_jget(job, "spec"), *cur = cu_jcopy(job), *st, *unc, *before = NULL;
    int suspended = cu_jas_true(cu_jget(spec, "suspend"));
    int has_par = cu_jget(spec, "parallelism") != NULL;
    int has_comp = cu_jget(spec, "completions") != NULL;
    int64_t parallelism = cu_jas_num(cu_jget(spec, "parallelism"), 1);
    int64_t completions = cu_jas_num(cu_jget(spec, "completions"), 1);
    int64_t backoff = cu_jas_num(cu_jget(spec, "backoffLimit"), 6);
    int64_t succeeded, failed, active = 0, ready = 0, terminating = 0;
    int finished = ks_cond_true(job, "Complete") || ks_cond_true(job, "Failed");
    json_object **act = NULL;
    size_t nact = 0;

    if (!cur)
        return 0;
    if (!has_par && !has_comp)
        has_comp = 1; /* the API server defaults both to 1 */
    fmt_time(now, ts);
    st = cu_jchild(cur, "status");
    unc = cu_jchild(st, "uncountedTerminatedPods");

    /* 1. record terminal pods that still carry the tracking finalizer */
    int unc_changed = 0;
    for (size_t i = 0; i < np; i++) {
        json_object *p = pods[i].pod;
        const char *ph = cu_jpath_str(p, "status.phase");
        int deleting = cu_jpath(p, "metadata.deletionTimestamp") != NULL;
        int succ = str_eq(ph, "Succeeded");
        int fail = str_eq(ph, "Failed") || (deleting && !succ);
        const char *list = succ ? "succeeded" : "failed";
        if (!ks_has_finalizer(p, KS_TRACKING_FINALIZER) || !(succ || fail))
            continue;
        if (uid_in(cu_jget(unc, "succeeded"), pods[i].uid) ||
            uid_in(cu_jget(unc, "failed"), pods[i].uid))
            continue;
        json_object *arr = cu_jget(unc, list);
        if (!arr) {
            arr = json_object_new_array();
            json_object_object_add(unc, list, arr);
        }
        json_object_array_add(arr, json_object_new_string(pods[i].uid));
        unc_changed = 1;
    }
    if (unc_changed) {
        json_object *out = NULL;
        if (!ks_put(s, t->jobs, cur, "status", &out)) {
            return writes; /* conflict: the next pass retries */
        }
        writes++;
        cur = out;
        st = cu_jchild(cur, "status");
        unc = cu_jchild(st, "uncountedTerminatedPods");
    }
    before = cu_jcopy(cu_jget(cur, "status"));
    /* 2. remove the finalizers of recorded pods; 3. fold them into the counters */
    succeeded = cu_jas_num(cu_jget(st, "succeeded"), 0);
    failed = cu_jas_num(cu_jget(st, "failed"), 0);
    const char *lists[2] = { "succeeded", "failed" };
    for (int l = 0; l < 2; l++) {
        json_object *arr = cu_jget(unc, lists[l]), *keep = json_object_new_array();
        for (size_t i = 0; i < cu_jarr_len(arr); i++) {
            const char *uid = cu_jas_str(jidx(arr, i));
            json_object *p = find_pod_uid(pods, np, uid);
            if (p && ks_has_finalizer(p, KS_TRACKING_FINALIZER) &&
                ks_pod_drop_finalizer(s, t->pods, p)) {
                writes++;
                p = NULL;
            }
            if (!p || !ks_has_finalizer(p, KS_TRACKING_FINALIZER)) {
                if (l == 0)
                    succeeded++;
                else
                    failed++;
            } else {
                json_object_array_add(keep, json_object_new_string(uid ? uid : ""));
            }
        }
        if (cu_jarr_len(keep))
            json_object_object_add(unc, lists[l], keep);
        else {
            json_object_put(keep);
            json_object_object_del(unc, lists[l]);
        }
    }

    /* active, ready, terminating */
    act = calloc(np ? np : 1, sizeof(*act));
    if (!act) {
        json_object_put(cur);
        if (before)
            json_object_put(before);
        return writes;
    }
    for (size_t i = 0; i < np; i++) {
        json_object *p = pods[i].pod;
        int deleting = cu_jpath(p, "metadata.deletionTimestamp") != NULL;
        if (ks_phase_terminal(p))
            continue;
        if (deleting) {
            terminating++;
            continue;
        }
        act[nact++] = p;
        active++;
        if (ks_cond_true(p, "Ready"))
            ready++;
    }

    /* decide */
    int64_t ads = cu_jas_num(cu_jget(spec, "activeDeadlineSeconds"), -1), start = 0;
    const char *start_s = cu_jstr(st, "startTime");
    int have_start = start_s && cu_time_parse(start_s, &start) == CU_OK;
    const char *fail_reason = NULL, *fail_msg = NULL;
    int complete = 0;
    int64_t delete_n = 0, create_n = 0;
    if (!finished) {
        if (failed > backoff) {
            fail_reason = "BackoffLimitExceeded";
            fail_msg = "Job has reached the specified backoff limit";
        } else if (ads >= 0 && have_start && !suspended) {
            if (now >= start + ads * 1000) {
                fail_reason = "DeadlineExceeded";
                fail_msg = "Job was active longer than specified deadline";
            } else if (next_due && start + ads * 1000 < *next_due) {
                *next_due = start + ads * 1000;
            }
        }
        if (!fail_reason)
            complete = has_comp ? succeeded >= completions : (succeeded > 0 && active == 0);
    }
    if (finished || fail_reason || complete || suspended) {
        delete_n = (int64_t)nact;
    } else {
        int64_t want;
        if (has_comp) {
            want = completions - succeeded;
            if (want > parallelism)
                want = parallelism;
        } else {
            want = succeeded > 0 ? active : parallelism;
        }
        if (want < 0)
            want = 0;
        if (active < want)
            create_n = want - active;
        else if (active > want)
            delete_n = active - want;
    }
    if (delete_n) {
        qsort(act, nact, sizeof(*act), cmp_del);
        for (int64_t i = 0; i < delete_n && i < (int64_t)nact; i++) {
            int w = ks_pod_delete(s, t->pods, act[i]);
            writes += w;
            if (w) {
                active--;
                if (ks_cond_true(act[i], "Ready"))
                    ready--;
            }
        }
    }
    for (int64_t i = 0; i < create_n; i++) {
        cu_status cst;
        json_object *out = NULL;
        if (cu_store_create(s, t->pods, ks_ns_of(job), pod_for_job(job), &out, &cst) == CU_OK) {
            writes++;
            active++;
        }
        if (out)
            json_object_put(out);
    }
    free(act);

    /* status */
    if (!finished) {
        if (suspended) {
            ks_cond_set(st, "Suspended", "True", "JobSuspended", "Job suspended", ts, 1);
        } else {
            json_object *sc = ks_cond_get(cur, "Suspended");
            if (sc && str_eq(cu_jstr(sc, "status"), "True")) {
                ks_cond_set(st, "Suspended", "False", "JobResumed", "Job resumed", ts, 1);
                cu_jset_str(st, "startTime", ts);
            } else if (!cu_jget(st, "startTime")) {
                cu_jset_str(st, "startTime", ts);
            }
        }
        if (fail_reason) {
            ks_cond_set(st, "FailureTarget", "True", fail_reason, fail_msg, ts, 1);
            ks_cond_set(st, "Failed", "True", fail_reason, fail_msg, ts, 1);
        } else if (complete) {
            ks_cond_set(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                        "Reached expected number of succeeded pods", ts, 1);
            ks_cond_set(st, "Complete", "True", "CompletionsReached",
                        "Reached expected number of succeeded pods", ts, 1);
            cu_jset_str(st, "completionTime", ts);
        }
    }
    if (cu_jarr_len(cu_jget(st, "conditions")) == 0)
        json_object_object_del(st, "conditions");
    if (active > 0)
        cu_jset_int(st, "active", active);
    else
        json_object_object_del(st, "active");
    if (succeeded > 0)
        cu_jset_int(st, "succeeded", succeeded);
    else
        json_object_object_del(st, "succeeded");
    if (failed > 0)
        cu_jset_int(st, "failed", failed);
    else
        json_object_object_del(st, "failed");
    cu_jset_int(st, "ready", ready < 0 ? 0 : ready);
    cu_jset_int(st, "terminating", terminating);
    if (!json_object_equal(before, st))
        writes += ks_put(s, t->jobs, cur, "status", NULL);
    else
        json_object_put(cur);
    if (before)
        json_object_put(before);
    return writes;
}

int cu_kubesim_sync_jobs(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_types t;
    json_object *jl, *pl, *jobs, *pods;
    podref *refs = NULL, *juids = NULL;
    size_t nref = 0, njobs, npods, nj = 0;
    int writes = 0;
    if (ks_types_get(s, &t) != 0)
        return 0;
    jl = ks_list(s, t.jobs, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    jobs = cu_jget(jl, "items");
    pods = cu_jget(pl, "items");
    njobs = cu_jarr_len(jobs);
    npods = cu_jarr_len(pods);
    refs = calloc(npods ? npods : 1, sizeof(*refs));
    juids = calloc(njobs ? njobs : 1, sizeof(*juids));
    if (!jl || !pl || !refs || !juids)
        goto out;
    for (size_t i = 0; i < njobs; i++) {
        json_object *j = jidx(jobs, i);
        if (ks_uid_of(j) && !cu_jpath(j, "metadata.deletionTimestamp")) {
            juids[nj].uid = ks_uid_of(j);
            juids[nj++].pod = j;
        }
    }
    qsort(juids, nj, sizeof(*juids), cmp_podref);
    for (size_t i = 0; i < npods; i++) {
        json_object *p = jidx(pods, i);
        const char *ou = job_owner_uid(p);
        if (!ou && !has_controller(p)) {
            /* orphaned (its Job was deleted with propagationPolicy Orphan):
             * no Job will count it, so the tracking finalizer goes, as the
             * Job controller's orphan-pod handling does */
            writes += ks_pod_drop_finalizer(s, t.pods, p);
            continue;
        }
        if (!ou || !ks_uid_of(p))
            continue;
        podref key = { ou, NULL };
        if (!bsearch(&key, juids, nj, sizeof(*juids), cmp_podref)) {
            /* orphan: its Job is gone (or going); let it be collected */
            writes += ks_pod_drop_finalizer(s, t.pods, p);
            continue;
        }
        refs[nref].uid = ou;
        refs[nref++].pod = p;
    }
    qsort(refs, nref, sizeof(*refs), cmp_podref);
    for (size_t i = 0; i < nj; i++) {
        podref key = { juids[i].uid, NULL };
        podref *first = bsearch(&key, refs, nref, sizeof(*refs), cmp_podref);
        size_t n = 0;
        if (first) {
            while (first > refs && strcmp(first[-1].uid, key.uid) == 0)
                first--;
            while (first + n < refs + nref && strcmp(first[n].uid, key.uid) == 0)
                n++;
        }
        /* the job's pods, each with its own uid for the status lists */
        podref *mine = calloc(n ? n : 1, sizeof(*mine));
        if (!mine)
            break;
        for (size_t k = 0; k < n; k++) {
            mine[k].pod = first[k].pod;
            mine[k].uid = ks_uid_of(first[k].pod);
        }
        writes += sync_job(s, &t, juids[i].pod, mine, n, now_ms, next_due_ms);
        free(mine);
    }
out:
    free(refs);
    free(juids);
    if (jl)
        json_object_put(jl);
    if (pl)
        json_object_put(pl);
    return writes;
}
