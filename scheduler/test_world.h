/*
 * test_world.h - what the engine tests that build their worlds in C share
 * (test_engine.c, test_tas.c): a push onto a cu_world vector, zeroed
 * arena memory and formatted strings in the world's arena. Include after
 * cmocka.h and cu_objects.h (through cu_engine.h).
 */
#ifndef TEST_WORLD_H
#define TEST_WORLD_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends x to the vector v (items, n, cap) of a cu_world. */
#define PUSH(v, x) \
    do { \
        if ((v).n == (v).cap) { \
            (v).cap = (v).cap ? (v).cap * 2 : 8; \
            (v).items = realloc((v).items, (v).cap * sizeof(*(v).items)); \
            assert_non_null((v).items); \
        } \
        (v).items[(v).n++] = (x); \
    } while (0)

/* n zeroed bytes in w's arena. */
static inline void *al(cu_world *w, size_t n)
{
    void *p = cu_arena_alloc(&w->arena, n);
    assert_non_null(p);
    memset(p, 0, n);
    return p;
}

/* A formatted string (at most 255 characters) in w's arena. */
static inline const char *s(cu_world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline const char *s(cu_world *w, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return cu_arena_strdup(&w->arena, buf);
}

/* A Workload of one pod set "main" of count pods in namespace "ns", queued
 * in LocalQueue lq-CQ with priority prio, created at created_ms, pushed
 * onto w's workloads; the caller fills the pod set's requests. */
static inline cu_workload *tw_workload(cu_world *w, const char *name, const char *cq, int32_t count,
                                       int32_t prio, int64_t created_ms)
{
    cu_workload *wl = al(w, sizeof(*wl));
    wl->meta.name = s(w, "%s", name);
    wl->meta.ns = "ns";
    wl->meta.created_ms = created_ms;
    wl->meta.has_created = 1;
    wl->meta.seq = w->nseq++;
    wl->queue_name = s(w, "lq-%s", cq);
    wl->has_priority = 1;
    wl->priority = prio;
    wl->active = 1;
    wl->npodsets = 1;
    wl->podsets = al(w, sizeof(cu_podset));
    wl->podsets[0].name = "main";
    wl->podsets[0].count = count;
    PUSH(w->workloads, wl);
    return wl;
}

#endif
