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

typedef ks_podref podref;

int ks_has_controller(json_object *pod)
{
    json_object *refs = cu_jpath(pod, "metadata.ownerReferences");
    for (size_t i = 0; i < cu_jarr_len(refs); i++)
        if (cu_jas_true(cu_jget(jidx(refs, i), "controller")))
            return 1;
    return 0;
}

const char *ks_job_owner_uid(json_object *pod)
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
int ks_sync_job(cu_store *s, const ks_types *t, json_object *job, podref *pods, size_t np,
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

static int cmp_podref_name(const void *a, const void *b)
{
    const podref *x = a, *y = b;
    const char *nx = ks_name_of(x->pod), *ny = ks_name_of(y->pod);
    return strcmp(nx ? nx : "", ny ? ny : "");
}

static json_object *get_obj(cu_store *s, const cu_rtype *rt, const char *ns, const char *name)
{
    cu_status st;
    json_object *o = NULL;
    if (!name || cu_store_get(s, rt, ns, name, &o, &st) != CU_OK)
        return NULL;
    return o;
}

/* One entry of the world's Jobs: its sync, or (its Job gone, going, or
 * none at all) its pods' tracking finalizers dropped. */
static int jobctl_one(ks_state *st, cu_store *s, const ks_types *t, int j, int64_t now,
                      int64_t *next_due)
{
    ks_world *w = &st->w;
    ks_job *e = &w->jobs[j];
    podref *mine = NULL;
    size_t n = 0, cap = 0;
    int writes = 0;
    json_object *job = NULL;
    if (e->uid[0] && e->exists && !e->deleting) {
        job = get_obj(s, t->jobs, e->ns, e->name);
        if (!job || !str_eq(ks_uid_of(job), e->uid) ||
            cu_jpath(job, "metadata.deletionTimestamp")) {
            /* the watch has not told us yet: it will */
            if (job)
                json_object_put(job);
            return 0;
        }
    }
    for (int i = e->first; i >= 0; i = w->pods[i].sib) {
        ks_pod *p = &w->pods[i];
        if (!job && !p->has_fin)
            continue; /* an orphan without the finalizer: nothing to do */
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            podref *m = realloc(mine, nc * sizeof(*m));
            if (!m)
                break;
            mine = m;
            cap = nc;
        }
        if ((mine[n].pod = get_obj(s, t->pods, p->ns, p->name)) != NULL) {
            mine[n].uid = ks_uid_of(mine[n].pod);
            if (mine[n].uid)
                n++;
            else
                json_object_put(mine[n].pod);
        }
    }
    if (job) {
        int64_t due = INT64_MAX;
        if (n)
            qsort(mine, n, sizeof(*mine), cmp_podref_name);
        writes += ks_sync_job(s, t, job, mine, n, now, &due);
        json_object_put(job);
        e = &w->jobs[j];
        e->due = due;
        if (next_due && due < *next_due)
            *next_due = due;
    } else {
        for (size_t i = 0; i < n; i++)
            writes += ks_pod_drop_finalizer(s, t->pods, mine[i].pod);
    }
    for (size_t i = 0; i < n; i++)
        json_object_put(mine[i].pod);
    free(mine);
    return writes;
}

int ks_jobctl_pass(ks_state *st, cu_store *s, int64_t now_ms, int64_t *next_due_ms, int max_writes,
                   const volatile int *stop, int *more)
{
    ks_types t;
    ks_world *w = &st->w;
    int writes = 0;
    size_t done = 0;
    if (more)
        *more = 0;
    if (ks_types_get(s, &t) != 0 || ks_state_sync(st, s) != 0)
        return 0;
    /* deadlines due; the next one */
    for (size_t j = 0; j < w->njobs; j++) {
        if (!w->jobs[j].exists || w->jobs[j].due == INT64_MAX)
            continue;
        if (w->jobs[j].due <= now_ms) {
            ks_job *e = &w->jobs[j];
            e->due = INT64_MAX;
            if (!e->dirty && w->ndirty < w->capdirty) {
                e->dirty = 1;
                w->dirty[w->ndirty++] = (int)j;
            } else if (!e->dirty) {
                e->due = now_ms; /* no room in the list now: next pass */
            }
        } else if (next_due_ms && w->jobs[j].due < *next_due_ms) {
            *next_due_ms = w->jobs[j].due;
        }
    }
    for (; done < w->ndirty; done++) {
        if ((max_writes > 0 && writes >= max_writes) || (stop && *stop)) {
            if (more)
                *more = 1;
            break;
        }
        int j = w->dirty[done];
        w->jobs[j].dirty = 0;
        writes += jobctl_one(st, s, &t, j, now_ms, next_due_ms);
    }
    /* what is left waits at the head of the list */
    if (done && w->ndirty > done)
        memmove(w->dirty, w->dirty + done, (w->ndirty - done) * sizeof(*w->dirty));
    w->ndirty -= done;
    return writes;
}

int cu_kubesim_sync_jobs(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_state *st = ks_state_new(0);
    int writes = 0;
    if (!st)
        return 0;
    writes = ks_jobctl_pass(st, s, now_ms, next_due_ms, 0, NULL, NULL);
    ks_state_free(st);
    return writes;
}
