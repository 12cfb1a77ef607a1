/*
 * fuzz_jobs.c - libFuzzer target for the controller's boundary with the
 * API server: arbitrary bytes are read as a JSON object (what a watch could
 * deliver) and given, as a Job, to the Job integration's pure builders
 * (finished? the Workload to create, the start patch) and, as any kind, to
 * the decoders the informers use (json -> document -> Kueue objects); as a
 * Pod, to the pod integration's builders (role hash, single pod and pod
 * group Workloads), and as a LeaderWorkerSet and its pod, to the LWS
 * integration's (a group's Workload, the pod's labelling patch). Each
 * Workload a builder makes is decoded again, as the controller would see
 * it come back. Any crash or sanitizer report is a finding; a builder that
 * refuses must say why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_controller.h"
#include "fuzz_decode.h"
#include "cu_metrics.h"
#include "cu_lws.h"
#include "cu_pod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    (void)cu_metrics_wants_openmetrics(s); /* an Accept header is untrusted too */
    json_object *o = json_tokener_parse(s);
    free(s);
    if (!o)
        return 0;
    int failed = 0;
    (void)cu_ctrl_job_finished(o, &failed);
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_ctrl_workload_for_job(o, &d);
    if (!wl && d.n == 0)
        abort(); /* a refusal must say why */
    if (wl) {
        decode_as(wl, "kueue.x-k8s.io/v1beta2", "Workload");
        /* the start patch, with the input playing the admitted Workload
         * and the flavor map too */
        cu_diag d2;
        cu_diag_init(&d2);
        json_object *p = cu_ctrl_job_start_patch(o, o, o, &d2, NULL);
        if (!p && d2.n == 0)
            abort();
        json_object_put(p);
        cu_diag_free(&d2);
        json_object_put(wl);
    }
    cu_diag_free(&d);
    /* the pod and LWS integrations' pure builders */
    char role[CU_POD_ROLE_MAX + 1];
    (void)cu_pod_role(o, role);
    (void)cu_pod_terminated(o);
    (void)cu_pod_runnable(o);
    (void)cu_lws_pod_is_managed(o);
    json_object *const pods[2] = { o, o };
    for (int k = 0; k < 3; k++) {
        cu_diag dk;
        cu_diag_init(&dk);
        json_object *w = k == 0   ? cu_pod_workload(o, &dk)
                         : k == 1 ? cu_pod_group_workload("group", pods, 2, &dk)
                                  : cu_lws_workload(o, 1, &dk);
        if (!w && dk.n == 0)
            abort(); /* a refusal must say why */
        if (w)
            decode_as(w, "kueue.x-k8s.io/v1beta2", "Workload");
        json_object_put(w);
        cu_diag_free(&dk);
    }
    json_object_put(cu_lws_pod_patch(o, o));
    static const char *const kinds[][2] = {
        { "kueue.x-k8s.io/v1beta2", "Workload" },
        { "kueue.x-k8s.io/v1beta2", "ClusterQueue" },
        { "kueue.x-k8s.io/v1beta2", "LocalQueue" },
        { "kueue.x-k8s.io/v1beta2", "Cohort" },
        { "kueue.x-k8s.io/v1beta2", "ResourceFlavor" },
        { "v1", "Namespace" },
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        decode_as(o, kinds[i][0], kinds[i][1]);
    json_object_put(o);
    return 0;
}
