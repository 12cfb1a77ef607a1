/*
 * test_visibility.c - Kueue's visibility API as the controller answers it
 * (cu_visibility.h) over fake engine views: the PendingWorkloadsSummary of
 * a ClusterQueue and of a LocalQueue (Kueue's field names, positions in
 * admission order, ownerReferences), limit (default 1000) and offset with
 * positions counted from the queue's head, 404 Status objects naming an
 * unknown queue, 400 for a bad limit, 503 before the engine is ready, the
 * discovery documents, the SubjectAccessReview attributes of a path and
 * the refusals as Status objects.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"
#include "cu_visibility.h"

#define NW 6

typedef struct fake {
    cu_workload obj[NW];
    cu_wl_info w[NW];
    const char *not_ready;
} fake;

static const cu_wl_info **f_pending(void *ud, size_t *n, int *oom)
{
    fake *f = ud;
    const cu_wl_info **v = calloc(NW, sizeof(*v));
    *oom = !v;
    /* in an order other than admission order: the builder sorts */
    for (int i = 0; i < NW; i++)
        v[i] = &f->w[NW - 1 - i];
    *n = NW;
    return v;
}

static int f_cq(void *ud, const char *name)
{
    (void)ud;
    return strcmp(name, "cq-a") == 0 || strcmp(name, "cq-b") == 0 || strcmp(name, "empty") == 0;
}

static int f_lq(void *ud, const char *ns, const char *name)
{
    (void)ud;
    return strcmp(ns, "team") == 0 && (strcmp(name, "lq-1") == 0 || strcmp(name, "lq-2") == 0);
}

static json_object *f_owners(void *ud, const cu_wl_info *w)
{
    (void)ud;
    if (strcmp(w->name, "w0") != 0)
        return NULL;
    return cu_json_parse_str(
        "[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j0\",\"uid\":\"u0\"}]");
}

static const char *f_not_ready(void *ud) { return ((fake *)ud)->not_ready; }

/* cq-a: w0 (lq-1), w1 (lq-2), w2 (lq-1), w3 (lq-1) at positions 0..3;
 * cq-b: w4 (other/lq-1), w5 (team/lq-9: a LocalQueue of another name) */
static int setup(void **state)
{
    fake *f = calloc(1, sizeof(*f));
    static const char *const names[NW] = { "w0", "w1", "w2", "w3", "w4", "w5" };
    static const char *const lqs[NW] = { "lq-1", "lq-2", "lq-1", "lq-1", "lq-1", "lq-9" };
    static const char *const nss[NW] = { "team", "team", "team", "team", "other", "team" };
    for (int i = 0; i < NW; i++) {
        f->obj[i].meta.name = names[i];
        f->obj[i].meta.ns = nss[i];
        f->obj[i].meta.has_created = 1;
        f->obj[i].meta.created_ms = 1700000000000LL + i * 1000;
        f->w[i].obj = &f->obj[i];
        f->w[i].name = names[i];
        f->w[i].ns = nss[i];
        f->w[i].local_queue = lqs[i];
        f->w[i].cluster_queue = i < 4 ? "cq-a" : "cq-b";
        f->w[i].position = i < 4 ? i : i - 4;
        f->w[i].priority = 100 - i;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

/* GET path?query: the status, the parsed body in *doc (caller puts). */
static int get(fake *f, const char *path, const char *query, json_object **doc)
{
    cu_vis_src src = { .pending = f_pending,
                       .cq_known = f_cq,
                       .lq_known = f_lq,
                       .owners = f_owners,
                       .not_ready = f_not_ready,
                       .ud = f };
    cu_buf b;
    cu_buf_init(&b, 0);
    const char *ctype = NULL;
    int code = cu_vis_serve(&src, path, query, &b, &ctype);
    assert_string_equal(ctype, "application/json");
    *doc = cu_json_parse_str(cu_buf_str(&b));
    assert_non_null(*doc);
    cu_buf_free(&b);
    return code;
}

static const char *names_of(json_object *doc, char *out, size_t n)
{
    json_object *items = cu_jget(doc, "items");
    out[0] = 0;
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        snprintf(out + strlen(out), n - strlen(out), "%s%s:%d/%d", i ? " " : "",
                 cu_jpath_str(it, "metadata.name"),
                 (int)cu_jas_int64(cu_jget(it, "positionInClusterQueue"), -1),
                 (int)cu_jas_int64(cu_jget(it, "positionInLocalQueue"), -1));
    }
    return out;
}

/* The first element of the array at dotted path. */
static json_object *first(json_object *o, const char *dotted)
{
    json_object *a = cu_jpath(o, dotted);
    assert_true(json_object_is_type(a, json_type_array));
    return json_object_array_get_idx(a, 0);
}

#define CQ "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/"
#define LQ "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/"

static void test_cluster_queue_shape(void **state)
{
    fake *f = *state;
    json_object *d;
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "", &d), 200);
    assert_string_equal(cu_jstr(d, "kind"), "PendingWorkloadsSummary");
    assert_string_equal(cu_jstr(d, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta2");
    assert_true(json_object_is_type(cu_jget(d, "metadata"), json_type_object));
    char s[256];
    assert_string_equal(names_of(d, s, sizeof(s)), "w0:0/0 w1:1/0 w2:2/1 w3:3/2");
    json_object *w0 = json_object_array_get_idx(cu_jget(d, "items"), 0);
    assert_string_equal(cu_jpath_str(w0, "metadata.namespace"), "team");
    assert_string_equal(cu_jpath_str(w0, "metadata.creationTimestamp"), "2023-11-14T22:13:20Z");
    assert_string_equal(cu_jstr(first(w0, "metadata.ownerReferences"), "kind"), "Job");
    assert_string_equal(cu_jstr(first(w0, "metadata.ownerReferences"), "uid"), "u0");
    assert_string_equal(cu_jstr(w0, "localQueueName"), "lq-1");
    assert_int_equal(cu_jas_int64(cu_jget(w0, "priority"), 0), 100);
    /* exactly Kueue's fields */
    int keys = 0;
    json_object_object_foreach (w0, k, v) {
        (void)k;
        (void)v;
        keys++;
    }
    assert_int_equal(keys, 5);
    json_object *w1 = json_object_array_get_idx(cu_jget(d, "items"), 1);
    assert_null(cu_jpath(w1, "metadata.ownerReferences"));
    json_object_put(d);
    /* a known queue with nothing pending: an empty list, not null */
    assert_int_equal(get(f, CQ "empty/pendingworkloads", "", &d), 200);
    assert_true(json_object_is_type(cu_jget(d, "items"), json_type_array));
    assert_int_equal(json_object_array_length(cu_jget(d, "items")), 0);
    json_object_put(d);
}

static void test_local_queue(void **state)
{
    fake *f = *state;
    json_object *d;
    char s[256];
    assert_int_equal(get(f, LQ "team/localqueues/lq-1/pendingworkloads", "", &d), 200);
    /* not w4: same name, another namespace */
    assert_string_equal(names_of(d, s, sizeof(s)), "w0:0/0 w2:2/1 w3:3/2");
    json_object_put(d);
    assert_int_equal(get(f, LQ "team/localqueues/lq-2/pendingworkloads/", "", &d), 200);
    assert_string_equal(names_of(d, s, sizeof(s)), "w1:1/0");
    json_object_put(d);
}

static void test_limit_offset(void **state)
{
    fake *f = *state;
    json_object *d;
    char s[256];
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "limit=2&offset=1", &d), 200);
    assert_string_equal(names_of(d, s, sizeof(s)), "w1:1/0 w2:2/1");
    json_object_put(d);
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "offset=3", &d), 200);
    assert_string_equal(names_of(d, s, sizeof(s)), "w3:3/2");
    json_object_put(d);
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "offset=9", &d), 200);
    assert_string_equal(names_of(d, s, sizeof(s)), "");
    json_object_put(d);
    /* limit=0 is the default (1000); a negative offset counts as 0 */
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "limit=0&offset=-2", &d), 200);
    assert_string_equal(names_of(d, s, sizeof(s)), "w0:0/0 w1:1/0 w2:2/1 w3:3/2");
    json_object_put(d);
    /* the LocalQueue's positions count the skipped ones too */
    assert_int_equal(get(f, LQ "team/localqueues/lq-1/pendingworkloads", "limit=1&offset=1", &d),
                     200);
    assert_string_equal(names_of(d, s, sizeof(s)), "w2:2/1");
    json_object_put(d);
    static const char *const bad[] = { "limit=x", "limit=-1", "offset=1.5", "limit=" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(get(f, CQ "cq-a/pendingworkloads", bad[i], &d), 400);
        assert_string_equal(cu_jstr(d, "kind"), "Status");
        assert_string_equal(cu_jstr(d, "reason"), "BadRequest");
        json_object_put(d);
    }
}

static void test_not_found_and_not_ready(void **state)
{
    fake *f = *state;
    json_object *d;
    assert_int_equal(get(f, CQ "nope/pendingworkloads", "", &d), 404);
    assert_string_equal(cu_jstr(d, "kind"), "Status");
    assert_string_equal(cu_jstr(d, "status"), "Failure");
    assert_string_equal(cu_jstr(d, "reason"), "NotFound");
    assert_string_equal(cu_jstr(d, "message"),
                        "clusterqueue.visibility.kueue.x-k8s.io \"nope\" not found");
    assert_string_equal(cu_jpath_str(d, "details.name"), "nope");
    assert_string_equal(cu_jpath_str(d, "details.kind"), "clusterqueue");
    assert_int_equal(cu_jas_int64(cu_jget(d, "code"), 0), 404);
    json_object_put(d);
    /* a LocalQueue is looked up in its namespace */
    assert_int_equal(get(f, LQ "other/localqueues/lq-1/pendingworkloads", "", &d), 404);
    assert_string_equal(cu_jstr(d, "message"),
                        "localqueue.visibility.kueue.x-k8s.io \"lq-1\" not found");
    json_object_put(d);
    static const char *const paths[] = {
        CQ "cq-a",
        CQ "cq-a/pendingworkloads/x",
        "/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/cq-a/pendingworkloads",
        "/apis/kueue.x-k8s.io/v1beta2",
        LQ "team/localqueues/lq-1",
        "/",
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        assert_int_equal(get(f, paths[i], "", &d), 404);
        assert_string_equal(cu_jstr(d, "reason"), "NotFound");
        json_object_put(d);
    }
    f->not_ready = "not leading";
    assert_int_equal(get(f, CQ "cq-a/pendingworkloads", "", &d), 503);
    assert_non_null(strstr(cu_jstr(d, "message"), "not leading"));
    json_object_put(d);
    /* discovery does not wait for the engine */
    assert_int_equal(get(f, "/apis/visibility.kueue.x-k8s.io/v1beta2", "", &d), 200);
    json_object_put(d);
}

static void test_discovery(void **state)
{
    fake *f = *state;
    json_object *d;
    assert_int_equal(get(f, "/apis/visibility.kueue.x-k8s.io/v1beta2", "", &d), 200);
    assert_string_equal(cu_jstr(d, "kind"), "APIResourceList");
    assert_string_equal(cu_jstr(d, "groupVersion"), "visibility.kueue.x-k8s.io/v1beta2");
    json_object *rs = cu_jget(d, "resources");
    assert_int_equal(json_object_array_length(rs), 4);
    json_object *r1 = json_object_array_get_idx(rs, 1), *r2 = json_object_array_get_idx(rs, 2);
    assert_string_equal(cu_jstr(r1, "name"), "clusterqueues/pendingworkloads");
    assert_string_equal(cu_jstr(r1, "kind"), "PendingWorkloadsSummary");
    assert_string_equal(json_object_get_string(first(r1, "verbs")), "get");
    assert_false(cu_jas_true(cu_jget(r1, "namespaced")));
    assert_string_equal(cu_jstr(r2, "name"), "localqueues");
    assert_true(cu_jas_true(cu_jget(r2, "namespaced")));
    assert_int_equal(json_object_array_length(cu_jget(r2, "verbs")), 0);
    json_object_put(d);
    assert_int_equal(get(f, "/apis", "", &d), 200);
    assert_string_equal(cu_jstr(d, "kind"), "APIGroupList");
    assert_string_equal(cu_jpath_str(first(d, "groups"), "preferredVersion.groupVersion"),
                        "visibility.kueue.x-k8s.io/v1beta2");
    json_object_put(d);
    assert_int_equal(get(f, "/apis/visibility.kueue.x-k8s.io/", "", &d), 200);
    assert_string_equal(cu_jstr(d, "kind"), "APIGroup");
    assert_string_equal(cu_jstr(d, "name"), "visibility.kueue.x-k8s.io");
    json_object_put(d);
}

static void test_attrs_and_refusals(void **state)
{
    (void)state;
    json_object *a = cu_vis_attrs(NULL, LQ "team/localqueues/lq-1/pendingworkloads");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.namespace"), "team");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.group"), "visibility.kueue.x-k8s.io");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.resource"), "localqueues");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.subresource"), "pendingworkloads");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.name"), "lq-1");
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.verb"), "get");
    json_object_put(a);
    a = cu_vis_attrs(NULL, CQ "cq-a/pendingworkloads");
    assert_null(cu_jpath(a, "resourceAttributes.namespace"));
    assert_string_equal(cu_jpath_str(a, "resourceAttributes.resource"), "clusterqueues");
    json_object_put(a);
    a = cu_vis_attrs(NULL, "/apis");
    assert_string_equal(cu_jpath_str(a, "nonResourceAttributes.path"), "/apis");
    json_object_put(a);
    char msg[1024];
    cu_vis_refuse(NULL, 403, "bob", CQ "cq-a/pendingworkloads", msg, sizeof(msg));
    json_object *d = cu_json_parse_str(msg);
    assert_string_equal(cu_jstr(d, "reason"), "Forbidden");
    assert_string_equal(cu_jstr(d, "message"),
                        "clusterqueues.visibility.kueue.x-k8s.io \"cq-a\" is forbidden: User "
                        "\"bob\" cannot get resource \"clusterqueues/pendingworkloads\" in API "
                        "group \"visibility.kueue.x-k8s.io\" at the cluster scope");
    assert_int_equal(cu_jas_int64(cu_jget(d, "code"), 0), 403);
    json_object_put(d);
    cu_vis_refuse(NULL, 403, "bob", LQ "team/localqueues/lq-1/pendingworkloads", msg, sizeof(msg));
    d = cu_json_parse_str(msg);
    assert_non_null(strstr(cu_jstr(d, "message"), "in the namespace \"team\""));
    json_object_put(d);
    cu_vis_refuse(NULL, 401, "", "/apis", msg, sizeof(msg));
    d = cu_json_parse_str(msg);
    assert_string_equal(cu_jstr(d, "reason"), "Unauthorized");
    json_object_put(d);
    /* a very long name still gives a whole JSON document */
    char path[700];
    snprintf(path, sizeof(path), CQ "%0300d/pendingworkloads", 7);
    cu_vis_refuse(NULL, 403, "bob", path, msg, sizeof(msg));
    d = cu_json_parse_str(msg);
    assert_non_null(d);
    json_object_put(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cluster_queue_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found_and_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attrs_and_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
