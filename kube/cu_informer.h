/*
 * cu_informer.h - list-and-watch of one resource (client-go's reflector):
 * paginated LIST, then WATCH from its resourceVersion with bookmarks; on
 * 410 Gone, relist and report deletions for objects that vanished; a
 * watch that stays silent longer than the expected bookmark interval is
 * restarted; watch errors back off exponentially.
 *
 * Objects are read as deep as the API server serves them
 * (CU_JSON_MAX_DEPTH), each LIST item on its own, so that one item that
 * cannot be read is reported (on_skip) and left out while the rest sync.
 *
 * Objects are decoded at the boundary: the informer hands each object's
 * JSON (json-c, borrowed for the duration of the callback) to the
 * caller's decode function, which keeps only what it needs; the informer
 * itself keeps, per object, only its key and resourceVersion.
 */
#ifndef CU_INFORMER_H
#define CU_INFORMER_H

#include <json-c/json.h>

#include "cu_kclient.h"

typedef enum cu_ievent { CU_IEV_ADDED = 0, CU_IEV_MODIFIED, CU_IEV_DELETED } cu_ievent;

typedef struct cu_informer cu_informer;

typedef struct cu_informer_opts {
    const char *path;           /* collection path: "/apis/kueue.x-k8s.io/v1beta2/workloads" or
                                   "/api/v1/namespaces/ns/pods" */
    const char *label_selector; /* optional */
    const char *field_selector; /* optional */
    int page_size;              /* LIST limit (0: 500) */
    int watch_timeout_s;        /* timeoutSeconds for each watch (0: 300..600 randomized) */
    int silence_ms;             /* restart a watch silent this long (0: 2 x bookmark
                                   interval, 120000) */
    /* A collection whose CustomResourceDefinition may be missing: a LIST
     * answered 404 before the first sync counts as an empty, synced
     * collection (on_synced is called and on_skip told why), and the LIST
     * is retried with the backoff until the resource is served. */
    int optional;
    /* Called for every change, in order. obj is borrowed; for DELETED it is
     * the last known state (from the event, or a tombstone with only
     * metadata when the object vanished during a relist). */
    void (*on_event)(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud);
    /* Called once, when the first LIST has been delivered completely. */
    void (*on_synced)(cu_informer *inf, void *ud);
    /* Optional: called for each LIST item or watch event that cannot be
     * used (not JSON, nested deeper than CU_JSON_MAX_DEPTH, not an object,
     * no metadata.name) and is left out, and when a LIST page is too large
     * or not a list; why is a sentence naming the path. obj is the object
     * when it could be parsed (borrowed), else NULL. The informer goes on
     * with the rest: one bad object never stops the sync. */
    void (*on_skip)(cu_informer *inf, const char *why, json_object *obj, void *ud);
    void *ud;
} cu_informer_opts;

cu_informer *cu_informer_start(cu_kclient *c, const cu_informer_opts *o, cu_diag *d);
void cu_informer_stop(cu_informer *inf);
int cu_informer_synced(const cu_informer *inf);
const char *cu_informer_rv(const cu_informer *inf); /* last resourceVersion seen */

typedef struct cu_informer_stats {
    uint64_t lists, watches, relists_410, silent_restarts, events;
    uint64_t skipped; /* LIST items and watch events left out (on_skip) */
} cu_informer_stats;
void cu_informer_stats_get(const cu_informer *inf, cu_informer_stats *out);

/* For tests and fuzzing: hands s[0..len) to the informer as a whole LIST
 * answer (watch = 0: one pass, its end reports what vanished and counts
 * as synced) or as one watch event line (watch = 1), without a request.
 * The informer's own requests go on as usual. */
void cu_informer_feed(cu_informer *inf, int watch, const char *s, size_t len);

#endif
