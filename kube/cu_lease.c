/*
 * cu_lease.c - leader election with a coordination.k8s.io/v1 Lease, after
 * client-go's leaderelection package.
 *
 * Every retry period a candidate tries to acquire or renew:
 *   - leading, with the Lease's resourceVersion at hand: PUT the renewed
 *     record straight away (client-go's fast path);
 *   - otherwise GET the Lease (POST it when missing). A record that differs
 *     from the last one seen (by resourceVersion) restarts the local
 *     observation clock. Someone else's record is respected until
 *     observed + leaseDurationSeconds has passed on OUR monotonic clock;
 *     then (or when the holder is empty or ourselves) PUT our record with
 *     the resourceVersion precondition, so of two candidates one gets 409.
 *
 * Fencing (what client-go leaves to the caller): a leader stops leading
 * (on_stopped) when no renewal has succeeded within renew_ms of the moment
 * the last successful one was SENT. The server wrote that record after we
 * sent it and the other candidates start their lease_ms from when they saw
 * it, so with renew_ms < lease_ms we stop before anyone may take over, even
 * when responses are slow.
 *
 * Times are local and monotonic (CLOCK_MONOTONIC, libev timers); the wall
 * clock is only written into renewTime/acquireTime for people to read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ev.h>
#include <json-c/json.h>

#include "cu_lease.h"
#include "cu_clock.h"
#include "cu_json.h"

enum { RQ_GET = 1, RQ_CREATE, RQ_UPDATE, RQ_RELEASE };

typedef struct lreq {
    cu_lease *l;
    cu_kreq *r;
    int kind;
    int cancelled;
    int64_t sent_ms; /* monotonic */
} lreq;

struct cu_lease {
    cu_kclient *c;
    struct ev_loop *loop;
    char *ns, *name, *id;
    char *path, *coll;
    int lease_ms, renew_ms, retry_ms;
    void (*on_started)(cu_lease *, void *);
    void (*on_stopped)(cu_lease *, void *);
    void *ud;

    /* the last record observed */
    int have;
    char *rv, *holder, *acquire;
    int transitions, dur_s;
    int64_t observed_ms; /* monotonic, when that record was first seen */

    int leading;
    int64_t ok_sent_ms; /* when the last successful write was sent */
    lreq *cur;          /* the request in flight (not cancelled) */
    int pending;        /* requests whose done has not run yet */

    ev_timer tick, deadline, later;
    int stopped, freeing, depth;
    int rel_after; /* release once the write in flight has answered */
    void (*rel_done)(void *);
    void *rel_ud;
};

/* The loop the client runs on. */
static struct ev_loop *client_loop(cu_kclient *c) { return cu_kclient_loop(c); }

static char *xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static void set_str(char **dst, const char *s)
{
    char *p = xstrdup(s ? s : "");
    if (p) {
        free(*dst);
        *dst = p;
    }
}

static int lease_dur_s(const cu_lease *l) { return (l->lease_ms + 999) / 1000; }

/* ---- lifetime ---- */

static void really_free(cu_lease *l)
{
    ev_timer_stop(l->loop, &l->tick);
    ev_timer_stop(l->loop, &l->deadline);
    ev_timer_stop(l->loop, &l->later);
    free(l->ns);
    free(l->name);
    free(l->id);
    free(l->path);
    free(l->coll);
    free(l->rv);
    free(l->holder);
    free(l->acquire);
    free(l);
}

static int reap(cu_lease *l)
{
    if (l->freeing && l->depth == 0 && l->pending == 0) {
        really_free(l);
        return 1;
    }
    return 0;
}

static void cancel_cur(cu_lease *l)
{
    lreq *q = l->cur;
    if (!q)
        return;
    l->cur = NULL;
    q->cancelled = 1;
    cu_kclient_cancel(q->r); /* q may be gone after this */
}

static void stop_leading(cu_lease *l)
{
    if (!l->leading)
        return;
    l->leading = 0;
    ev_timer_stop(l->loop, &l->deadline);
    if (l->on_stopped)
        l->on_stopped(l, l->ud);
}

/* ---- requests ---- */

static void req_done(cu_kclient *c, const cu_kresp *r, void *ud);

static void lsend(cu_lease *l, int kind, const char *method, const char *path, const char *body)
{
    lreq *q = calloc(1, sizeof *q);
    if (!q)
        return;
    q->l = l;
    q->kind = kind;
    q->sent_ms = cu_clock_mono_ms();
    l->cur = q;
    l->pending++;
    q->r = cu_kclient_request(l->c, method, path, body, body ? strlen(body) : 0,
                              body ? "application/json" : NULL, req_done, q);
    if (!q->r) {
        l->cur = NULL;
        l->pending--;
        free(q);
    }
}

/* The Lease object we want to store: ours (holder = id) or released
 * (holder empty). rv NULL for a create. Returns a new string. */
static char *lease_body(cu_lease *l, const char *rv, int release)
{
    char now[64];
    cu_time_format_micro(cu_clock_wall_us(), now, sizeof now);
    json_object *o = json_object_new_object(), *md = json_object_new_object(),
                *sp = json_object_new_object();
    json_object_object_add(o, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("Lease"));
    json_object_object_add(md, "name", json_object_new_string(l->name));
    json_object_object_add(md, "namespace", json_object_new_string(l->ns));
    if (rv)
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(o, "metadata", md);
    int mine = l->have && l->holder && strcmp(l->holder, l->id) == 0;
    int transitions = l->have ? l->transitions : 0;
    if (release) {
        /* as client-go: holder cleared, 1 s, so others take it at once */
        json_object_object_add(sp, "holderIdentity", json_object_new_string(""));
        json_object_object_add(sp, "leaseDurationSeconds", json_object_new_int(1));
        json_object_object_add(sp, "acquireTime", json_object_new_string(now));
    } else {
        if (l->have && !mine)
            transitions++;
        json_object_object_add(sp, "holderIdentity", json_object_new_string(l->id));
        json_object_object_add(sp, "leaseDurationSeconds", json_object_new_int(lease_dur_s(l)));
        json_object_object_add(
            sp, "acquireTime",
            json_object_new_string(mine && l->acquire && *l->acquire ? l->acquire : now));
    }
    json_object_object_add(sp, "renewTime", json_object_new_string(now));
    json_object_object_add(sp, "leaseTransitions", json_object_new_int(transitions));
    json_object_object_add(o, "spec", sp);
    char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

static void write_lease(cu_lease *l, int kind)
{
    char *body = lease_body(l, kind == RQ_CREATE ? NULL : l->rv, kind == RQ_RELEASE);
    if (!body)
        return;
    if (kind == RQ_CREATE)
        lsend(l, kind, "POST", l->coll, body);
    else
        lsend(l, kind, "PUT", l->path, body);
    free(body);
}

/* Records what the server holds. Returns 0, -1 when obj is no Lease. */
static int observe(cu_lease *l, json_object *obj, int64_t now)
{
    json_object *md = cu_jget(obj, "metadata"), *sp = cu_jget(obj, "spec");
    const char *rv = cu_jstr(md, "resourceVersion");
    if (!rv)
        return -1;
    if (!l->have || !l->rv || strcmp(l->rv, rv) != 0) {
        set_str(&l->rv, rv);
        set_str(&l->holder, cu_jstr(sp, "holderIdentity"));
        set_str(&l->acquire, cu_jstr(sp, "acquireTime"));
        json_object *t = cu_jget(sp, "leaseTransitions"), *d = cu_jget(sp, "leaseDurationSeconds");
        l->transitions = t ? json_object_get_int(t) : 0;
        l->dur_s = d ? json_object_get_int(d) : 0;
        l->observed_ms = now;
        l->have = 1;
    }
    return 0;
}

static void arm_deadline(cu_lease *l, int64_t now)
{
    double left = (double)(l->ok_sent_ms + l->renew_ms - now) / 1000.0;
    ev_timer_stop(l->loop, &l->deadline);
    ev_timer_set(&l->deadline, left > 0 ? left : 0., 0.);
    ev_timer_start(l->loop, &l->deadline);
}

static void after_get(cu_lease *l, int64_t now)
{
    int mine = l->holder && strcmp(l->holder, l->id) == 0;
    int64_t dur = l->dur_s > 0 ? (int64_t)l->dur_s * 1000 : l->lease_ms;
    if (l->holder && *l->holder && !mine && now < l->observed_ms + dur) {
        /* held by someone else and not expired as far as we have seen */
        stop_leading(l);
        return;
    }
    write_lease(l, RQ_UPDATE);
}

static void written(cu_lease *l, lreq *q, int64_t now)
{
    l->ok_sent_ms = q->sent_ms;
    if (!l->leading) {
        l->leading = 1;
        arm_deadline(l, now);
        if (l->on_started)
            l->on_started(l, l->ud);
        return;
    }
    arm_deadline(l, now);
}

static void req_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    lreq *q = ud;
    cu_lease *l = q->l;
    (void)c;
    l->pending--;
    if (l->cur == q)
        l->cur = NULL;
    l->depth++;
    if (q->cancelled || l->freeing)
        goto out;
    int64_t now = cu_clock_mono_ms();
    json_object *obj =
        r->body && (r->code == 200 || r->code == 201) ? cu_json_parse_str(r->body) : NULL;
    switch (q->kind) {
    case RQ_GET:
        if (r->code == 404) {
            l->have = 0;
            write_lease(l, RQ_CREATE);
        } else if (obj && observe(l, obj, now) == 0 && !l->stopped) {
            after_get(l, now);
        }
        break;
    case RQ_CREATE:
    case RQ_UPDATE:
        if (obj && observe(l, obj, now) == 0) {
            if (!l->stopped)
                written(l, q, now);
        } else if (r->code == 409) {
            /* someone wrote first: next attempt GETs the current record */
            l->have = 0;
        }
        break;
    case RQ_RELEASE:
        if (l->rel_done)
            l->rel_done(l->rel_ud);
        break;
    }
    if (l->rel_after && q->kind != RQ_RELEASE) {
        /* the renewal a release waited for has answered */
        l->rel_after = 0;
        if (l->have && l->holder && strcmp(l->holder, l->id) == 0)
            write_lease(l, RQ_RELEASE);
        if (!l->cur)
            ev_timer_start(l->loop, &l->later); /* nothing to release: report */
    }
    json_object_put(obj);
out:
    free(q);
    l->depth--;
    reap(l);
}

/* ---- timers ---- */

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    cu_lease *l = (cu_lease *)((char *)w - offsetof(cu_lease, tick));
    (void)loop;
    (void)revents;
    if (l->stopped || l->cur)
        return; /* one attempt at a time */
    if (l->leading && l->have)
        write_lease(l, RQ_UPDATE); /* fast path: renew with the RV we hold */
    else
        lsend(l, RQ_GET, "GET", l->path, NULL);
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    cu_lease *l = (cu_lease *)((char *)w - offsetof(cu_lease, deadline));
    (void)loop;
    (void)revents;
    if (!l->leading)
        return;
    l->depth++;
    /* no renewal within renew_ms: stop before the lease can expire for others */
    cancel_cur(l);
    l->have = 0; /* next attempt starts from a fresh GET */
    stop_leading(l);
    l->depth--;
    reap(l);
}

static void later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    cu_lease *l = (cu_lease *)((char *)w - offsetof(cu_lease, later));
    (void)loop;
    (void)revents;
    if (l->freeing)
        return;
    l->depth++;
    if (l->rel_done)
        l->rel_done(l->rel_ud);
    l->depth--;
    reap(l);
}

/* ---- public ---- */

static int check(const cu_lease_opts *o, int lease_ms, int renew_ms, int retry_ms, cu_diag *d)
{
    int bad = 0;
    const char *who = o->name && *o->name ? o->name : "lease";
    if (!o->ns || !*o->ns) {
        cu_diag_error(d, "%s: ns: missing (the namespace of the Lease)", who);
        bad = 1;
    }
    if (!o->name || !*o->name) {
        cu_diag_error(d, "%s: name: missing (the name of the Lease)", who);
        bad = 1;
    }
    if (!o->identity || !*o->identity) {
        cu_diag_error(d, "%s: identity: missing (unique per candidate, e.g. hostname_uuid)", who);
        bad = 1;
    }
    if (o->ns && strchr(o->ns, '/')) {
        cu_diag_error(d, "%s: ns: must not contain '/' (got \"%s\")", who, o->ns);
        bad = 1;
    }
    if (o->name && strchr(o->name, '/')) {
        cu_diag_error(d, "%s: name: must not contain '/' (got \"%s\")", who, o->name);
        bad = 1;
    }
    if (lease_ms < 0 || renew_ms < 0 || retry_ms < 0) {
        cu_diag_error(d, "%s: lease_ms, renew_ms, retry_ms: must be >= 0 (got %d, %d, %d)", who,
                      o->lease_ms, o->renew_ms, o->retry_ms);
        return 1;
    }
    if (lease_ms <= renew_ms) {
        cu_diag_error(d, "%s: lease_ms: must be greater than renew_ms (got %d <= %d)", who,
                      lease_ms, renew_ms);
        bad = 1;
    }
    if ((double)renew_ms <= 1.2 * retry_ms) {
        cu_diag_error(d, "%s: renew_ms: must be greater than 1.2 x retry_ms (got %d, retry_ms %d)",
                      who, renew_ms, retry_ms);
        bad = 1;
    }
    if (retry_ms == 0) {
        cu_diag_error(d, "%s: retry_ms: must be > 0", who);
        bad = 1;
    }
    return bad;
}

cu_lease *cu_lease_start(cu_kclient *c, const cu_lease_opts *o, cu_diag *d)
{
    if (!c || !o) {
        cu_diag_error(d, "lease: %s: missing", c ? "options" : "client");
        return NULL;
    }
    int lease_ms = o->lease_ms ? o->lease_ms : 15000;
    int renew_ms = o->renew_ms ? o->renew_ms : 10000;
    int retry_ms = o->retry_ms ? o->retry_ms : 2000;
    if (check(o, lease_ms, renew_ms, retry_ms, d))
        return NULL;
    cu_lease *l = calloc(1, sizeof *l);
    if (!l) {
        cu_diag_error(d, "%s: out of memory", o->name);
        return NULL;
    }
    l->c = c;
    l->loop = client_loop(c);
    l->ns = xstrdup(o->ns);
    l->name = xstrdup(o->name);
    l->id = xstrdup(o->identity);
    l->lease_ms = lease_ms;
    l->renew_ms = renew_ms;
    l->retry_ms = retry_ms;
    l->on_started = o->on_started;
    l->on_stopped = o->on_stopped;
    l->ud = o->ud;
    size_t pn = strlen(o->ns) + strlen(o->name) + 64;
    l->coll = malloc(pn);
    l->path = malloc(pn);
    ev_timer_init(&l->tick, tick_cb, 0., retry_ms / 1000.0);
    ev_timer_init(&l->deadline, deadline_cb, 0., 0.);
    ev_timer_init(&l->later, later_cb, 0., 0.);
    if (!l->ns || !l->name || !l->id || !l->coll || !l->path) {
        cu_diag_error(d, "%s: out of memory", o->name);
        really_free(l);
        return NULL;
    }
    snprintf(l->coll, pn, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", o->ns);
    snprintf(l->path, pn, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", o->ns, o->name);
    ev_timer_start(l->loop, &l->tick); /* first attempt on the next loop iteration */
    return l;
}

/* Leading only while the last renewal is younger than renew_ms by the
 * clock, not only by the deadline timer: a process paused past it (SIGSTOP,
 * a stalled host) must not act on its first wakeup before that timer runs,
 * when another replica may already hold the Lease. */
int cu_lease_leading(const cu_lease *l)
{
    return l && l->leading && cu_clock_mono_ms() < l->ok_sent_ms + l->renew_ms;
}

void cu_lease_release(cu_lease *l, void (*done)(void *ud), void *ud)
{
    if (!l || l->stopped) {
        return;
    }
    l->depth++;
    l->stopped = 1;
    l->rel_done = done;
    l->rel_ud = ud;
    ev_timer_stop(l->loop, &l->tick);
    int was = l->leading;
    /* A renewal in flight may already be applied by the server, which
     * would leave the resourceVersion we hold stale and our release
     * refused with 409 (the Lease then stays ours until it expires): let
     * it answer and release with the version it brings. */
    int wait = was && l->cur && l->cur->kind == RQ_UPDATE;
    if (!wait)
        cancel_cur(l);
    stop_leading(l);
    if (l->freeing)
        goto out; /* freed from on_stopped: no more callbacks */
    if (wait && l->cur) {
        l->rel_after = 1;
        goto out;
    }
    if (was && l->have) {
        write_lease(l, RQ_RELEASE);
        if (l->cur)
            goto out;
    }
    /* nothing to release (or the request could not start): report later */
    ev_timer_start(l->loop, &l->later);
out:
    l->depth--;
    reap(l);
}

void cu_lease_free(cu_lease *l)
{
    if (!l || l->freeing)
        return;
    l->depth++;
    l->freeing = 1;
    l->stopped = 1;
    l->leading = 0; /* no callbacks from here on */
    ev_timer_stop(l->loop, &l->tick);
    ev_timer_stop(l->loop, &l->deadline);
    ev_timer_stop(l->loop, &l->later);
    cancel_cur(l);
    l->depth--;
    reap(l);
}
