/*
 * bench_cluster.c - cueue_bench_cluster: measures a running `cueue cluster`
 * over real HTTP (libcurl, keep-alive connections, one connection per
 * client thread). See bench/README.md; bench/bench_cluster.sh starts the
 * server, runs this program against it and stops it.
 *
 * Phases, in order, all in one namespace (default `bench`):
 *   1. create N objects (ConfigMaps, or Workloads after POSTing the
 *      Workload CRD), with the largest client count;
 *   2. GET one object, for each client count, for a fixed time;
 *   3. PATCH (application/merge-patch+json, an annotation) likewise;
 *   4. LIST of the N objects, likewise (at least 3 LISTs per count);
 *   5. watch: W watchers on the collection from the current
 *      resourceVersion, while one writer makes C merge patches; then W
 *      new watchers replay the same C events from the history;
 *   6. create objects until the namespace holds M (50,000) and read the
 *      server's memory.
 * With --pid, the server's RSS (VmRSS, VmHWM) and CPU time (utime+stime)
 * are read from /proc/PID around each phase.
 *
 * Every request must succeed (2xx): the first failure stops the program
 * with exit code 1, naming the request and the server's answer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#define BC_MAX_CONC 16
#define BC_MAX_WATCHERS 64
#define BC_MIN_LISTS 3

typedef enum bc_kind { BC_CONFIGMAP, BC_WORKLOAD } bc_kind;

typedef struct bc_cfg {
    const char *server; /* "http://127.0.0.1:PORT", no trailing slash */
    bc_kind kind;
    const char *ns;
    const char *crd_file; /* Workload CRD YAML, for --kind workload */
    int objects;          /* N */
    int mem_objects;      /* M; 0 skips phase 6 */
    int conc[BC_MAX_CONC];
    int nconc;
    double duration; /* seconds per GET/PATCH/LIST measurement */
    int watchers;
    int watch_changes;
    int payload; /* bytes of filler per object */
    long pid;    /* server pid for /proc, 0: none */
    int json;
    int mem_only;   /* only create objects and read memory */
    char coll[512]; /* collection URL */
} bc_cfg;

/* ---------------- time and /proc ---------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* VmRSS and VmHWM of pid in KiB; -1 when unknown. */
static void proc_mem(long pid, long *rss_kib, long *hwm_kib)
{
    *rss_kib = *hwm_kib = -1;
    if (pid <= 0)
        return;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss_kib = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            *hwm_kib = strtol(line + 6, NULL, 10);
    }
    fclose(f);
}

/* utime+stime of pid in seconds; -1 when unknown. */
static double proc_cpu(long pid)
{
    if (pid <= 0)
        return -1;
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* fields after the command name, which is in parentheses */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    unsigned long long ut = 0, st = 0;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---------------- HTTP client ---------------- */

typedef struct bc_buf {
    char *p;
    size_t len, cap;
} bc_buf;

static int buf_add(bc_buf *b, const char *d, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np)
            return -1;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

/* One keep-alive connection; used by one thread. */
typedef struct bc_http {
    CURL *h;
    struct curl_slist *hj, *hm, *hy; /* JSON, merge-patch, YAML headers */
    bc_buf resp;
    long code;
    int quiet; /* do not print failures (the caller checks code) */
} bc_http;

static size_t on_body(char *d, size_t sz, size_t n, void *ud)
{
    bc_buf *b = ud;
    return buf_add(b, d, sz * n) == 0 ? sz * n : 0;
}

static int http_init(bc_http *c)
{
    memset(c, 0, sizeof *c);
    c->h = curl_easy_init();
    if (!c->h)
        return -1;
    c->hj = curl_slist_append(NULL, "Content-Type: application/json");
    c->hj = curl_slist_append(c->hj, "Accept: application/json");
    c->hj = curl_slist_append(c->hj, "Expect:");
    c->hm = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
    c->hm = curl_slist_append(c->hm, "Accept: application/json");
    c->hm = curl_slist_append(c->hm, "Expect:");
    c->hy = curl_slist_append(NULL, "Content-Type: application/yaml");
    c->hy = curl_slist_append(c->hy, "Accept: application/json");
    c->hy = curl_slist_append(c->hy, "Expect:");
    if (!c->hj || !c->hm || !c->hy)
        return -1;
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->resp);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 120L);
    return 0;
}

static void http_free(bc_http *c)
{
    if (c->h)
        curl_easy_cleanup(c->h);
    curl_slist_free_all(c->hj);
    curl_slist_free_all(c->hm);
    curl_slist_free_all(c->hy);
    free(c->resp.p);
    memset(c, 0, sizeof *c);
}

/* Sends one request; the answer is in c->resp and c->code. hdrs selects the
 * content type ('j' JSON, 'm' merge patch, 'y' YAML). Returns 0 on a 2xx
 * answer, -1 otherwise (after printing what went wrong). */
static int http_do(bc_http *c, const char *method, const char *url, char hdrs, const char *body,
                   size_t blen)
{
    c->resp.len = 0;
    if (c->resp.p)
        c->resp.p[0] = '\0';
    c->code = 0;
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs == 'm' ? c->hm : hdrs == 'y' ? c->hy : c->hj);
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c->h, CURLOPT_POST, 1L);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)blen);
        curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") ? method : NULL);
    }
    CURLcode rc = curl_easy_perform(c->h);
    if (rc != CURLE_OK) {
        if (!c->quiet)
            fprintf(stderr, "cueue_bench_cluster: %s %s: %s\n", method, url,
                    curl_easy_strerror(rc));
        return -1;
    }
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->code);
    if (c->code < 200 || c->code > 299) {
        if (!c->quiet)
            fprintf(stderr, "cueue_bench_cluster: %s %s: HTTP %ld: %.400s\n", method, url, c->code,
                    c->resp.p ? c->resp.p : "");
        return -1;
    }
    return 0;
}

/* ---------------- objects ---------------- */

static int obj_name(const bc_cfg *cfg, int i, char *out, size_t n)
{
    return snprintf(out, n, "%s-%06d", cfg->kind == BC_CONFIGMAP ? "cm" : "wl", i);
}

/* The object i as JSON into b (reset first). */
static int obj_body(const bc_cfg *cfg, int i, bc_buf *b)
{
    char name[32];
    obj_name(cfg, i, name, sizeof name);
    b->len = 0;
    char head[1024];
    int n;
    if (cfg->kind == BC_CONFIGMAP)
        n = snprintf(head, sizeof head,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
                     "\"namespace\":\"%s\",\"labels\":{\"app\":\"cueue-bench\",\"shard\":\"s%d\"}},"
                     "\"data\":{\"index\":\"%d\",\"payload\":\"",
                     name, cfg->ns, i % 16, i);
    else
        n = snprintf(head, sizeof head,
                     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
                     "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"labels\":{\"app\":"
                     "\"cueue-bench\",\"shard\":\"s%d\"},\"annotations\":{\"bench.cueue.dev/"
                     "payload\":\"",
                     name, cfg->ns, i % 16);
    if (n < 0 || (size_t)n >= sizeof head || buf_add(b, head, (size_t)n))
        return -1;
    for (int k = 0; k < cfg->payload; k++)
        if (buf_add(b, "x", 1))
            return -1;
    if (cfg->kind == BC_CONFIGMAP)
        n = snprintf(head, sizeof head, "\"}}");
    else
        n = snprintf(head, sizeof head,
                     "\"}},\"spec\":{\"queueName\":\"bench\",\"priority\":%d,\"podSets\":[{"
                     "\"name\":\"main\",\"count\":%d,\"template\":{\"spec\":{\"restartPolicy\":"
                     "\"Never\",\"containers\":[{\"name\":\"main\",\"image\":\"example.invalid/"
                     "bench:1\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]"
                     "}}}]}}",
                     i % 100, 1 + i % 4);
    return buf_add(b, head, (size_t)n);
}

static void obj_url(const bc_cfg *cfg, int i, char *out, size_t n)
{
    char name[32];
    obj_name(cfg, i, name, sizeof name);
    snprintf(out, n, "%s/%s", cfg->coll, name);
}

/* ---------------- parallel phases ---------------- */

typedef enum bc_op { OP_CREATE, OP_GET, OP_PATCH, OP_LIST } bc_op;

static const char *op_name(bc_op op)
{
    return op == OP_CREATE ? "create" : op == OP_GET ? "GET" : op == OP_PATCH ? "PATCH" : "LIST";
}

typedef struct bc_lat {
    double *v;
    size_t n, cap;
} bc_lat;

static int lat_add(bc_lat *l, double x)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 1024;
        double *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = x;
    return 0;
}

typedef struct bc_phase {
    const bc_cfg *cfg;
    bc_op op;
    int nthreads;
    double deadline; /* duration mode: stop claiming at this time; 0: count mode */
    int min_ops;     /* duration mode: keep going until this many ops */
    atomic_int next; /* count mode: next object index; duration mode: ops claimed */
    int end;         /* count mode: one past the last index */
    atomic_int failed;
    atomic_int ready;
    atomic_int go;
    atomic_llong bytes; /* response bytes (LIST) */
} bc_phase;

typedef struct bc_worker {
    bc_phase *ph;
    int id;
    bc_lat lat;
    long ops;
    double t0, t1;
    pthread_t th;
} bc_worker;

static void *worker_main(void *ud)
{
    bc_worker *w = ud;
    bc_phase *ph = w->ph;
    const bc_cfg *cfg = ph->cfg;
    bc_http c;
    bc_buf body = { 0 };
    char url[1024];
    if (http_init(&c)) {
        atomic_store(&ph->failed, 1);
        atomic_fetch_add(&ph->ready, 1);
        return NULL;
    }
    /* Open the connection before the clock starts. */
    if (ph->op != OP_CREATE) {
        obj_url(cfg, w->id % cfg->objects, url, sizeof url);
        if (http_do(&c, "GET", url, 'j', NULL, 0))
            atomic_store(&ph->failed, 1);
    }
    atomic_fetch_add(&ph->ready, 1);
    while (!atomic_load(&ph->go))
        sleep_us(100);
    w->t0 = now_s();
    uint64_t seq = (uint64_t)w->id * 7919u + 1;
    while (!atomic_load(&ph->failed)) {
        int i;
        if (ph->deadline > 0) {
            int k = atomic_fetch_add(&ph->next, 1);
            if (k >= ph->min_ops && now_s() >= ph->deadline)
                break;
            seq = seq * 6364136223846793005u + 1442695040888963407u;
            i = (int)((seq >> 33) % (uint64_t)cfg->objects);
        } else {
            i = atomic_fetch_add(&ph->next, 1);
            if (i >= ph->end)
                break;
        }
        int rc;
        double t = now_s();
        switch (ph->op) {
        case OP_CREATE:
            if (obj_body(cfg, i, &body)) {
                rc = -1;
                break;
            }
            rc = http_do(&c, "POST", cfg->coll, 'j', body.p, body.len);
            break;
        case OP_GET:
            obj_url(cfg, i, url, sizeof url);
            rc = http_do(&c, "GET", url, 'j', NULL, 0);
            break;
        case OP_PATCH: {
            char p[128];
            int n =
                snprintf(p, sizeof p,
                         "{\"metadata\":{\"annotations\":{\"bench.cueue.dev/rev\":\"%ld-%d\"}}}",
                         w->ops, w->id);
            obj_url(cfg, i, url, sizeof url);
            rc = http_do(&c, "PATCH", url, 'm', p, (size_t)n);
            break;
        }
        default:
            rc = http_do(&c, "GET", cfg->coll, 'j', NULL, 0);
            atomic_fetch_add(&ph->bytes, (long long)c.resp.len);
            break;
        }
        double dt = now_s() - t;
        if (rc) {
            atomic_store(&ph->failed, 1);
            break;
        }
        if (lat_add(&w->lat, dt)) {
            atomic_store(&ph->failed, 1);
            break;
        }
        w->ops++;
    }
    w->t1 = now_s();
    free(body.p);
    http_free(&c);
    return NULL;
}

typedef struct bc_result {
    bc_op op;
    int clients;
    long ops;
    double secs;
    double rps;
    double p50, p99, max; /* seconds */
    double bytes_per_op;
    double server_cpu; /* seconds of server CPU over the phase, -1 unknown */
} bc_result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

/* Runs one phase. Count mode: indexes [first, end); duration mode:
 * duration > 0. Returns 0, or -1 when a request failed. */
static int run_phase(const bc_cfg *cfg, bc_op op, int nthreads, int first, int end, double duration,
                     int min_ops, bc_result *res)
{
    bc_phase ph;
    memset(&ph, 0, sizeof ph);
    ph.cfg = cfg;
    ph.op = op;
    ph.nthreads = nthreads;
    ph.end = end;
    ph.min_ops = min_ops;
    atomic_init(&ph.next, duration > 0 ? 0 : first);
    atomic_init(&ph.failed, 0);
    atomic_init(&ph.ready, 0);
    atomic_init(&ph.go, 0);
    atomic_init(&ph.bytes, 0);
    bc_worker *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws)
        return -1;
    int started = 0;
    for (int t = 0; t < nthreads; t++) {
        ws[t].ph = &ph;
        ws[t].id = t;
        if (pthread_create(&ws[t].th, NULL, worker_main, &ws[t]) != 0) {
            atomic_store(&ph.failed, 1);
            break;
        }
        started++;
    }
    while (atomic_load(&ph.ready) < started)
        sleep_us(200);
    double cpu0 = proc_cpu(cfg->pid);
    double t0 = now_s();
    if (duration > 0)
        ph.deadline = t0 + duration;
    atomic_store(&ph.go, 1);
    for (int t = 0; t < started; t++)
        pthread_join(ws[t].th, NULL);
    double t1 = now_s();
    double cpu1 = proc_cpu(cfg->pid);
    memset(res, 0, sizeof *res);
    res->op = op;
    res->clients = nthreads;
    size_t total = 0;
    for (int t = 0; t < started; t++)
        total += ws[t].lat.n;
    double *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int t = 0; t < started; t++) {
        if (all)
            memcpy(all + k, ws[t].lat.v, ws[t].lat.n * sizeof *all);
        k += ws[t].lat.n;
        res->ops += ws[t].ops;
        free(ws[t].lat.v);
    }
    free(ws);
    res->secs = t1 - t0;
    res->rps = res->secs > 0 ? (double)res->ops / res->secs : 0;
    if (all) {
        qsort(all, total, sizeof *all, cmp_double);
        res->p50 = pct(all, total, 0.50);
        res->p99 = pct(all, total, 0.99);
        res->max = total ? all[total - 1] : 0;
        free(all);
    }
    res->bytes_per_op = res->ops ? (double)atomic_load(&ph.bytes) / (double)res->ops : 0;
    res->server_cpu = cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1;
    return atomic_load(&ph.failed) || !all ? -1 : 0;
}

/* ---------------- watch ---------------- */

typedef struct bc_watcher {
    const bc_cfg *cfg;
    char url[1024];
    int target;        /* stop after this many object events */
    atomic_int lines;  /* every line, bookmarks included */
    atomic_int events; /* ADDED / MODIFIED / DELETED */
    int errors;        /* ERROR events */
    int other;         /* unknown lines */
    char head[24];     /* the start of the current line */
    size_t hlen;
    double t_open, t_first, t_last;
    CURLcode rc;
    long code;
    pthread_t th;
} bc_watcher;

static void end_line(bc_watcher *w)
{
    w->head[w->hlen < sizeof w->head ? w->hlen : sizeof w->head - 1] = '\0';
    const char *p = "{\"type\":\"";
    size_t pl = strlen(p);
    if (strncmp(w->head, p, pl) == 0) {
        const char *t = w->head + pl;
        if (strncmp(t, "ADDED\"", 6) == 0 || strncmp(t, "MODIFIED\"", 9) == 0 ||
            strncmp(t, "DELETED\"", 8) == 0) {
            double now = now_s();
            if (atomic_load(&w->events) == 0)
                w->t_first = now;
            w->t_last = now;
            atomic_fetch_add(&w->events, 1);
        } else if (strncmp(t, "ERROR\"", 6) == 0) {
            w->errors++;
        } else if (strncmp(t, "BOOKMARK\"", 9) != 0) {
            w->other++;
        }
    } else {
        w->other++;
    }
    atomic_fetch_add(&w->lines, 1);
    w->hlen = 0;
}

static size_t on_watch(char *d, size_t sz, size_t n, void *ud)
{
    bc_watcher *w = ud;
    size_t len = sz * n;
    for (size_t i = 0; i < len; i++) {
        if (d[i] == '\n') {
            end_line(w);
            if (atomic_load(&w->events) >= w->target || w->errors)
                return 0; /* done: abort the transfer */
        } else if (w->hlen < sizeof w->head - 1) {
            w->head[w->hlen++] = d[i];
        } else {
            w->hlen = sizeof w->head; /* mark as long; keep the head */
        }
    }
    return len;
}

static void *watcher_main(void *ud)
{
    bc_watcher *w = ud;
    CURL *h = curl_easy_init();
    if (!h) {
        w->rc = CURLE_FAILED_INIT;
        return NULL;
    }
    struct curl_slist *hd = curl_slist_append(NULL, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, w->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_watch);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 300L);
    w->t_open = now_s();
    w->rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &w->code);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return NULL;
}

typedef struct bc_watch_res {
    int watchers, changes;
    double writer_secs, writer_rps;
    double per_min, per_mean, per_max; /* events/s per watcher */
    double total_eps;                  /* all events delivered / span */
    double lag;                        /* last delivery after the last write, s */
    long delivered;
    int errors;
    double server_cpu;
} bc_watch_res;

/* Starts n watchers from resourceVersion rv; waits until each has a first
 * line (a BOOKMARK) or 5 s. */
static int watchers_start(const bc_cfg *cfg, bc_watcher *ws, int n, const char *rv, int target,
                          int wait_ready)
{
    for (int i = 0; i < n; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        ws[i].cfg = cfg;
        ws[i].target = target;
        atomic_init(&ws[i].lines, 0);
        atomic_init(&ws[i].events, 0);
        snprintf(ws[i].url, sizeof ws[i].url,
                 "%s?watch=true&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=240",
                 cfg->coll, rv);
        if (pthread_create(&ws[i].th, NULL, watcher_main, &ws[i]) != 0) {
            for (int j = 0; j < i; j++)
                pthread_cancel(ws[j].th);
            return -1;
        }
    }
    if (wait_ready) {
        double until = now_s() + 5;
        for (;;) {
            int ok = 0;
            for (int i = 0; i < n; i++)
                ok += atomic_load(&ws[i].lines) > 0;
            if (ok == n || now_s() > until)
                break;
            sleep_us(1000);
        }
    }
    return 0;
}

/* Joins the watchers and sums up; t_start: when the events began (the
 * first write, or the opening for a replay). Returns 0 when every watcher
 * saw every event. */
static int watchers_finish(bc_watcher *ws, int n, double t_start, double t_wend, bc_watch_res *r)
{
    int bad = 0;
    double last = t_start, sum = 0;
    r->per_min = 1e300;
    r->per_max = 0;
    r->delivered = 0;
    r->errors = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(ws[i].th, NULL);
        int ev = atomic_load(&ws[i].events);
        r->delivered += ev;
        r->errors += ws[i].errors;
        if (ev < ws[i].target || ws[i].errors) {
            fprintf(
                stderr,
                "cueue_bench_cluster: watcher %d got %d of %d events (%d ERROR, HTTP %ld, %s)\n", i,
                ev, ws[i].target, ws[i].errors, ws[i].code, curl_easy_strerror(ws[i].rc));
            bad = 1;
        }
        double span = ws[i].t_last - t_start;
        double eps = span > 0 ? ev / span : 0;
        sum += eps;
        if (eps < r->per_min)
            r->per_min = eps;
        if (eps > r->per_max)
            r->per_max = eps;
        if (ws[i].t_last > last)
            last = ws[i].t_last;
    }
    r->per_mean = n ? sum / n : 0;
    r->total_eps = last > t_start ? (double)r->delivered / (last - t_start) : 0;
    r->lag = t_wend > 0 ? last - t_wend : 0;
    return bad ? -1 : 0;
}

/* The collection's current resourceVersion (from a LIST with limit=1). */
static int current_rv(bc_http *c, const bc_cfg *cfg, char *rv, size_t n)
{
    char url[1024];
    snprintf(url, sizeof url, "%s?limit=1", cfg->coll);
    if (http_do(c, "GET", url, 'j', NULL, 0))
        return -1;
    json_object *o = json_tokener_parse(c->resp.p), *md, *v;
    int rc = -1;
    if (o && json_object_object_get_ex(o, "metadata", &md) &&
        json_object_object_get_ex(md, "resourceVersion", &v)) {
        snprintf(rv, n, "%s", json_object_get_string(v));
        rc = 0;
    }
    json_object_put(o);
    if (rc)
        fprintf(stderr, "cueue_bench_cluster: LIST %s has no metadata.resourceVersion\n", url);
    return rc;
}

static int run_watch(const bc_cfg *cfg, bc_http *c, bc_watch_res *live, bc_watch_res *replay)
{
    char rv[64];
    if (current_rv(c, cfg, rv, sizeof rv))
        return -1;
    int n = cfg->watchers, changes = cfg->watch_changes;
    bc_watcher *ws = calloc((size_t)n, sizeof *ws);
    if (!ws)
        return -1;
    int rc = -1;
    if (watchers_start(cfg, ws, n, rv, changes, 1))
        goto out;
    double cpu0 = proc_cpu(cfg->pid);
    double t0 = now_s();
    char url[1024];
    for (int k = 0; k < changes; k++) {
        char p[128];
        int pl = snprintf(p, sizeof p,
                          "{\"metadata\":{\"annotations\":{\"bench.cueue.dev/watch\":\"%d\"}}}", k);
        obj_url(cfg, (int)(((uint64_t)k * 104729u) % (uint64_t)cfg->objects), url, sizeof url);
        if (http_do(c, "PATCH", url, 'm', p, (size_t)pl)) {
            for (int i = 0; i < n; i++)
                ws[i].target = 0;
            goto out;
        }
    }
    double t1 = now_s();
    memset(live, 0, sizeof *live);
    live->watchers = n;
    live->changes = changes;
    live->writer_secs = t1 - t0;
    live->writer_rps = changes / (t1 - t0);
    if (watchers_finish(ws, n, t0, t1, live))
        goto out;
    double cpu1 = proc_cpu(cfg->pid);
    live->server_cpu = cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1;

    /* Replay: the same events, from the history, as fast as they come. */
    cpu0 = proc_cpu(cfg->pid);
    double t2 = now_s();
    if (watchers_start(cfg, ws, n, rv, changes, 0))
        goto out;
    memset(replay, 0, sizeof *replay);
    replay->watchers = n;
    replay->changes = changes;
    if (watchers_finish(ws, n, t2, 0, replay))
        goto out;
    cpu1 = proc_cpu(cfg->pid);
    replay->server_cpu = cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1;
    rc = 0;
out:
    free(ws);
    return rc;
}

/* ---------------- setup ---------------- */

static int setup(const bc_cfg *cfg, bc_http *c)
{
    char url[1024], body[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces", cfg->server);
    int n = snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", cfg->ns);
    c->quiet = 1;
    int nrc = http_do(c, "POST", url, 'j', body, (size_t)n);
    c->quiet = 0;
    if (nrc && c->code != 409) /* 409: it exists already */
        return http_do(c, "POST", url, 'j', body, (size_t)n);
    if (cfg->kind != BC_WORKLOAD)
        return 0;
    FILE *f = fopen(cfg->crd_file, "rb");
    if (!f) {
        fprintf(stderr, "cueue_bench_cluster: --crd %s: %s\n", cfg->crd_file, strerror(errno));
        return -1;
    }
    bc_buf y = { 0 };
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (buf_add(&y, chunk, k)) {
            fclose(f);
            free(y.p);
            return -1;
        }
    fclose(f);
    snprintf(url, sizeof url, "%s/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             cfg->server);
    c->quiet = 1;
    int rc = y.p ? http_do(c, "POST", url, 'y', y.p, y.len) : -1;
    c->quiet = 0;
    if (rc && c->code != 409) { /* 409: it exists already */
        rc = y.p ? http_do(c, "POST", url, 'y', y.p, y.len) : -1;
        free(y.p);
        return rc;
    }
    free(y.p);
    /* wait until the resource is served */
    c->quiet = 1;
    for (int i = 0; i < 100; i++) {
        if (http_do(c, "GET", cfg->coll, 'j', NULL, 0) == 0) {
            c->quiet = 0;
            return 0;
        }
        sleep_us(50 * 1000);
    }
    c->quiet = 0;
    return http_do(c, "GET", cfg->coll, 'j', NULL, 0);
}

/* Checks that a LIST returns exactly want items. */
static int check_list(const bc_cfg *cfg, bc_http *c, int want)
{
    if (http_do(c, "GET", cfg->coll, 'j', NULL, 0))
        return -1;
    json_object *o = json_tokener_parse(c->resp.p), *items;
    int n = -1;
    if (o && json_object_object_get_ex(o, "items", &items) &&
        json_object_is_type(items, json_type_array))
        n = (int)json_object_array_length(items);
    json_object_put(o);
    if (n != want) {
        fprintf(stderr, "cueue_bench_cluster: LIST %s returned %d items, expected %d\n", cfg->coll,
                n, want);
        return -1;
    }
    return 0;
}

/* ---------------- output ---------------- */

static void print_row(const bc_result *r, int with_bytes)
{
    char cpu[32] = "-";
    if (r->server_cpu >= 0 && r->ops > 0)
        snprintf(cpu, sizeof cpu, "%.0f", r->server_cpu / (double)r->ops * 1e6);
    printf("  %-7s %7d %9ld %10.1f %10.3f %10.3f %10.3f %12s", op_name(r->op), r->clients, r->ops,
           r->rps, r->p50 * 1e3, r->p99 * 1e3, r->max * 1e3, cpu);
    if (with_bytes)
        printf("  %.1f MB/LIST", r->bytes_per_op / 1e6);
    printf("\n");
}

static void json_results(const char *key, const bc_result *r, int n)
{
    printf(",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        printf("%s{\"clients\":%d,\"ops\":%ld,\"secs\":%.3f,\"rps\":%.1f,\"p50_ms\":%.3f,"
               "\"p99_ms\":%.3f,\"max_ms\":%.3f,\"server_cpu_us_per_op\":%.1f}",
               i ? "," : "", r[i].clients, r[i].ops, r[i].secs, r[i].rps, r[i].p50 * 1e3,
               r[i].p99 * 1e3, r[i].max * 1e3,
               r[i].server_cpu >= 0 && r[i].ops ? r[i].server_cpu / (double)r[i].ops * 1e6 : -1.0);
    printf("]");
}

static void json_list_results(const bc_result *r, int n)
{
    printf(",\"list\":[");
    for (int i = 0; i < n; i++)
        printf("%s{\"clients\":%d,\"ops\":%ld,\"secs\":%.3f,\"rps\":%.2f,\"p50_ms\":%.2f,"
               "\"p99_ms\":%.2f,\"max_ms\":%.2f,\"bytes\":%.0f,\"server_cpu_ms_per_op\":%.2f}",
               i ? "," : "", r[i].clients, r[i].ops, r[i].secs, r[i].rps, r[i].p50 * 1e3,
               r[i].p99 * 1e3, r[i].max * 1e3, r[i].bytes_per_op,
               r[i].server_cpu >= 0 && r[i].ops ? r[i].server_cpu / (double)r[i].ops * 1e3 : -1.0);
    printf("]");
}

static void json_watch(const char *key, const bc_watch_res *w)
{
    printf(",\"%s\":{\"watchers\":%d,\"changes\":%d", key, w->watchers, w->changes);
    if (w->writer_rps > 0)
        printf(",\"writer_rps\":%.1f,\"lag_ms\":%.1f", w->writer_rps, w->lag * 1e3);
    printf(",\"per_watcher_eps_min\":%.1f,\"per_watcher_eps_mean\":%.1f,"
           "\"per_watcher_eps_max\":%.1f,\"total_eps\":%.1f,\"delivered\":%ld,\"errors\":%d,"
           "\"server_cpu_s\":%.3f}",
           w->per_min, w->per_mean, w->per_max, w->total_eps, w->delivered, w->errors,
           w->server_cpu);
}

/* ---------------- memory only ---------------- */

/* After the first N creates: creates up to M, with no LIST, GET or watch
 * in between, and prints the server's memory at N and at M. */
static int mem_only(const bc_cfg *cfg, bc_http *c, int maxc, const bc_result *create, long rss_idle,
                    long rss_n)
{
    bc_result grow;
    memset(&grow, 0, sizeof grow);
    long rss_m = rss_n, hwm_m;
    int total = cfg->objects;
    if (cfg->mem_objects > cfg->objects) {
        if (run_phase(cfg, OP_CREATE, maxc, cfg->objects, cfg->mem_objects, 0, 0, &grow))
            return 1;
        total = cfg->mem_objects;
    }
    proc_mem(cfg->pid, &rss_m, &hwm_m);
    if (check_list(cfg, c, total))
        return 1;
    const char *kname = cfg->kind == BC_CONFIGMAP ? "configmap" : "workload";
    printf("cueue_bench_cluster: %s, %s, memory only (creates, no LIST/GET/PATCH/watch before "
           "the readings)\n",
           cfg->server, kname);
    printf("  %-7s %7s %9s %10s %10s %10s %10s %12s\n", "op", "clients", "requests", "req/s",
           "p50 ms", "p99 ms", "max ms", "srv CPU us/op");
    print_row(create, 0);
    if (grow.ops)
        print_row(&grow, 0);
    if (cfg->pid > 0)
        printf("  server memory: VmRSS %.1f MiB idle, %.1f MiB at %d objects, %.1f MiB at %d "
               "objects (%.2f KiB per object from idle); VmHWM %.1f MiB\n",
               (double)rss_idle / 1024.0, (double)rss_n / 1024.0, cfg->objects,
               (double)rss_m / 1024.0, total, (double)(rss_m - rss_idle) / (double)total,
               (double)hwm_m / 1024.0);
    if (cfg->json) {
        printf("{\"kind\":\"%s\",\"mode\":\"mem-only\",\"objects\":%d,\"payload\":%d", kname,
               cfg->objects, cfg->payload);
        json_results("create", create, 1);
        if (grow.ops)
            json_results("create_to_mem_objects", &grow, 1);
        printf(",\"mem_objects\":%d,\"rss_idle_kib\":%ld,\"rss_objects_kib\":%ld,"
               "\"rss_mem_objects_kib\":%ld,\"hwm_kib\":%ld}\n",
               total, rss_idle, rss_n, rss_m, hwm_m);
    }
    return 0;
}

/* ---------------- main ---------------- */

static const char usage_text[] =
    "Usage: cueue_bench_cluster --server URL [OPTIONS]\n"
    "Measures a running `cueue cluster` over HTTP (see bench/README.md).\n"
    "  --server URL          the server, e.g. http://127.0.0.1:40125 (required)\n"
    "  --kind configmap|workload   objects to use (default configmap)\n"
    "  --crd FILE            the Workload CRD YAML (required with --kind workload)\n"
    "  --namespace NS        namespace to use (default bench)\n"
    "  --objects N           objects for GET/PATCH/LIST (default 10000)\n"
    "  --mem-objects M       objects at the memory reading (default 50000; 0 skips)\n"
    "  --clients LIST        client counts, e.g. 1,2,4 (default 1,2,4)\n"
    "  --duration S          seconds per GET/PATCH/LIST measurement (default 3)\n"
    "  --watchers W          concurrent watchers (default 10)\n"
    "  --watch-changes C     changes the writer makes (default 5000)\n"
    "  --payload BYTES       filler bytes per object (default 256)\n"
    "  --pid PID             the server's pid: read RSS and CPU from /proc\n"
    "  --mem-only            only create the objects and read the server's memory\n"
    "  --json                also print one JSON line with every figure\n"
    "  -h, --help            this help\n"
    "Exit codes: 0 done, 1 a request failed, 2 bad usage.\n";

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "cueue_bench_cluster: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'cueue_bench_cluster --help' for the options.\n");
    return 2;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, bc_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->ns = "bench";
    cfg->objects = 10000;
    cfg->mem_objects = 50000;
    cfg->conc[0] = 1;
    cfg->conc[1] = 2;
    cfg->conc[2] = 4;
    cfg->nconc = 3;
    cfg->duration = 3;
    cfg->watchers = 10;
    cfg->watch_changes = 5000;
    cfg->payload = 256;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 1;
        } else if (strcmp(a, "--json") == 0) {
            cfg->json = 1;
            continue;
        } else if (strcmp(a, "--mem-only") == 0) {
            cfg->mem_only = 1;
            continue;
        }
        if (a[0] != '-')
            return bad_usage("unexpected argument '%s'", a);
        static const char *const with_value[] = {
            "--server",      "--kind",    "--crd",      "--namespace", "--objects",
            "--mem-objects", "--clients", "--duration", "--watchers",  "--watch-changes",
            "--payload",     "--pid",     NULL
        };
        int known = 0;
        for (int k = 0; with_value[k]; k++)
            known |= strcmp(a, with_value[k]) == 0;
        if (!known)
            return bad_usage("unknown option '%s'", a);
        if (!v)
            return bad_usage("%s needs a value", a);
        i++;
        if (strcmp(a, "--server") == 0) {
            if (strncmp(v, "http://", 7) != 0)
                return bad_usage("--server: '%s' is not an http:// URL (TLS is not measured)", v);
            cfg->server = v;
        } else if (strcmp(a, "--kind") == 0) {
            if (strcmp(v, "configmap") == 0)
                cfg->kind = BC_CONFIGMAP;
            else if (strcmp(v, "workload") == 0)
                cfg->kind = BC_WORKLOAD;
            else
                return bad_usage("--kind: '%s' is not configmap or workload", v);
        } else if (strcmp(a, "--crd") == 0) {
            cfg->crd_file = v;
        } else if (strcmp(a, "--namespace") == 0) {
            cfg->ns = v;
        } else if (strcmp(a, "--objects") == 0) {
            if (parse_int(v, 1, 999999, &cfg->objects))
                return bad_usage("--objects: '%s' is not a number from 1 to 999999", v);
        } else if (strcmp(a, "--mem-objects") == 0) {
            if (parse_int(v, 0, 999999, &cfg->mem_objects))
                return bad_usage("--mem-objects: '%s' is not a number from 0 to 999999", v);
        } else if (strcmp(a, "--clients") == 0) {
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", v);
            cfg->nconc = 0;
            for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (cfg->nconc == BC_MAX_CONC || parse_int(t, 1, 64, &cfg->conc[cfg->nconc]))
                    return bad_usage("--clients: '%s' is not a comma-separated list of client "
                                     "counts (each 1 to 64, at most 16 counts)",
                                     v);
                cfg->nconc++;
            }
            if (cfg->nconc == 0)
                return bad_usage("--clients: '%s' is empty", v);
        } else if (strcmp(a, "--duration") == 0) {
            char *end;
            cfg->duration = strtod(v, &end);
            if (*end || !(cfg->duration > 0 && cfg->duration <= 600))
                return bad_usage("--duration: '%s' is not a number of seconds (0-600]", v);
        } else if (strcmp(a, "--watchers") == 0) {
            if (parse_int(v, 1, BC_MAX_WATCHERS, &cfg->watchers))
                return bad_usage("--watchers: '%s' is not a number from 1 to 64", v);
        } else if (strcmp(a, "--watch-changes") == 0) {
            if (parse_int(v, 1, 1000000, &cfg->watch_changes))
                return bad_usage("--watch-changes: '%s' is not a number from 1 to 1000000", v);
        } else if (strcmp(a, "--payload") == 0) {
            if (parse_int(v, 0, 1000000, &cfg->payload))
                return bad_usage("--payload: '%s' is not a number of bytes (0-1000000)", v);
        } else if (strcmp(a, "--pid") == 0) {
            int p;
            if (parse_int(v, 1, 0x7fffffff, &p))
                return bad_usage("--pid: '%s' is not a process id", v);
            cfg->pid = p;
        } else {
            return bad_usage("unknown option '%s'", a);
        }
    }
    if (!cfg->server)
        return bad_usage("%s is required", "--server URL");
    if (cfg->kind == BC_WORKLOAD && !cfg->crd_file)
        return bad_usage("%s is required with --kind workload", "--crd FILE");
    if (cfg->mem_objects && cfg->mem_objects < cfg->objects) {
        fprintf(stderr,
                "cueue_bench_cluster: --mem-objects %d is less than --objects %d (use 0 "
                "to skip the memory phase)\n",
                cfg->mem_objects, cfg->objects);
        return 2;
    }
    size_t sl = strlen(cfg->server);
    while (sl && cfg->server[sl - 1] == '/')
        sl--;
    if (cfg->kind == BC_CONFIGMAP)
        snprintf(cfg->coll, sizeof cfg->coll, "%.*s/api/v1/namespaces/%s/configmaps", (int)sl,
                 cfg->server, cfg->ns);
    else
        snprintf(cfg->coll, sizeof cfg->coll,
                 "%.*s/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads", (int)sl, cfg->server,
                 cfg->ns);
    return 0;
}

int main(int argc, char **argv)
{
    bc_cfg cfg;
    int pr = parse_args(argc, argv, &cfg);
    if (pr)
        return pr == 1 ? 0 : pr;
    if (curl_global_init(CURL_GLOBAL_ALL) != 0) {
        fprintf(stderr, "cueue_bench_cluster: curl_global_init failed\n");
        return 1;
    }
    int maxc = 1;
    for (int i = 0; i < cfg.nconc; i++)
        if (cfg.conc[i] > maxc)
            maxc = cfg.conc[i];

    bc_http c;
    int rc = 1;
    bc_result create, grow, get[BC_MAX_CONC], patch[BC_MAX_CONC], list[BC_MAX_CONC];
    bc_watch_res live, replay;
    long rss_idle, hwm_idle, rss_n, hwm_n, rss_m = -1, hwm_m = -1;
    const char *kname = cfg.kind == BC_CONFIGMAP ? "configmap" : "workload";
    memset(&grow, 0, sizeof grow);
    if (http_init(&c))
        goto out;
    if (setup(&cfg, &c))
        goto out;
    proc_mem(cfg.pid, &rss_idle, &hwm_idle);

    fprintf(stderr, "cueue_bench_cluster: creating %d %ss with %d clients\n", cfg.objects, kname,
            maxc);
    if (run_phase(&cfg, OP_CREATE, maxc, 0, cfg.objects, 0, 0, &create))
        goto out;
    proc_mem(cfg.pid, &rss_n, &hwm_n);
    if (cfg.mem_only) {
        rc = mem_only(&cfg, &c, maxc, &create, rss_idle, rss_n);
        goto out;
    }
    if (check_list(&cfg, &c, cfg.objects))
        goto out;

    for (int i = 0; i < cfg.nconc; i++) {
        fprintf(stderr, "cueue_bench_cluster: GET, %d clients, %.1f s\n", cfg.conc[i],
                cfg.duration);
        if (run_phase(&cfg, OP_GET, cfg.conc[i], 0, 0, cfg.duration, 0, &get[i]))
            goto out;
    }
    for (int i = 0; i < cfg.nconc; i++) {
        fprintf(stderr, "cueue_bench_cluster: PATCH, %d clients, %.1f s\n", cfg.conc[i],
                cfg.duration);
        if (run_phase(&cfg, OP_PATCH, cfg.conc[i], 0, 0, cfg.duration, 0, &patch[i]))
            goto out;
    }
    for (int i = 0; i < cfg.nconc; i++) {
        fprintf(stderr, "cueue_bench_cluster: LIST of %d, %d clients, %.1f s\n", cfg.objects,
                cfg.conc[i], cfg.duration);
        if (run_phase(&cfg, OP_LIST, cfg.conc[i], 0, 0, cfg.duration, BC_MIN_LISTS * cfg.conc[i],
                      &list[i]))
            goto out;
    }
    fprintf(stderr, "cueue_bench_cluster: watch, %d watchers, %d changes\n", cfg.watchers,
            cfg.watch_changes);
    if (run_watch(&cfg, &c, &live, &replay))
        goto out;
    if (cfg.mem_objects > cfg.objects) {
        fprintf(stderr, "cueue_bench_cluster: creating %d more %ss (to %d)\n",
                cfg.mem_objects - cfg.objects, kname, cfg.mem_objects);
        if (run_phase(&cfg, OP_CREATE, maxc, cfg.objects, cfg.mem_objects, 0, 0, &grow))
            goto out;
    }
    /* memory first: the checking LIST below builds a big response */
    proc_mem(cfg.pid, &rss_m, &hwm_m);
    if (cfg.mem_objects > cfg.objects && check_list(&cfg, &c, cfg.mem_objects))
        goto out;

    printf("cueue_bench_cluster: %s, %s, %d objects (%d payload bytes each)\n", cfg.server, kname,
           cfg.objects, cfg.payload);
    printf("  %-7s %7s %9s %10s %10s %10s %10s %12s\n", "op", "clients", "requests", "req/s",
           "p50 ms", "p99 ms", "max ms", "srv CPU us/op");
    print_row(&create, 0);
    for (int i = 0; i < cfg.nconc; i++)
        print_row(&get[i], 0);
    for (int i = 0; i < cfg.nconc; i++)
        print_row(&patch[i], 0);
    for (int i = 0; i < cfg.nconc; i++)
        print_row(&list[i], 1);
    if (grow.ops)
        print_row(&grow, 0);
    printf("  watch, %d watchers, %d changes by one writer (%.0f PATCH/s):\n", live.watchers,
           live.changes, live.writer_rps);
    printf("    live:   per watcher %.0f / %.0f / %.0f events/s (min/mean/max), total %.0f "
           "events/s, last event %.1f ms after the last write\n",
           live.per_min, live.per_mean, live.per_max, live.total_eps, live.lag * 1e3);
    printf("    replay: per watcher %.0f / %.0f / %.0f events/s (min/mean/max), total %.0f "
           "events/s (the same %d events read back from the history)\n",
           replay.per_min, replay.per_mean, replay.per_max, replay.total_eps, replay.changes);
    if (cfg.pid > 0) {
        printf("  server memory: VmRSS %.1f MiB idle, %.1f MiB at %d objects",
               (double)rss_idle / 1024.0, (double)rss_n / 1024.0, cfg.objects);
        if (cfg.mem_objects > cfg.objects)
            printf(", %.1f MiB at %d objects", (double)rss_m / 1024.0, cfg.mem_objects);
        printf("; VmHWM %.1f MiB before the last checking LIST\n", (double)hwm_m / 1024.0);
    }
    if (cfg.json) {
        printf(
            "{\"kind\":\"%s\",\"mode\":\"full\",\"objects\":%d,\"payload\":%d,\"duration_s\":%.1f",
            kname, cfg.objects, cfg.payload, cfg.duration);
        json_results("create", &create, 1);
        if (grow.ops)
            json_results("create_to_mem_objects", &grow, 1);
        json_results("get", get, cfg.nconc);
        json_results("patch", patch, cfg.nconc);
        json_list_results(list, cfg.nconc);
        json_watch("watch", &live);
        json_watch("watch_replay", &replay);
        printf(",\"mem_objects\":%d,\"rss_idle_kib\":%ld,\"rss_objects_kib\":%ld,"
               "\"rss_mem_objects_kib\":%ld,\"hwm_kib\":%ld}\n",
               cfg.mem_objects > cfg.objects ? cfg.mem_objects : cfg.objects, rss_idle, rss_n,
               rss_m, hwm_m);
    }
    rc = 0;
out:
    http_free(&c);
    curl_global_cleanup();
    return rc;
}
