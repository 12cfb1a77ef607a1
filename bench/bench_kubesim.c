/*
 * bench_kubesim.c - the embedded cluster's simulation (cluster/kubesim)
 * under load, without HTTP and without the controller: N unsuspended
 * one-pod Jobs (1 cpu, a simulated runtime) created at once in a store
 * served by the simulator thread (cu_kubesim_start), on the nodes of
 * bench_controller.sh (363 nodes of 64 cpu by default). It samples the
 * pods by phase every second and prints when all were bound, when all
 * Succeeded and when every Job was Complete, the pods bound per second,
 * how long cu_kubesim_stop took while the simulation was busy, and the
 * peak RSS. See bench/README.md ("The simulated cluster under load").
 *
 * Usage: cueue_bench_kubesim [--jobs N] [--nodes N] [--node-cpu N]
 *                            [--runtime DUR] [--timeout S] [--stop-after S]
 * --stop-after S stops the simulator S seconds after the creates (to time
 * a stop under load) instead of waiting for the Jobs to finish.
 * Exit codes: 0 every Job completed (or the stop was timed), 1 timeout or
 * failure, 2 bad usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cu_clock.h"
#include "cu_json.h"
#include "cu_kubesim.h"
#include "cu_store.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(void)
{
    fprintf(stderr, "usage: cueue_bench_kubesim [--jobs N] [--nodes N] [--node-cpu N] "
                    "[--runtime DUR] [--timeout S] [--stop-after S]\n");
    return 2;
}

typedef struct counts {
    long pending, bound_pending, running, succeeded, other, jobs_complete;
} counts;

static void count(cu_store *s, counts *c)
{
    const cu_rtype *pods = cu_store_rtype(s, "", "v1", "pods");
    const cu_rtype *jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    cu_list_opts o;
    cu_status st;
    json_object *l = NULL;
    memset(c, 0, sizeof(*c));
    memset(&o, 0, sizeof o);
    if (cu_store_list(s, pods, NULL, &o, &l, &st) == CU_OK) {
        json_object *items = cu_jget(l, "items");
        for (size_t i = 0; i < cu_jarr_len(items); i++) {
            json_object *p = json_object_array_get_idx(items, i);
            const char *ph = cu_jpath_str(p, "status.phase");
            int bound = cu_jpath_str(p, "spec.nodeName") != NULL;
            if (!ph || strcmp(ph, "Pending") == 0) {
                if (bound)
                    c->bound_pending++;
                else
                    c->pending++;
            } else if (strcmp(ph, "Running") == 0) {
                c->running++;
            } else if (strcmp(ph, "Succeeded") == 0) {
                c->succeeded++;
            } else {
                c->other++;
            }
        }
        json_object_put(l);
    }
    l = NULL;
    if (cu_store_list(s, jobs, NULL, &o, &l, &st) == CU_OK) {
        json_object *items = cu_jget(l, "items");
        for (size_t i = 0; i < cu_jarr_len(items); i++) {
            json_object *cs = cu_jpath(json_object_array_get_idx(items, i), "status.conditions");
            for (size_t k = 0; k < cu_jarr_len(cs); k++) {
                json_object *cd = json_object_array_get_idx(cs, k);
                const char *t = cu_jstr(cd, "type"), *v = cu_jstr(cd, "status");
                if (t && v && strcmp(t, "Complete") == 0 && strcmp(v, "True") == 0)
                    c->jobs_complete++;
            }
        }
        json_object_put(l);
    }
}

int main(int argc, char **argv)
{
    long njobs = 6000, nnodes = 363, node_cpu = 64, timeout = 600, stop_after = -1;
    const char *runtime = "4s";
    char err[512], path[] = "/tmp/cueue_bench_kubesim_XXXXXX";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return usage();
        if (strcmp(a, "--jobs") == 0)
            njobs = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--nodes") == 0)
            nnodes = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--node-cpu") == 0)
            node_cpu = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--runtime") == 0)
            runtime = argv[++i];
        else if (strcmp(a, "--timeout") == 0)
            timeout = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--stop-after") == 0)
            stop_after = strtol(argv[++i], NULL, 10);
        else
            return usage();
    }
    if (njobs < 1 || nnodes < 1 || node_cpu < 1 || timeout < 1)
        return usage();

    /* the nodes file of bench_controller.sh */
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        perror("cueue_bench_kubesim: nodes file");
        return 1;
    }
    for (long n = 0; n < nnodes; n++)
        fprintf(f,
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: bench-node-%ld\n  labels:\n"
                "    kubernetes.io/hostname: bench-node-%ld\n    cueue.dev/bench-pool: cpu\n"
                "status:\n  capacity:\n    cpu: \"%ld\"\n    memory: 512Gi\n    pods: \"110\"\n"
                "---\n",
                n, n, node_cpu);
    fclose(f);

    cu_clock clock = cu_clock_system();
    cu_store *s = cu_store_new(0, &clock);
    cu_kubesim_opts ko = { .nodes_file = path, .clock = &clock };
    cu_kubesim *k = s ? cu_kubesim_start(s, &ko, err, sizeof err) : NULL;
    unlink(path);
    if (!k) {
        fprintf(stderr, "cueue_bench_kubesim: %s\n", s ? err : "out of memory");
        return 1;
    }
    const cu_rtype *jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    double t0 = mono_s();
    for (long j = 0; j < njobs; j++) {
        char js[1024];
        cu_status st;
        json_object *out = NULL;
        snprintf(
            js, sizeof js,
            "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"job-%05ld\","
            "\"namespace\":\"default\"},\"spec\":{\"parallelism\":1,\"completions\":1,"
            "\"template\":{\"metadata\":{\"annotations\":{\"cueue.dev/simulated-runtime\":"
            "\"%s\"}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
            "\"main\",\"image\":\"sleep:1\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
            j, runtime);
        if (cu_store_create(s, jobs, "default", cu_json_parse_str(js), &out, &st) != CU_OK) {
            fprintf(stderr, "cueue_bench_kubesim: create: %s\n", st.message);
            return 1;
        }
        json_object_put(out);
    }
    double t_created = mono_s() - t0, t_bound = -1, t_succ = -1, t_done = -1;
    printf("cueue_bench_kubesim: %ld unsuspended one-pod Jobs (1 cpu, %s) on %ld nodes of %ld "
           "cpu; created in %.2f s\n",
           njobs, runtime, nnodes, node_cpu, t_created);
    printf("%8s %8s %8s %8s %8s %8s %8s\n", "t (s)", "pending", "bound", "running", "succeed",
           "other", "jobs ok");
    int rc = 1;
    for (;;) {
        counts c;
        sleep(1);
        double t = mono_s() - t0;
        count(s, &c);
        printf("%8.1f %8ld %8ld %8ld %8ld %8ld %8ld\n", t, c.pending, c.bound_pending, c.running,
               c.succeeded, c.other, c.jobs_complete);
        fflush(stdout);
        if (t_bound < 0 && c.pending == 0 && c.bound_pending + c.running + c.succeeded >= njobs)
            t_bound = t;
        if (t_succ < 0 && c.succeeded >= njobs)
            t_succ = t;
        if (c.jobs_complete >= njobs) {
            t_done = t;
            rc = 0;
            break;
        }
        if (stop_after >= 0 && t >= (double)stop_after) {
            rc = 0;
            break;
        }
        if (t > (double)timeout) {
            printf("cueue_bench_kubesim: timeout after %ld s\n", timeout);
            break;
        }
    }
    double ts = mono_s();
    cu_kubesim_stop(k);
    double stop_s = mono_s() - ts;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (t_bound >= 0)
        printf("all pods bound by %.1f s (%.0f pods/s bound, at 1 s sampling)\n", t_bound,
               (double)njobs / (t_bound > 0 ? t_bound : 1));
    if (t_succ >= 0)
        printf("all pods Succeeded by %.1f s\n", t_succ);
    if (t_done >= 0)
        printf("all Jobs Complete by %.1f s\n", t_done);
    printf("cu_kubesim_stop took %.3f s; process CPU %.2f s; peak RSS %.1f MiB\n", stop_s,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
           (double)ru.ru_maxrss / 1024.0);
    cu_store_free(s);
    return rc;
}
