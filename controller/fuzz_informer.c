/*
 * fuzz_informer.c - libFuzzer target for the controller's informer decode:
 * arbitrary bytes are handed to an informer as a LIST answer or as watch
 * event lines (cu_informer_feed, no network), for each kind the controller
 * watches, and every object the informer delivers goes through the
 * decoders the controller uses for that kind (json -> document -> Kueue
 * objects; for a Job, the Workload it needs, decoded again). Covers depth
 * (up to CU_JSON_MAX_DEPTH and past it), sizes and types. Any crash or
 * sanitizer report is a finding; so is an object left out without a
 * reason, or a LIST with readable items that never completes.
 *
 * Input: the first byte picks the kind (bits 1..4) and LIST or watch
 * (bit 0); the rest is the LIST body, or watch lines split at '\n'.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_controller.h"
#include "fuzz_decode.h"
#include "cu_informer.h"
#include "cu_kclient.h"
#include "cu_kconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *path, *api_version, *kind;
} kinds[] = {
    { "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", "kueue.x-k8s.io/v1beta2", "ResourceFlavor" },
    { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", "kueue.x-k8s.io/v1beta2", "ClusterQueue" },
    { "/apis/kueue.x-k8s.io/v1beta2/cohorts", "kueue.x-k8s.io/v1beta2", "Cohort" },
    { "/apis/kueue.x-k8s.io/v1beta2/localqueues", "kueue.x-k8s.io/v1beta2", "LocalQueue" },
    { "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", "kueue.x-k8s.io/v1beta2",
      "WorkloadPriorityClass" },
    { "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass" },
    { "/api/v1/namespaces", "v1", "Namespace" },
    { "/apis/kueue.x-k8s.io/v1beta2/admissionchecks", "kueue.x-k8s.io/v1beta2", "AdmissionCheck" },
    { "/apis/kueue.x-k8s.io/v1beta2/workloads", "kueue.x-k8s.io/v1beta2", "Workload" },
    { "/apis/batch/v1/jobs", "batch/v1", "Job" },
};
enum { NK = sizeof(kinds) / sizeof(kinds[0]) };

static struct ev_loop *loop;
static cu_kconfig *cfg;
static cu_kclient *kc;
static cu_informer *inf[NK];
static int which[NK];

static void on_event(cu_informer *in, cu_ievent ev, json_object *obj, void *ud)
{
    (void)in;
    int k = *(int *)ud;
    if (!json_object_is_type(obj, json_type_object))
        abort(); /* the informer hands over objects only */
    if (ev == CU_IEV_DELETED)
        return;
    if (strcmp(kinds[k].kind, "Job") == 0) {
        int failed = 0;
        (void)cu_ctrl_job_finished(obj, &failed);
        cu_diag d;
        cu_diag_init(&d);
        json_object *wl = cu_ctrl_workload_for_job(obj, &d);
        if (!wl && d.n == 0)
            abort(); /* a refusal must say why */
        if (wl)
            decode_as(wl, "kueue.x-k8s.io/v1beta2", "Workload");
        json_object_put(wl);
        cu_diag_free(&d);
        return;
    }
    decode_as(obj, kinds[k].api_version, kinds[k].kind);
}

static void on_skip(cu_informer *in, const char *why, json_object *obj, void *ud)
{
    (void)in;
    (void)obj;
    (void)ud;
    if (!why || !*why)
        abort(); /* left out without a reason */
}

static int synced;
static void on_synced(cu_informer *in, void *ud)
{
    (void)in;
    (void)ud;
    synced++;
}

static void init(void)
{
    char path[] = "/tmp/fuzz_informer_kc.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    static const char kcfg[] =
        "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster: {server: "
        "'http://127.0.0.1:1'}\ncontexts:\n- name: x\n  context: {cluster: x}\n"
        "current-context: x\n";
    if (write(fd, kcfg, sizeof(kcfg) - 1) != (ssize_t)(sizeof(kcfg) - 1))
        abort();
    close(fd);
    cu_diag d;
    cu_diag_init(&d);
    cfg = cu_kconfig_load(path, NULL, &d);
    unlink(path);
    loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko;
    memset(&ko, 0, sizeof(ko));
    kc = cfg && loop ? cu_kclient_new(loop, cfg, &ko, &d) : NULL;
    if (!kc)
        abort();
    for (int k = 0; k < NK; k++) {
        which[k] = k;
        cu_informer_opts o;
        memset(&o, 0, sizeof(o));
        o.path = kinds[k].path;
        o.on_event = on_event;
        o.on_skip = on_skip;
        o.on_synced = on_synced;
        o.ud = &which[k];
        /* its own first LIST is queued on a loop that never runs */
        inf[k] = cu_informer_start(kc, &o, &d);
        if (!inf[k])
            abort();
    }
    cu_diag_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!kc)
        init();
    if (size < 1)
        return 0;
    int watch = data[0] & 1, k = (data[0] >> 1) % NK;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    if (!watch) {
        cu_informer_feed(inf[k], 0, s, n);
        return 0;
    }
    while (n) {
        const char *nl = memchr(s, '\n', n);
        size_t l = nl ? (size_t)(nl - s) : n;
        cu_informer_feed(inf[k], 1, s, l);
        if (!nl)
            break;
        s = nl + 1;
        n -= l + 1;
    }
    return 0;
}
