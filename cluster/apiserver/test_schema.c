/*
 * test_schema.c - structural schema validation, defaulting and pruning,
 * table-driven over a fragment of Kueue's ClusterQueue schema (v1beta2,
 * written here by hand) and a few small schemas for the generic keywords.
 * Expected messages are kube-apiserver's wording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_schema.h"

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

#define NAME_PATTERN "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"
#define QTY_PATTERN \
    "'^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))))?$'"
#define QTY \
    "{'anyOf':[{'type':'integer'},{'type':'string'}],'pattern':" QTY_PATTERN \
    ",'x-kubernetes-int-or-string':true}"

/* A fragment of kueue.x-k8s.io ClusterQueue's openAPIV3Schema. */
static const char *CQ_SCHEMA =
    "{'type':'object','properties':{"
    " 'apiVersion':{'type':'string'},'kind':{'type':'string'},'metadata':{'type':'object'},"
    " 'spec':{'type':'object','properties':{"
    "  'cohortName':{'type':'string','maxLength':253,'pattern':" NAME_PATTERN "},"
    "  'queueingStrategy':{'type':'string','default':'BestEffortFIFO','enum':['StrictFIFO','BestEffortFIFO']},"
    "  'stopPolicy':{'type':'string','default':'None','enum':['None','Hold','HoldAndDrain']},"
    "  'namespaceSelector':{'type':'object','properties':{"
    "    'matchLabels':{'type':'object','additionalProperties':{'type':'string'}}}},"
    "  'preemption':{'type':'object','default':{},'properties':{"
    "    'reclaimWithinCohort':{'type':'string','default':'Never','enum':['Never','LowerPriority','Any']},"
    "    'withinClusterQueue':{'type':'string','default':'Never','enum':['Never','LowerPriority','LowerOrNewerEqualPriority']},"
    "    'borrowWithinCohort':{'type':'object','properties':{"
    "      'policy':{'type':'string','default':'Never','enum':['Never','LowerPriority']},"
    "      'maxPriorityThreshold':{'type':'integer','format':'int32'}}}}},"
    "  'resourceGroups':{'type':'array','maxItems':16,'x-kubernetes-list-type':'atomic','items':{"
    "    'type':'object','required':['coveredResources','flavors'],'properties':{"
    "     'coveredResources':{'type':'array','maxItems':16,'items':{'type':'string'}},"
    "     'flavors':{'type':'array','maxItems':16,'minItems':1,'x-kubernetes-list-type':'map',"
    "       'x-kubernetes-list-map-keys':['name'],'items':{'type':'object','required':['name','resources'],"
    "       'properties':{"
    "        'name':{'type':'string','maxLength':253,'pattern':" NAME_PATTERN "},"
    "        'resources':{'type':'array','maxItems':16,'x-kubernetes-list-type':'map',"
    "          'x-kubernetes-list-map-keys':['name'],'items':{'type':'object','required':['name','nominalQuota'],"
    "          'properties':{'name':{'type':'string'},'nominalQuota':" QTY ",'borrowingLimit':" QTY
    ",'lendingLimit':" QTY "}}}}}}}}}}},"
    " 'status':{'type':'object','properties':{"
    "  'pendingWorkloads':{'type':'integer','format':'int32','minimum':0},"
    "  'conditions':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['type'],"
    "   'items':{'type':'object','required':['type','status','lastTransitionTime'],'properties':{"
    "    'type':{'type':'string','maxLength':316},"
    "    'status':{'type':'string','enum':['True','False','Unknown']},"
    "    'lastTransitionTime':{'type':'string','format':'date-time'},"
    "    'observedGeneration':{'type':'integer','format':'int64','minimum':0}}}}}}}}";

#define CQ_HEAD \
    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define RG(flavors) \
    "'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[" flavors "]}]"
#define FL(name, res) "{'name':'" name "','resources':[" res "]}"
#define RES(name, q) "{'name':'" name "','nominalQuota':" q "}"

typedef struct want_err {
    const char *field, *type, *message;
} want_err;

typedef struct scase {
    const char *name;
    const char *schema; /* NULL: the ClusterQueue schema */
    const char *obj;
    int strict;
    size_t nerrs;
    want_err errs[4];
    const char *want_obj; /* NULL: not checked; else the object after defaulting/pruning */
} scase;

static const scase cases[] = {
    { "valid ClusterQueue gets its defaults",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("default", RES("cpu", "'10'") "," RES("memory", "'64Gi'"))) "}}",
      1,
      0,
      { { 0 } },
      CQ_HEAD "'spec':{" RG(FL(
          "default",
          RES("cpu", "'10'") "," RES(
              "memory",
              "'64Gi'"))) ",'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
                          "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never'}}}" },
    { "integer quantity accepted",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("f", RES("cpu", "8"))) "}}",
      1,
      0,
      { { 0 } },
      NULL },
    { "enum",
      NULL,
      CQ_HEAD "'spec':{'queueingStrategy':'Fifo'}}",
      1,
      1,
      { { "spec.queueingStrategy", "FieldValueNotSupported",
          "Unsupported value: \"Fifo\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"" } },
      NULL },
    { "nested enum under a defaulted object",
      NULL,
      CQ_HEAD "'spec':{'preemption':{'withinClusterQueue':'Always'}}}",
      1,
      1,
      { { "spec.preemption.withinClusterQueue", "FieldValueNotSupported",
          "Unsupported value: \"Always\": supported values: \"Never\", \"LowerPriority\", \"LowerOrNewerEqualPriority\"" } },
      NULL },
    { "quantity pattern with the full path",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "'1'")) "," FL("b", RES("cpu", "'ten'"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota", "FieldValueInvalid",
          "Invalid value: \"ten\": spec.resourceGroups[0].flavors[1].resources[0].nominalQuota in body should match "
          "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'" } },
      NULL },
    { "int-or-string refuses a boolean",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "true"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "FieldValueTypeInvalid",
          "Invalid value: \"boolean\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body must be of "
          "type integer,string: \"boolean\"" } },
      NULL },
    /* kube-apiserver decodes an integer beyond int64 (and 1e20, 1.5) as a
     * float64, which is an integer only within 2^53 - 1: refused, not
     * stored as a number nobody wrote; an int64 is kept */
    { "int-or-string refuses an integer beyond int64",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "99999999999999999999"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "FieldValueTypeInvalid",
          "Invalid value: \"number\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body must be of "
          "type integer,string: \"number\"" } },
      NULL },
    { "int-or-string refuses a uint64 beyond int64",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "18446744073709551615"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "FieldValueTypeInvalid",
          "Invalid value: \"number\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body must be of "
          "type integer,string: \"number\"" } },
      NULL },
    { "int-or-string refuses a float64 beyond 2^53",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "1e20"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "FieldValueTypeInvalid",
          "Invalid value: \"number\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body must be of "
          "type integer,string: \"number\"" } },
      NULL },
    { "int-or-string keeps the largest int64",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "9223372036854775807"))) "}}",
      1,
      0,
      { { 0 } },
      NULL },
    { "int-or-string takes an integral float64 within 2^53",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "9007199254740991.0"))) "}}",
      1,
      0,
      { { 0 } },
      NULL },
    { "required nominalQuota",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "'1'")) "," FL("b", "{'name':'cpu'}")) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota", "FieldValueRequired",
          "Required value" } },
      NULL },
    { "required fields of a resource group",
      NULL,
      CQ_HEAD "'spec':{'resourceGroups':[{}]}}",
      1,
      2,
      { { "spec.resourceGroups[0].coveredResources", "FieldValueRequired", "Required value" },
        { "spec.resourceGroups[0].flavors", "FieldValueRequired", "Required value" } },
      NULL },
    { "maxItems",
      NULL,
      CQ_HEAD
      "'spec':{'resourceGroups':[{'coveredResources':['a','b','c','d','e','f','g','h','i','j','k','l','m','n',"
      "'o','p','q'],'flavors':[" FL("f", RES("a", "1")) "]}]}}",
      1,
      1,
      { { "spec.resourceGroups[0].coveredResources", "FieldValueTooMany",
          "Too many: 17: must have at most 16 items" } },
      NULL },
    { "minItems",
      NULL,
      CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['a'],'flavors':[]}]}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors", "FieldValueInvalid",
          "Invalid value: 0: spec.resourceGroups[0].flavors in body should have at least 1 items" } },
      NULL },
    { "duplicate flavor (list-type map)",
      NULL,
      CQ_HEAD "'spec':{" RG(FL("a", RES("cpu", "1")) "," FL("a", RES("cpu", "2"))) "}}",
      1,
      1,
      { { "spec.resourceGroups[0].flavors[1]", "FieldValueDuplicate",
          "Duplicate value: {\"name\":\"a\"}" } },
      NULL },
    { "maxLength",
      NULL,
      CQ_HEAD
      "'spec':{'cohortName':'"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}}",
      1,
      1,
      { { "spec.cohortName", "FieldValueTooLong", "Too long: may not be more than 253 bytes" } },
      NULL },
    { "name pattern",
      NULL,
      CQ_HEAD "'spec':{'cohortName':'Team_A'}}",
      1,
      1,
      { { "spec.cohortName", "FieldValueInvalid",
          "Invalid value: \"Team_A\": spec.cohortName in body should match "
          "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'" } },
      NULL },
    { "type",
      NULL,
      CQ_HEAD "'status':{'pendingWorkloads':'3'}}",
      1,
      1,
      { { "status.pendingWorkloads", "FieldValueTypeInvalid",
          "Invalid value: \"string\": status.pendingWorkloads in body must be of type integer: \"string\"" } },
      NULL },
    { "minimum",
      NULL,
      CQ_HEAD "'status':{'pendingWorkloads':-1}}",
      1,
      1,
      { { "status.pendingWorkloads", "FieldValueInvalid",
          "Invalid value: -1: status.pendingWorkloads in body should be greater than or equal to 0" } },
      NULL },
    { "additionalProperties schema",
      NULL,
      CQ_HEAD "'spec':{'namespaceSelector':{'matchLabels':{'team':1}}}}",
      1,
      1,
      { { "spec.namespaceSelector.matchLabels.team", "FieldValueTypeInvalid",
          "Invalid value: \"integer\": spec.namespaceSelector.matchLabels.team in body must be of type string: \"integer\"" } },
      NULL },
    { "date-time format and condition status",
      NULL,
      CQ_HEAD
      "'status':{'conditions':[{'type':'Active','status':'Yes','lastTransitionTime':'yesterday'}]}}",
      1,
      2,
      { { "status.conditions[0].status", "FieldValueNotSupported",
          "Unsupported value: \"Yes\": supported values: \"True\", \"False\", \"Unknown\"" },
        { "status.conditions[0].lastTransitionTime", "FieldValueTypeInvalid",
          "Invalid value: \"yesterday\": status.conditions[0].lastTransitionTime in body must be of type date-time: "
          "\"yesterday\"" } },
      NULL },
    { "duplicate condition type",
      NULL,
      CQ_HEAD
      "'status':{'conditions':[{'type':'A','status':'True','lastTransitionTime':'2026-01-01T00:00:00Z'},"
      "{'type':'A','status':'False','lastTransitionTime':'2026-01-01T00:00:00+01:00'}]}}",
      1,
      1,
      { { "status.conditions[1]", "FieldValueDuplicate", "Duplicate value: {\"type\":\"A\"}" } },
      NULL },
    { "unknown field reported when strict and pruned",
      NULL,
      CQ_HEAD "'spec':{'cohort':'old-field'}}",
      1,
      1,
      { { "spec.cohort", "UnknownField", "unknown field \"spec.cohort\"" } },
      CQ_HEAD "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
              "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never'}}}" },
    { "unknown field pruned silently when not strict",
      NULL,
      CQ_HEAD "'spec':{'cohort':'x'},'extra':1}",
      0,
      0,
      { { 0 } },
      CQ_HEAD "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
              "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never'}}}" },
    { "nested default inside an object that exists",
      NULL,
      CQ_HEAD "'spec':{'preemption':{'borrowWithinCohort':{}}}}",
      1,
      0,
      { { 0 } },
      CQ_HEAD
      "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None','preemption':{'reclaimWithinCohort':"
      "'Never','withinClusterQueue':'Never','borrowWithinCohort':{'policy':'Never'}}}}" },
    { "non-nullable null is dropped, then defaulted",
      NULL,
      CQ_HEAD "'spec':{'stopPolicy':null,'cohortName':null}}",
      1,
      0,
      { { 0 } },
      CQ_HEAD "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
              "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never'}}}" },
    { "several errors at once",
      NULL,
      CQ_HEAD "'spec':{'queueingStrategy':'x','stopPolicy':'y'},'status':{'pendingWorkloads':1.5}}",
      1,
      3,
      { { "spec.queueingStrategy", "FieldValueNotSupported", NULL },
        { "spec.stopPolicy", "FieldValueNotSupported", NULL },
        { "status.pendingWorkloads", "FieldValueTypeInvalid",
          "Invalid value: \"number\": status.pendingWorkloads in body must be of type integer: \"number\"" } },
      NULL },
    /* generic keywords on small schemas */
    { "maximum",
      "{'type':'object','properties':{'x':{'type':'integer','maximum':16}}}",
      "{'x':20}",
      1,
      1,
      { { "x", "FieldValueInvalid",
          "Invalid value: 20: x in body should be less than or equal to 16" } },
      NULL },
    { "exclusive maximum",
      "{'type':'object','properties':{'x':{'type':'number','maximum':1.5,'exclusiveMaximum':true}}}",
      "{'x':1.5}",
      1,
      1,
      { { "x", "FieldValueInvalid", "Invalid value: 1.5: x in body should be less than 1.5" } },
      NULL },
    { "exclusive minimum",
      "{'type':'object','properties':{'x':{'type':'integer','minimum':0,'exclusiveMinimum':true}}}",
      "{'x':0}",
      1,
      1,
      { { "x", "FieldValueInvalid", "Invalid value: 0: x in body should be greater than 0" } },
      NULL },
    { "integral number is an integer",
      "{'type':'object','properties':{'x':{'type':'integer'}}}",
      "{'x':2.0}",
      1,
      0,
      { { 0 } },
      NULL },
    { "required at the root",
      "{'type':'object','required':['spec'],'properties':{'spec':{'type':'object'}}}",
      "{'apiVersion':'v1','kind':'K','metadata':{'name':'a'}}",
      1,
      1,
      { { "spec", "FieldValueRequired", "Required value" } },
      "{'apiVersion':'v1','kind':'K','metadata':{'name':'a'}}" },
    { "minLength",
      "{'type':'object','properties':{'x':{'type':'string','minLength':2}}}",
      "{'x':'a'}",
      1,
      1,
      { { "x", "FieldValueInvalid",
          "Invalid value: \"a\": x in body should be at least 2 chars long" } },
      NULL },
    { "maxLength counts characters",
      "{'type':'object','properties':{'x':{'type':'string','maxLength':2}}}",
      "{'x':'\xc3\xa9\xc3\xa9'}",
      1,
      0,
      { { 0 } },
      NULL },
    { "ECMA \\d and \\w",
      "{'type':'object','properties':{'x':{'type':'string','pattern':'^\\\\d{3}-[\\\\w.]+$'}}}",
      "{'x':'123-ab_c.d'}",
      1,
      0,
      { { 0 } },
      NULL },
    { "ECMA \\d refuses letters",
      "{'type':'object','properties':{'x':{'type':'string','pattern':'^\\\\d+$'}}}",
      "{'x':'12a'}",
      1,
      1,
      { { "x", "FieldValueInvalid", "Invalid value: \"12a\": x in body should match '^\\d+$'" } },
      NULL },
    { "ECMA (?:) and \\s",
      "{'type':'object','properties':{'x':{'type':'string','pattern':'^(?:a|b)\\\\S+$'}}}",
      "{'x':'a b'}",
      1,
      1,
      { { "x", "FieldValueInvalid", NULL } },
      NULL },
    { "nullable keeps null",
      "{'type':'object','properties':{'x':{'type':'string','nullable':true}}}",
      "{'x':null}",
      1,
      0,
      { { 0 } },
      "{'x':null}" },
    { "null array element",
      "{'type':'object','properties':{'x':{'type':'array','items':{'type':'string'}}}}",
      "{'x':['a',null]}",
      1,
      1,
      { { "x[1]", "FieldValueTypeInvalid",
          "Invalid value: \"null\": x[1] in body must be of type string: \"null\"" } },
      NULL },
    { "preserve-unknown-fields keeps unknown fields",
      "{'type':'object','properties':{'x':{'type':'object','x-kubernetes-preserve-unknown-fields':true,"
      "'properties':{'a':{'type':'integer'}}}}}",
      "{'x':{'a':1,'free':{'form':true}}}",
      1,
      0,
      { { 0 } },
      "{'x':{'a':1,'free':{'form':true}}}" },
    { "list-type set",
      "{'type':'object','properties':{'x':{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string'}}}}",
      "{'x':['a','b','a']}",
      1,
      1,
      { { "x[2]", "FieldValueDuplicate", "Duplicate value: \"a\"" } },
      NULL },
    { "enum of integers",
      "{'type':'object','properties':{'x':{'type':'integer','enum':[1,2]}}}",
      "{'x':3}",
      1,
      1,
      { { "x", "FieldValueNotSupported", "Unsupported value: 3: supported values: \"1\", \"2\"" } },
      NULL },
    { "maxProperties",
      "{'type':'object','properties':{'m':{'type':'object','maxProperties':1,"
      "'additionalProperties':{'type':'string'}}}}",
      "{'m':{'a':'1','b':'2'}}",
      1,
      1,
      { { "m", "FieldValueTooMany", "Too many: 2: must have at most 1 item" } },
      NULL },
    { "formats",
      "{'type':'object','properties':{'u':{'type':'string','format':'uuid'},'i':{'type':'string','format':'ipv4'},"
      "'h':{'type':'string','format':'hostname'},'c':{'type':'string','format':'cidr'}}}",
      "{'u':'123e4567-e89b-12d3-a456-426614174000','i':'10.0.0.300','h':'a.example.com','c':'10.0.0.0/8'}",
      1,
      1,
      { { "i", "FieldValueTypeInvalid",
          "Invalid value: \"10.0.0.300\": i in body must be of type ipv4: \"10.0.0.300\"" } },
      NULL },
    { "embedded resource keeps apiVersion/kind/metadata",
      "{'type':'object','properties':{'t':{'type':'object','x-kubernetes-embedded-resource':true,"
      "'properties':{'spec':{'type':'object'}}}}}",
      "{'t':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{},'bogus':1}}",
      0,
      0,
      { { 0 } },
      "{'t':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{}}}" },
    { "default only where the parent exists",
      "{'type':'object','properties':{'a':{'type':'object','properties':{'b':{'type':'string','default':'x'}}}}}",
      "{}",
      1,
      0,
      { { 0 } },
      "{}" },
    { "a default object gets its own nested defaults",
      "{'type':'object','properties':{'a':{'type':'object','default':{},'properties':{'b':{'type':'string','default':'x'}}}}}",
      "{}",
      1,
      0,
      { { 0 } },
      "{'a':{'b':'x'}}" },
};

static void test_schema_table(void **state)
{
    (void)state;
    json_object *cq = J(CQ_SCHEMA);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const scase *tc = &cases[i];
        json_object *schema = tc->schema ? J(tc->schema) : json_object_get(cq);
        json_object *obj = J(tc->obj);
        cu_schema_err errs[8];
        memset(errs, 0, sizeof errs);
        size_t n = cu_schema_validate(schema, obj, tc->strict, errs, 8);
        if (n != tc->nerrs) {
            char all[2048] = "";
            for (size_t k = 0; k < n && k < 8; k++) {
                strncat(all, "\n    ", sizeof all - strlen(all) - 1);
                strncat(all, errs[k].field, sizeof all - strlen(all) - 1);
                strncat(all, ": ", sizeof all - strlen(all) - 1);
                strncat(all, errs[k].message, sizeof all - strlen(all) - 1);
            }
            fail_msg("%s: %zu errors, want %zu:%s", tc->name, n, tc->nerrs, all);
        }
        for (size_t w = 0; w < tc->nerrs; w++) {
            const want_err *we = &tc->errs[w];
            int found = 0;
            for (size_t k = 0; k < n && !found; k++)
                found = !strcmp(errs[k].field, we->field) && !strcmp(errs[k].type, we->type) &&
                        (!we->message || !strcmp(errs[k].message, we->message));
            if (!found) {
                char all[2048] = "";
                for (size_t k = 0; k < n && k < 8; k++) {
                    strncat(all, "\n    ", sizeof all - strlen(all) - 1);
                    strncat(all, errs[k].field, sizeof all - strlen(all) - 1);
                    strncat(all, " [", sizeof all - strlen(all) - 1);
                    strncat(all, errs[k].type, sizeof all - strlen(all) - 1);
                    strncat(all, "] ", sizeof all - strlen(all) - 1);
                    strncat(all, errs[k].message, sizeof all - strlen(all) - 1);
                }
                fail_msg("%s: no error %s [%s] %s; got:%s", tc->name, we->field, we->type,
                         we->message ? we->message : "", all);
            }
        }
        if (tc->want_obj) {
            json_object *want = J(tc->want_obj);
            if (!json_object_equal(obj, want))
                fail_msg("%s:\n  got  %s\n  want %s", tc->name,
                         json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN),
                         json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN));
            json_object_put(want);
        }
        json_object_put(obj);
        json_object_put(schema);
    }
    json_object_put(cq);
}

/* More problems than slots: every one is counted, only max are written. */
static void test_schema_error_cap(void **state)
{
    (void)state;
    json_object *schema =
        J("{'type':'object','properties':{'a':{'type':'integer'},'b':{'type':'integer'},"
          "'c':{'type':'integer'}}}");
    json_object *obj = J("{'a':'x','b':'y','c':'z'}");
    cu_schema_err errs[1];
    memset(errs, 0, sizeof errs);
    assert_int_equal(cu_schema_validate(schema, obj, 1, errs, 1), 3);
    assert_string_equal(errs[0].type, "FieldValueTypeInvalid");
    assert_int_equal(cu_schema_validate(schema, obj, 1, NULL, 0), 3);
    json_object_put(schema);
    json_object_put(obj);
}

/* The schema is borrowed and never modified, even when defaults are
 * copied into the object and the object is later changed. */
static void test_schema_not_modified(void **state)
{
    (void)state;
    json_object *schema = J(CQ_SCHEMA);
    char *before = strdup(json_object_to_json_string(schema));
    json_object *obj = J(CQ_HEAD "'spec':{}}");
    assert_int_equal(cu_schema_validate(schema, obj, 1, NULL, 0), 0);
    json_object *spec = NULL, *pre = NULL;
    assert_true(json_object_object_get_ex(obj, "spec", &spec));
    assert_true(json_object_object_get_ex(spec, "preemption", &pre));
    json_object_object_add(pre, "mutated", json_object_new_int(1));
    assert_string_equal(before, json_object_to_json_string(schema));
    free(before);
    json_object_put(obj);
    json_object_put(schema);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* H1: an array over maxItems is reported as too many first, and the rest
 * of its checks (items, uniqueness of 20,000 distinct keys) take linear
 * time, as kube-apiserver still reports the items' problems. */
static void test_schema_max_items_first(void **state)
{
    (void)state;
    json_object *schema =
        J("{'type':'object','properties':{'l':{'type':'array','maxItems':8,"
          "'x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],"
          "'items':{'type':'object','properties':{'name':{'type':'string','maxLength':3}}}}}}");
    json_object *obj = json_object_new_object(), *l = json_object_new_array();
    for (int i = 0; i < 20000; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%d", i);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(name));
        json_object_array_add(l, e);
    }
    json_object_object_add(obj, "l", l);
    cu_schema_err errs[4];
    double t0 = now_s();
    size_t n = cu_schema_validate(schema, obj, 1, errs, 4);
    double dt = now_s() - t0;
    assert_int_equal(n, 1 + (20000 - 100)); /* names from n100 on are over 3 characters */
    assert_string_equal(errs[0].field, "l");
    assert_string_equal(errs[0].type, "FieldValueTooMany");
    assert_string_equal(errs[0].message, "Too many: 20000: must have at most 8 items");
    assert_string_equal(errs[1].field, "l[100].name");
    assert_true(dt < 10.0); /* the quadratic check took minutes */
    json_object_put(obj);
    json_object_put(schema);
}

/* H1: uniqueness of list-type map keys and set values is checked in
 * linear time: 20,000 distinct keys and one duplicate at the end. Equal
 * values are equal whatever their spelling (1 and 1.0, key order). */
static void test_schema_unique_linear(void **state)
{
    (void)state;
    json_object *schema =
        J("{'type':'object','properties':{'l':{'type':'array',"
          "'x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name','port'],"
          "'items':{'type':'object','properties':{'name':{'type':'string'},"
          "'port':{'type':'integer'}}}},"
          "'s':{'type':'array','x-kubernetes-list-type':'set'}}}");
    json_object *obj = json_object_new_object(), *l = json_object_new_array();
    const int N = 20000;
    for (int i = 0; i <= N; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%d", i == N ? 17 : i);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "port", json_object_new_int(i == N ? 17 : i));
        json_object_object_add(e, "name", json_object_new_string(name));
        json_object_array_add(l, e);
    }
    json_object_object_add(obj, "l", l);
    json_object_object_add(obj, "s",
                           J("[1,'a',1.0,{'x':1,'y':2},{'y':2,'x':1},'b',true,null,null]"));
    cu_schema_err errs[8];
    double t0 = now_s();
    size_t n = cu_schema_validate(schema, obj, 1, errs, 8);
    double dt = now_s() - t0;
    assert_int_equal(n, 4);
    char want[64];
    snprintf(want, sizeof want, "l[%d]", N);
    int seen_l = 0, seen_s2 = 0, seen_s4 = 0, seen_s8 = 0;
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(errs[i].type, "FieldValueDuplicate");
        if (!strcmp(errs[i].field, want)) {
            seen_l = 1;
            assert_string_equal(errs[i].message, "Duplicate value: {\"name\":\"n17\",\"port\":17}");
        }
        seen_s2 |= !strcmp(errs[i].field, "s[2]");
        seen_s4 |= !strcmp(errs[i].field, "s[4]");
        seen_s8 |= !strcmp(errs[i].field, "s[8]");
    }
    assert_true(seen_l && seen_s2 && seen_s4 && seen_s8);
    assert_true(dt < 10.0); /* the quadratic check took minutes */
    json_object_put(obj);
    json_object_put(schema);
}

/* Seconds one validation of obj against schema takes: the best of three
 * (errs: the first error's field lands in field). */
static double best_of_3(json_object *schema, json_object *obj, size_t *n, char *field, size_t nf)
{
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
        cu_schema_err errs[4];
        double t0 = now_s();
        *n = cu_schema_validate(schema, obj, 1, errs, 4);
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
        snprintf(field, nf, "%s", *n ? errs[0].field : "");
    }
    return best;
}

/* H2: a pattern is compiled once per schema, not once per string: 100,000
 * strings under one pattern validate about as fast as under a maxLength
 * (compiling the pattern for each string made it 10-40 times slower; the
 * ratio, not a wall-clock bound, so that a loaded or sanitized build
 * cannot fail it), and the prepared cache gives the same answers. */
static void test_schema_pattern_cache(void **state)
{
    (void)state;
    json_object *schema =
        J("{'type':'object','properties':{'l':{'type':'array','items':{'type':'string',"
          "'pattern':" NAME_PATTERN "}}}}");
    json_object *plain =
        J("{'type':'object','properties':{'l':{'type':'array','items':{'type':'string',"
          "'maxLength':9}}}}");
    json_object *obj = json_object_new_object(), *l = json_object_new_array();
    for (int i = 0; i < 100000; i++) {
        char name[32];
        snprintf(name, sizeof name, i == 777 ? "Bad_%d" : "good-%d", i);
        json_object_array_add(l, json_object_new_string(name));
    }
    json_object_object_add(obj, "l", l);
    size_t n;
    char field[300];
    double t_pat = best_of_3(schema, obj, &n, field, sizeof field);
    assert_int_equal(n, 1);
    assert_string_equal(field, "l[777]");
    double t_plain = best_of_3(plain, obj, &n, field, sizeof field);
    assert_int_equal(n, 100000 - 10000); /* good-10000 and later are over 9 characters */
    print_message("pattern %.3f s, maxLength %.3f s\n", t_pat, t_plain);
    assert_true(t_pat < 6 * t_plain + 0.01);
    cu_schema_err errs[4];
    cu_schema_rx *rx = cu_schema_rx_new(schema);
    assert_non_null(rx);
    memset(errs, 0, sizeof errs);
    assert_int_equal(cu_schema_validate_rx(schema, rx, obj, 1, errs, 4), 1);
    assert_string_equal(errs[0].field, "l[777]");
    cu_schema_rx_free(rx);
    json_object_put(obj);
    json_object_put(plain);
    json_object_put(schema);
}

/* A5: schemas that kube-apiserver would not take are refused with the
 * field of the schema and the problem; good ones pass. */
static void test_schema_check(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *field, *msg;
    } bad[] = {
        { "{'type':'object','properties':{'a':{'type':'number','multipleOf':0}}}",
          "P.properties[a].multipleOf", "Invalid value: 0: must be greater than zero" },
        { "{'type':'object','properties':{'a':{'type':'string','maxLength':-5}}}",
          "P.properties[a].maxLength", "Invalid value: -5: must be greater than or equal to 0" },
        { "{'type':'object','properties':{'a':{'type':'string','minLength':1e20}}}",
          "P.properties[a].minLength", "Invalid value: 1e20: must be an integer" },
        { "{'type':'object','properties':{'a':{'type':'array','maxItems':'3'}}}",
          "P.properties[a].maxItems", "Invalid value: \"3\": must be an integer" },
        { "{'type':'object','properties':{'a':{'type':'integer','default':'x'}}}",
          "P.properties[a].default",
          "Invalid value: \"string\": a in body must be of type integer: \"string\"" },
        { "{'type':'object','properties':{'s':{'type':'object','properties':{'a':{'type':'string','maxLength':2,'default':'abc'}}}}}",
          "P.properties[s].properties[a].default", "Too long: may not be more than 2 bytes" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'(ab'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"(ab\": must be a valid regular expression, but isn't: " },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'a(?=b)'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"a(?=b)\": must be a valid regular expression, but isn't: " },
        { "{'type':'object','properties':{'a':{'type':'array','items':{'type':'string','pattern':'[z-a]'}}}}",
          "P.properties[a].items.pattern",
          "Invalid value: \"[z-a]\": must be a valid regular expression, but isn't: " },
        /* RE2's repetition limits (glibc's regcomp grows exponentially
         * without them: fuzz_schema ran out of memory on a+++...) */
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'^(x|y)+++$'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"^(x|y)+++$\": must be a valid regular expression, but isn't: error parsing regexp: invalid nested repetition operator: `++`" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'a{2}{3}'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"a{2}{3}\": must be a valid regular expression, but isn't: error parsing regexp: invalid nested repetition operator: `{2}{3}`" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'a{1001}'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"a{1001}\": must be a valid regular expression, but isn't: error parsing regexp: invalid repeat count: `{1001}`" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'((a{1000}){1000}){1000}'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"((a{1000}){1000}){1000}\": must be a valid regular expression, but isn't: error parsing regexp: expression too large" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'((a*){100}){300}'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"((a*){100}){300}\": must be a valid regular expression, but isn't: error parsing regexp: expression too large" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'a++'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"a++\": must be a valid regular expression, "
          "but isn't: error parsing regexp: invalid nested repetition operator: `++`" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'^(a|\\\\.b)?++++++++++++++++++++++++++++++++++++++++'}}}",
          "P.properties[a].pattern", "Invalid value: \"^(a|" },
        { "{'type':'object','properties':{'a':{'type':'string','pattern':'x[+*]*?{2}'}}}",
          "P.properties[a].pattern",
          "Invalid value: \"x[+*]*?{2}\": must be a valid regular "
          "expression, but isn't: error parsing regexp: invalid nested repetition operator: `*?{2}`" },
        { "{'type':'object','anyOf':[{'properties':{'a':{'maxProperties':-1}}}]}",
          "P.anyOf[0].properties[a].maxProperties",
          "Invalid value: -1: must be greater than or equal to 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *schema = J(bad[i].schema);
        cu_schema_err errs[4];
        memset(errs, 0, sizeof errs);
        size_t n = cu_schema_check(schema, "P", errs, 4);
        if (n != 1 || strcmp(errs[0].field, bad[i].field) ||
            strncmp(errs[0].message, bad[i].msg, strlen(bad[i].msg)))
            fail_msg("%s: got %zu: %s: %s", bad[i].schema, n, errs[0].field, errs[0].message);
        json_object_put(schema);
    }
    json_object *cq = J(CQ_SCHEMA);
    assert_int_equal(cu_schema_check(cq, "P", NULL, 0), 0);
    json_object_put(cq);
    /* lazy quantifiers, escaped and class quantifier characters are fine */
    json_object *lazy = J("{'type':'string','pattern':'^a+?b*?c??d{1,2}?\\\\++[?*]+(?:x)+$'}");
    assert_int_equal(cu_schema_check(lazy, "P", NULL, 0), 0);
    json_object_put(lazy);
    /* a valid pattern outside the translated subset is not refused */
    json_object *ok = J("{'type':'string','pattern':'\\\\bword\\\\b','default':'x'}");
    assert_int_equal(cu_schema_check(ok, "P", NULL, 0), 0);
    json_object_put(ok);
    /* lazy quantifiers, counts up to 1000 and a group repeated are fine */
    static const char *const good[] = {
        "a*?b",  "a{2}?",  "^[a-z]{1,63}$", "(ab)*c+", "x{1000}",
        "a{2,}", "[{]{1}", "a{,5}",         "(a*)*",   "^[a-z]{1,1000}(\\.[a-z]{1,1000}){0,5}$"
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        json_object *g = json_object_new_object();
        json_object_object_add(g, "type", json_object_new_string("string"));
        json_object_object_add(g, "pattern", json_object_new_string(good[i]));
        cu_schema_err e[2];
        memset(e, 0, sizeof e);
        if (cu_schema_check(g, "P", e, 2) != 0)
            fail_msg("%s refused: %s", good[i], e[0].message);
        json_object_put(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_table),         cmocka_unit_test(test_schema_error_cap),
        cmocka_unit_test(test_schema_not_modified),  cmocka_unit_test(test_schema_max_items_first),
        cmocka_unit_test(test_schema_unique_linear), cmocka_unit_test(test_schema_pattern_cache),
        cmocka_unit_test(test_schema_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
