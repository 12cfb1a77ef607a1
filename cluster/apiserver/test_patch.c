/*
 * test_patch.c - table-driven tests of cu_patch: RFC 7386's and RFC 6902's
 * own examples, the strategic merge patch examples of the Kubernetes
 * documentation (kubectl patch tutorial, strategic-merge-patch.md) and
 * the server-side apply simplification.
 *
 * JSON in the tables is written with single quotes (turned into double
 * quotes before parsing) to keep the cases readable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_patch.h"

/* Parses JSON written with ' for ". "null" parses to NULL. */
static json_object *J(const char *s)
{
    char *t = strdup(s);
    assert_non_null(t);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    enum json_tokener_error jerr;
    json_object *o = json_tokener_parse_verbose(t, &jerr);
    if (jerr != json_tokener_success)
        fail_msg("bad test JSON: %s (%s)", s, json_tokener_error_desc(jerr));
    free(t);
    return o;
}

static void expect_json(const char *name, json_object *got, const char *want_s)
{
    json_object *want = J(want_s);
    if (!json_object_equal(got, want))
        fail_msg("%s:\n  got  %s\n  want %s", name,
                 got ? json_object_to_json_string_ext(got, JSON_C_TO_STRING_PLAIN) : "(NULL)",
                 json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN));
    json_object_put(want);
}

enum kind_of_patch { MERGE, JSONPATCH, STRATEGIC, APPLY };

typedef struct pcase {
    const char *name;
    const char *target; /* NULL: no live object (apply creates) */
    const char *patch;
    const char *api_version, *kind;
    const char *want;     /* NULL when an error is expected */
    const char *want_err; /* substring of the error */
} pcase;

static void run_cases(const pcase *cases, size_t n, enum kind_of_patch how)
{
    for (size_t i = 0; i < n; i++) {
        const pcase *tc = &cases[i];
        json_object *target = tc->target ? J(tc->target) : NULL;
        json_object *patch = J(tc->patch);
        char *before = strdup(target ? json_object_to_json_string(target) : "");
        char err[512] = "";
        json_object *got = NULL;
        switch (how) {
        case MERGE: got = cu_merge_patch(target, patch, err, sizeof err); break;
        case JSONPATCH: got = cu_json_patch(target, patch, err, sizeof err); break;
        case STRATEGIC:
            got =
                cu_strategic_merge_patch(target, patch, tc->api_version, tc->kind, err, sizeof err);
            break;
        case APPLY:
            got = cu_apply_patch(target, patch, tc->api_version, tc->kind, err, sizeof err);
            break;
        }
        if (tc->want) {
            if (!got)
                fail_msg("%s: unexpected error: %s", tc->name, err);
            expect_json(tc->name, got, tc->want);
        } else {
            if (got)
                fail_msg("%s: expected an error containing \"%s\", got %s", tc->name, tc->want_err,
                         json_object_to_json_string(got));
            if (!strstr(err, tc->want_err))
                fail_msg("%s: error \"%s\" does not contain \"%s\"", tc->name, err, tc->want_err);
        }
        /* the inputs are borrowed: never modified */
        if (strcmp(before, target ? json_object_to_json_string(target) : "") != 0)
            fail_msg("%s: the target was modified", tc->name);
        free(before);
        json_object_put(got);
        json_object_put(target);
        json_object_put(patch);
    }
}

/* ---- RFC 7386, Appendix A, plus Kubernetes' use of it ---- */
static const pcase merge_cases[] = {
    { "rfc7386 replace member", "{'a':'b'}", "{'a':'c'}", 0, 0, "{'a':'c'}", 0 },
    { "rfc7386 add member", "{'a':'b'}", "{'b':'c'}", 0, 0, "{'a':'b','b':'c'}", 0 },
    { "rfc7386 null deletes", "{'a':'b'}", "{'a':null}", 0, 0, "{}", 0 },
    { "rfc7386 delete one of two", "{'a':'b','b':'c'}", "{'a':null}", 0, 0, "{'b':'c'}", 0 },
    { "rfc7386 array replaces", "{'a':['b']}", "{'a':'c'}", 0, 0, "{'a':'c'}", 0 },
    { "rfc7386 scalar to array", "{'a':'c'}", "{'a':['b']}", 0, 0, "{'a':['b']}", 0 },
    { "rfc7386 nested merge", "{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}", 0, 0,
      "{'a':{'b':'d'}}", 0 },
    { "rfc7386 array of objects replaced", "{'a':[{'b':'c'}]}", "{'a':[1]}", 0, 0, "{'a':[1]}", 0 },
    { "rfc7386 array elements not merged", "{'a':[{'b':'c'}]}", "{'a':[{'c':'d'}]}", 0, 0,
      "{'a':[{'c':'d'}]}", 0 },
    { "rfc7386 non-object target", "['a','b']", "{'a':'c'}", 0, 0, "{'a':'c'}", 0 },
    { "rfc7386 nested null in new object dropped", "{}", "{'a':{'bb':{'ccc':null}}}", 0, 0,
      "{'a':{'bb':{}}}", 0 },
    { "rfc7386 null member of object target", "{'e':null}", "{'a':1}", 0, 0, "{'e':null,'a':1}",
      0 },
    { "k8s containers list replaced (kubectl patch --type merge)",
      "{'spec':{'template':{'spec':{'containers':[{'name':'patch-demo-ctr','image':'nginx'},"
      "{'name':'patch-demo-ctr-2','image':'redis'}]}}}}",
      "{'spec':{'template':{'spec':{'containers':[{'name':'patch-demo-ctr-3','image':'gcr.io/google-samples/hello-app:2.0'}]}}}}",
      0, 0,
      "{'spec':{'template':{'spec':{'containers':[{'name':'patch-demo-ctr-3','image':'gcr.io/google-samples/hello-app:2.0'}]}}}}",
      0 },
    { "label removal", "{'metadata':{'labels':{'a':'1','b':'2'}}}",
      "{'metadata':{'labels':{'a':null}}}", 0, 0, "{'metadata':{'labels':{'b':'2'}}}", 0 },
    { "array patch refused", "{'a':'b'}", "['c']", 0, 0, NULL, "must be a JSON object" },
    { "null patch refused", "{'a':'b'}", "null", 0, 0, NULL, "must be a JSON object" },
};

static void test_merge_patch(void **state)
{
    (void)state;
    run_cases(merge_cases, sizeof merge_cases / sizeof merge_cases[0], MERGE);
}

/* ---- RFC 6902, Appendix A ---- */
static const pcase json_cases[] = {
    { "A.1 add object member", "{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux'}]", 0, 0,
      "{'baz':'qux','foo':'bar'}", 0 },
    { "A.2 add array element", "{'foo':['bar','baz']}",
      "[{'op':'add','path':'/foo/1','value':'qux'}]", 0, 0, "{'foo':['bar','qux','baz']}", 0 },
    { "A.3 remove object member", "{'baz':'qux','foo':'bar'}", "[{'op':'remove','path':'/baz'}]", 0,
      0, "{'foo':'bar'}", 0 },
    { "A.4 remove array element", "{'foo':['bar','qux','baz']}",
      "[{'op':'remove','path':'/foo/1'}]", 0, 0, "{'foo':['bar','baz']}", 0 },
    { "A.5 replace", "{'baz':'qux','foo':'bar'}", "[{'op':'replace','path':'/baz','value':'boo'}]",
      0, 0, "{'baz':'boo','foo':'bar'}", 0 },
    { "A.6 move value", "{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
      "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]", 0, 0,
      "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", 0 },
    { "A.7 move array element", "{'foo':['all','grass','cows','eat']}",
      "[{'op':'move','from':'/foo/1','path':'/foo/3'}]", 0, 0,
      "{'foo':['all','cows','eat','grass']}", 0 },
    { "A.8 test success", "{'baz':'qux','foo':['a',2,'c']}",
      "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]", 0, 0,
      "{'baz':'qux','foo':['a',2,'c']}", 0 },
    { "A.9 test failure", "{'baz':'qux'}", "[{'op':'test','path':'/baz','value':'bar'}]", 0, 0,
      NULL, "testing value /baz failed" },
    { "A.10 add nested member object", "{'foo':'bar'}",
      "[{'op':'add','path':'/child','value':{'grandchild':{}}}]", 0, 0,
      "{'foo':'bar','child':{'grandchild':{}}}", 0 },
    { "A.11 unrecognized elements ignored", "{'foo':'bar'}",
      "[{'op':'add','path':'/baz','value':'qux','xyz':123}]", 0, 0, "{'foo':'bar','baz':'qux'}",
      0 },
    { "A.12 add to nonexistent target", "{'foo':'bar'}",
      "[{'op':'add','path':'/baz/bat','value':'qux'}]", 0, 0, NULL,
      "doc is missing path: \"/baz/bat\"" },
    { "A.14 ~ escapes", "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':10}]", 0, 0,
      "{'/':9,'~1':10}", 0 },
    { "A.15 string is not a number", "{'/':9,'~1':10}",
      "[{'op':'test','path':'/~01','value':'10'}]", 0, 0, NULL, "test failed" },
    { "A.16 add array value", "{'foo':['bar']}",
      "[{'op':'add','path':'/foo/-','value':['abc','def']}]", 0, 0, "{'foo':['bar',['abc','def']]}",
      0 },
    { "~1 escape names a key with a slash",
      "{'metadata':{'labels':{'app.kubernetes.io/name':'x'}}}",
      "[{'op':'remove','path':'/metadata/labels/app.kubernetes.io~1name'}]", 0, 0,
      "{'metadata':{'labels':{}}}", 0 },
    { "copy then test", "{'a':{'b':1}}",
      "[{'op':'copy','from':'/a','path':'/c'},{'op':'test','path':'/c/b','value':1.0}]", 0, 0,
      "{'a':{'b':1},'c':{'b':1}}", 0 },
    { "operations apply in order; failure leaves nothing", "{'a':1}",
      "[{'op':'replace','path':'/a','value':2},{'op':'remove','path':'/nope'}]", 0, 0, NULL,
      "operation 1 (remove /nope)" },
    { "replace of a missing key fails", "{'a':1}", "[{'op':'replace','path':'/b','value':2}]", 0, 0,
      NULL, "missing key" },
    { "index out of bounds", "{'a':[1]}", "[{'op':'add','path':'/a/5','value':2}]", 0, 0, NULL,
      "out of bounds" },
    { "leading zero index refused", "{'a':[1,2]}", "[{'op':'remove','path':'/a/01'}]", 0, 0, NULL,
      "missing path" },
    { "move into its own child refused", "{'a':{'b':{}}}",
      "[{'op':'move','from':'/a','path':'/a/b/c'}]", 0, 0, NULL, "prefix" },
    { "unknown op", "{}", "[{'op':'frob','path':'/a'}]", 0, 0, NULL,
      "unexpected kind of operation \"frob\"" },
    { "missing value", "{}", "[{'op':'add','path':'/a'}]", 0, 0, NULL, "missing \"value\"" },
    { "pointer without slash", "{}", "[{'op':'add','path':'a','value':1}]", 0, 0, NULL,
      "must start with '/'" },
    { "bad escape", "{}", "[{'op':'add','path':'/a~2','value':1}]", 0, 0, NULL, "invalid escape" },
    { "replace whole document", "{'a':1}", "[{'op':'replace','path':'','value':{'b':2}}]", 0, 0,
      "{'b':2}", 0 },
    { "add null value", "{}", "[{'op':'add','path':'/a','value':null}]", 0, 0, "{'a':null}", 0 },
    { "ops must be an array", "{}", "{'op':'add'}", 0, 0, NULL, "must be a JSON array" },
    { "finalizer removal by index with a guard", "{'metadata':{'finalizers':['a','b']}}",
      "[{'op':'test','path':'/metadata/finalizers/0','value':'a'},{'op':'remove','path':'/metadata/finalizers/0'}]",
      0, 0, "{'metadata':{'finalizers':['b']}}", 0 },
};

static void test_json_patch(void **state)
{
    (void)state;
    run_cases(json_cases, sizeof json_cases / sizeof json_cases[0], JSONPATCH);
}

/* ---- strategic merge patch ---- */
#define DEPLOY_LIVE \
    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'patch-demo'}," \
    "'spec':{'replicas':2,'template':{'metadata':{'labels':{'app':'nginx'}},'spec':{" \
    "'containers':[{'name':'patch-demo-ctr','image':'nginx'}]," \
    "'tolerations':[{'effect':'NoSchedule','key':'dedicated','value':'test-team'}]}}}}"

static const pcase smp_cases[] = {
    /* the kubectl patch tutorial: containers merge by name (the new one
     * goes first, as kube-apiserver orders it), tolerations replace */
    { "docs: add a container", DEPLOY_LIVE,
      "{'spec':{'template':{'spec':{'containers':[{'name':'patch-demo-ctr-2','image':'redis'}]}}}}",
      "apps/v1", "Deployment",
      "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'patch-demo'},"
      "'spec':{'replicas':2,'template':{'metadata':{'labels':{'app':'nginx'}},'spec':{"
      "'containers':[{'name':'patch-demo-ctr-2','image':'redis'},{'name':'patch-demo-ctr','image':'nginx'}],"
      "'tolerations':[{'effect':'NoSchedule','key':'dedicated','value':'test-team'}]}}}}",
      0 },
    { "docs: tolerations are replaced", DEPLOY_LIVE,
      "{'spec':{'template':{'spec':{'tolerations':[{'effect':'NoSchedule','key':'disktype','value':'ssd'}]}}}}",
      "apps/v1", "Deployment",
      "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'patch-demo'},"
      "'spec':{'replicas':2,'template':{'metadata':{'labels':{'app':'nginx'}},'spec':{"
      "'containers':[{'name':'patch-demo-ctr','image':'nginx'}],"
      "'tolerations':[{'effect':'NoSchedule','key':'disktype','value':'ssd'}]}}}}",
      0 },
    { "update a container in place, keeping the others",
      "{'spec':{'containers':[{'name':'a','image':'x:1','args':['1']},{'name':'b','image':'y:1'}]}}",
      "{'spec':{'containers':[{'name':'a','image':'x:2'}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','image':'x:2','args':['1']},{'name':'b','image':'y:1'}]}}",
      0 },
    { "env merges by name inside a container",
      "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':'2'}]}]}}",
      "{'spec':{'containers':[{'name':'a','env':[{'name':'Y','value':'3'}]}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':'3'}]}]}}",
      0 },
    { "ports merge by containerPort",
      "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'http'}]}]}}",
      "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'protocol':'TCP'}]}]}}",
      "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'http','protocol':'TCP'}]}]}}",
      0 },
    { "volumeMounts merge by mountPath",
      "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v1'}]}]}}",
      "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/d','readOnly':true}]}]}}",
      "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v1','readOnly':true}]}]}}",
      0 },
    { "$patch: delete removes a container", "{'spec':{'containers':[{'name':'a'},{'name':'b'}]}}",
      "{'spec':{'containers':[{'name':'a','$patch':'delete'}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'b'}]}}", 0 },
    { "$patch: replace on a list", "{'spec':{'containers':[{'name':'a'},{'name':'b'}]}}",
      "{'spec':{'containers':[{'name':'c'},{'$patch':'replace'}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'c'}]}}", 0 },
    { "$patch: replace on a map", "{'spec':{'nodeSelector':{'a':'1','b':'2'}}}",
      "{'spec':{'nodeSelector':{'c':'3','$patch':'replace'}}}", "v1", "Pod",
      "{'spec':{'nodeSelector':{'c':'3'}}}", 0 },
    { "$patch: delete on a map", "{'metadata':{'name':'p','labels':{'a':'1'}}}",
      "{'metadata':{'labels':{'$patch':'delete'}}}", "v1", "Pod", "{'metadata':{'name':'p'}}", 0 },
    { "$retainKeys switches a volume source",
      "{'spec':{'volumes':[{'name':'v','emptyDir':{}},{'name':'w','secret':{'secretName':'s'}}]}}",
      "{'spec':{'volumes':[{'name':'v','hostPath':{'path':'/x'},'$retainKeys':['name','hostPath']}]}}",
      "v1", "Pod",
      "{'spec':{'volumes':[{'name':'v','hostPath':{'path':'/x'}},{'name':'w','secret':{'secretName':'s'}}]}}",
      0 },
    { "$retainKeys on a Deployment strategy",
      "{'spec':{'strategy':{'type':'RollingUpdate','rollingUpdate':{'maxSurge':1}}}}",
      "{'spec':{'strategy':{'$retainKeys':['type'],'type':'Recreate'}}}", "apps/v1", "Deployment",
      "{'spec':{'strategy':{'type':'Recreate'}}}", 0 },
    { "$retainKeys must name every field the patch sets",
      "{'spec':{'strategy':{'type':'RollingUpdate'}}}",
      "{'spec':{'strategy':{'$retainKeys':['type'],'type':'Recreate','rollingUpdate':{}}}}",
      "apps/v1", "Deployment", NULL,
      "spec.strategy: $retainKeys does not contain field rollingUpdate" },
    { "$setElementOrder reorders containers",
      "{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
      "{'spec':{'$setElementOrder/containers':[{'name':'c'},{'name':'a'},{'name':'b'}]}}", "v1",
      "Pod", "{'spec':{'containers':[{'name':'c'},{'name':'a'},{'name':'b'}]}}", 0 },
    { "$setElementOrder with an added container (kubectl apply's patch)",
      "{'spec':{'containers':[{'name':'a','image':'1'},{'name':'b','image':'1'}]}}",
      "{'spec':{'$setElementOrder/containers':[{'name':'a'},{'name':'n'},{'name':'b'}],"
      "'containers':[{'name':'n','image':'2'}]}}",
      "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','image':'1'},{'name':'n','image':'2'},{'name':'b','image':'1'}]}}",
      0 },
    { "finalizers merge as a set", "{'metadata':{'finalizers':['a','b']}}",
      "{'metadata':{'finalizers':['c','a']}}", "v1", "ConfigMap",
      "{'metadata':{'finalizers':['c','a','b']}}", 0 },
    { "$deleteFromPrimitiveList removes a finalizer", "{'metadata':{'finalizers':['a','b','c']}}",
      "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b']}}", "v1", "ConfigMap",
      "{'metadata':{'finalizers':['a','c']}}", 0 },
    { "$setElementOrder on a primitive list", "{'metadata':{'finalizers':['a','b','c']}}",
      "{'metadata':{'$setElementOrder/finalizers':['b','c','a']}}", "v1", "Secret",
      "{'metadata':{'finalizers':['b','c','a']}}", 0 },
    { "ownerReferences merge by uid",
      "{'metadata':{'ownerReferences':[{'uid':'1','kind':'Job','name':'j'}]}}",
      "{'metadata':{'ownerReferences':[{'uid':'1','controller':true}]}}", "v1", "Pod",
      "{'metadata':{'ownerReferences':[{'uid':'1','kind':'Job','name':'j','controller':true}]}}",
      0 },
    { "Job: the pod template's containers merge by name",
      "{'spec':{'parallelism':1,'template':{'spec':{'containers':[{'name':'main','image':'a'},{'name':'side','image':'s'}]}}}}",
      "{'spec':{'parallelism':2,'template':{'spec':{'containers':[{'name':'main','image':'b'}]}}}}",
      "batch/v1", "Job",
      "{'spec':{'parallelism':2,'template':{'spec':{'containers':[{'name':'main','image':'b'},{'name':'side','image':'s'}]}}}}",
      0 },
    { "Job status conditions merge by type",
      "{'status':{'conditions':[{'type':'Suspended','status':'True'}]}}",
      "{'status':{'conditions':[{'type':'Suspended','status':'False'},{'type':'Complete','status':'True'}]}}",
      "batch/v1", "Job",
      "{'status':{'conditions':[{'type':'Suspended','status':'False'},{'type':'Complete','status':'True'}]}}",
      0 },
    { "Node: conditions merge by type, taints replace",
      "{'spec':{'taints':[{'key':'a','effect':'NoSchedule'}]},'status':{'conditions':[{'type':'Ready','status':'True'},"
      "{'type':'MemoryPressure','status':'False'}]}}",
      "{'spec':{'taints':[{'key':'b','effect':'NoExecute'}]},'status':{'conditions':[{'type':'Ready','status':'False'}]}}",
      "v1", "Node",
      "{'spec':{'taints':[{'key':'b','effect':'NoExecute'}]},'status':{'conditions':[{'type':'Ready','status':'False'},"
      "{'type':'MemoryPressure','status':'False'}]}}",
      0 },
    { "null deletes a field", "{'spec':{'nodeName':'n1','priority':5}}",
      "{'spec':{'nodeName':null}}", "v1", "Pod", "{'spec':{'priority':5}}", 0 },
    { "unknown kind: lists replace, maps merge",
      "{'spec':{'cohort':'a','resourceGroups':[{'coveredResources':['cpu']}]}}",
      "{'spec':{'resourceGroups':[{'coveredResources':['gpu']}]}}", "kueue.x-k8s.io/v1beta2",
      "ClusterQueue", "{'spec':{'cohort':'a','resourceGroups':[{'coveredResources':['gpu']}]}}",
      0 },
    { "a kind in another group does not borrow merge keys",
      "{'spec':{'containers':[{'name':'a'}]}}", "{'spec':{'containers':[{'name':'b'}]}}",
      "example.com/v1", "Pod", "{'spec':{'containers':[{'name':'b'}]}}", 0 },
    { "merge-keyed element without its key is refused", "{'spec':{'containers':[{'name':'a'}]}}",
      "{'spec':{'containers':[{'image':'x'}]}}", "v1", "Pod", NULL,
      "spec.containers[0]: map does not contain declared merge key: name" },
    { "unknown directive value", "{'spec':{}}", "{'spec':{'$patch':'frob'}}", "v1", "Pod", NULL,
      "unknown patch type: frob" },
    { "patch must be an object", "{}", "[1]", "v1", "Pod", NULL, "must be a JSON object" },
    { "new container with a nested $patch-free env list", "{'spec':{}}",
      "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':null}]}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','env':[{'name':'X'}]}]}}", 0 },
};

static void test_strategic_merge_patch(void **state)
{
    (void)state;
    run_cases(smp_cases, sizeof smp_cases / sizeof smp_cases[0], STRATEGIC);
}

/* ---- server-side apply (simplified) ---- */
static const pcase apply_cases[] = {
    { "create from nothing", NULL,
      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a'},'data':{'k':'v'}}", "v1",
      "ConfigMap",
      "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a'},'data':{'k':'v'}}", 0 },
    { "fields the configuration omits stay",
      "{'metadata':{'name':'a','labels':{'x':'1'},'uid':'u'},'data':{'k':'v','old':'o'}}",
      "{'metadata':{'name':'a','labels':{'y':'2'}},'data':{'k':'w'}}", "v1", "ConfigMap",
      "{'metadata':{'name':'a','labels':{'x':'1','y':'2'},'uid':'u'},'data':{'k':'w','old':'o'}}",
      0 },
    { "containers merge by name, new ones appended",
      "{'spec':{'containers':[{'name':'a','image':'1','args':['x']},{'name':'b','image':'1'}]}}",
      "{'spec':{'containers':[{'name':'c','image':'3'},{'name':'a','image':'2'}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','image':'2','args':['x']},{'name':'b','image':'1'},{'name':'c','image':'3'}]}}",
      0 },
    { "atomic lists are replaced", "{'spec':{'containers':[{'name':'a','args':['1','2']}]}}",
      "{'spec':{'containers':[{'name':'a','args':['3']}]}}", "v1", "Pod",
      "{'spec':{'containers':[{'name':'a','args':['3']}]}}", 0 },
    { "null never deletes", "{'data':{'k':'v'}}", "{'data':{'k':null}}", "v1", "ConfigMap",
      "{'data':{'k':'v'}}", 0 },
    { "controller status apply on a custom resource",
      "{'spec':{'x':1},'status':{'conditions':[{'type':'A'}],'pending':3}}",
      "{'status':{'conditions':[{'type':'B'}]}}", "kueue.x-k8s.io/v1beta2", "ClusterQueue",
      "{'spec':{'x':1},'status':{'conditions':[{'type':'B'}],'pending':3}}", 0 },
    { "finalizers union", "{'metadata':{'finalizers':['a']}}",
      "{'metadata':{'finalizers':['b','a']}}", "v1", "Pod", "{'metadata':{'finalizers':['a','b']}}",
      0 },
    { "patch directives are not apply configuration", "{}", "{'spec':{'$patch':'replace'}}", "v1",
      "Pod", NULL, "may not contain patch directive $patch" },
    { "an item with a null key is refused (it would be appended on every apply)",
      "{'spec':{'containers':[{'name':'a','image':'1'}]}}",
      "{'spec':{'containers':[{'name':null,'image':'2'}]}}", "v1", "Pod", NULL,
      "spec.containers[0]: associative list with keys has an element that omits key field "
      "\"name\"" },
};

static void test_apply_patch(void **state)
{
    (void)state;
    run_cases(apply_cases, sizeof apply_cases / sizeof apply_cases[0], APPLY);
}

/* A strategic merge patch and a merge patch agree on a custom resource:
 * both replace lists and merge maps. */
static void test_smp_unknown_kind_equals_merge_patch(void **state)
{
    (void)state;
    json_object *t = J("{'a':{'b':[1,2],'c':{'d':1}},'e':'x'}");
    json_object *p = J("{'a':{'b':[3],'c':{'d':null,'f':2}},'e':null}");
    char err[256];
    json_object *m = cu_merge_patch(t, p, err, sizeof err);
    json_object *s = cu_strategic_merge_patch(t, p, "example.com/v1", "Thing", err, sizeof err);
    assert_non_null(m);
    assert_non_null(s);
    assert_true(json_object_equal(m, s));
    expect_json("unknown kind", s, "{'a':{'b':[3],'c':{'f':2}}}");
    json_object_put(m);
    json_object_put(s);
    json_object_put(t);
    json_object_put(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_json_patch),
        cmocka_unit_test(test_strategic_merge_patch),
        cmocka_unit_test(test_apply_patch),
        cmocka_unit_test(test_smp_unknown_kind_equals_merge_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
