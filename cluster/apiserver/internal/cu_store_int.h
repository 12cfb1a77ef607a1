/*
 * cu_store_int.h - the object store's internals, shared by its files
 * (cu_store.c: strings, hash map, helpers, statuses, life cycle;
 * cu_registry.c: served types and CRDs; cu_storeobj.c: objects, indexes,
 * events and garbage collection; cu_storesel.c: selectors;
 * cu_storecrud.c: create/get/update/delete; cu_storewatch.c: list and
 * watch). Only the store's own files include it. The invariants are those
 * stated at the top of cu_store.c; unless a prototype says otherwise a
 * function whose name does not end in _unlocked expects s->mu held where it
 * touches the store, and returns borrowed pointers.
 */
#ifndef CU_CU_STORE_INT_H
#define CU_CU_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cu_clock.h"
#include "cu_json.h"
#include "cu_schema.h"
#include "cu_store.h"

#define KEY_MAX 600

typedef struct cu_rstr {
    atomic_int refs;
    size_t len;
    char s[];
} rstr;
typedef struct hslot {
    const char *key;
    void *val;
} hslot;
typedef struct hmap {
    hslot *t;
    size_t cap, n;
} hmap;
/* ------------------------------------------------------------------ */
/* types                                                                */

enum { K_OTHER, K_NS, K_POD, K_NODE, K_JOB, K_CRD, K_EVENT, K_SECRET, K_CR };

typedef struct res_t res_t;
typedef struct ent ent;

typedef struct rt_ent {
    cu_rtype pub; /* first member: cu_rtype * <-> rt_ent * */
    res_t *res;
    int served;
    int gen;                   /* objects carry metadata.generation */
    int uncond;                /* PUT without resourceVersion allowed */
    int kid;                   /* K_* */
    const char *const *fields; /* extra field selector labels, NULL-terminated */
} rt_ent;

struct res_t {
    char *qname; /* "pods", "jobs.batch" */
    char *group, *plural;
    rt_ent *storage_rt;
    int namespaced, kid, multi; /* multi: more than one version ever */
    hmap objs;
    ent **vec;
    size_t n, cap;
    int sorted;
    int64_t last_rv;
    int crd_terminating;
    char *crd_name; /* the CRD object's name (CRs only) */
};

struct ent {
    res_t *res;
    char *key; /* "ns/name" or "name", then NUL, ns, NUL */
    size_t nslen;
    const char *ns, *name;
    char uid[48];
    int64_t rv;
    rstr *data;
    char **owners;
    size_t nowners;
    int terminating;
    size_t vidx;
};

typedef struct deplist {
    char *uid;
    ent **v;
    size_t n, cap;
} deplist;
typedef struct nscount {
    char *ns;
    size_t n;
} nscount;

typedef struct sev {
    int64_t rv;
    res_t *res;
    const char *type;
    char *ns; /* one block: ns, NUL, name, NUL */
    const char *name;
    rstr *obj, *old;
} sev;

/* label selector requirement */
enum { L_EXISTS, L_NOTEXISTS, L_EQ, L_NE, L_IN, L_NOTIN, L_GT, L_LT };
typedef struct lreq {
    char *key;
    int op;
    char **vals;
    size_t nvals;
} lreq;
typedef struct freq {
    char *label;
    char *value;
    int neg;
} freq;
typedef struct selector {
    lreq *l;
    size_t nl;
    freq *f;
    size_t nf;
} selector;

struct cu_watch {
    cu_store *s;
    rt_ent *rt;
    char *ns;
    selector sel;
    int bookmarks, done, sent_bookmark;
    int initial_end; /* the initial-events-end BOOKMARK is still to send */
    int ending;      /* finish after the pending events (CRD deleted) */
    rstr **init;
    size_t ninit, iinit; /* the initial list: owned refs, read
                                          without the lock (one reader) */
    int init_matched;    /* the selector was decided at open time */
    int meta_only;       /* the selector names only name and namespace */
    uint64_t pos;
    int64_t min_rv, last_rv;
    cu_watch *prev, *next;
};

typedef struct hook {
    cu_store_hook fn;
    void *ud;
} hook;

struct cu_store {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cu_clock clock;
    uint64_t rng;
    int64_t rv;
    rt_ent **rts;
    size_t nrts, caprts;
    res_t **res;
    size_t nres, capres;
    hmap uids, deps, nss;
    sev *ring;
    size_t hcap;
    uint64_t head, tail;
    int64_t hist_rv;
    size_t hbytes, hbytes_max; /* bytes the ring's events hold, and their cap */
    cu_watch *watchers;
    hook *hooks;
    size_t nhooks;
    cu_store_backend be;
    int has_be;
    int be_errors;
    void **grave;
    size_t ngrave, capgrave;
    json_object **jgrave;
    size_t njgrave, capjgrave;
    cu_schema_rx **rxgrave;
    size_t nrxgrave;
    res_t *r_ns;
};

/* pending work of one operation: hook calls and GC items */
typedef struct pend {
    rt_ent *rt;
    const char *type;
    rstr *obj;
} pend;
typedef struct opctx {
    pend *p;
    size_t np, capp;
    char **work;
    size_t nwork, capwork;
    int removed;
} opctx;

/* field errors, reported as kube-apiserver's 422 Invalid */
typedef struct ferrs {
    cu_schema_err e[32];
    size_t n, total;
} ferrs;
typedef struct bdef {
    const char *group, *version, *plural, *singular, *kind;
    int namespaced, status_sub, gen, kid;
    const char *shorts, *cats, *cols;
    const char *const *fields;
} bdef;

/* cu_store.c */
/* A new string of n bytes (one reference); NULL without memory. */
rstr *rstr_new(const char *s, size_t n);
/* Takes one more reference to r (NULL passes); returns r. */
rstr *rstr_ref(rstr *r);
/* Drops one reference; frees r with the last. */
void rstr_unref(rstr *r);
/* The value of k, or NULL. Keys are borrowed from the values. */
void *hm_get(const hmap *m, const char *k);
/* Adds or replaces k (borrowed); 0, or -1 without memory. */
int hm_put(hmap *m, const char *k, void *v);
/* Removes k; returns its value (the caller's again) or NULL. */
void *hm_del(hmap *m, const char *k);
/* The store clock's now as RFC 3339 into buf. */
void now_str(cu_store *s, char *buf, size_t n);
/* The store's next pseudo-random number (seeded at creation). */
uint64_t rng_next(cu_store *s);
/* A new UUID-shaped uid into out (37 bytes). */
void gen_uid(cu_store *s, char *out);
/* strdup that passes NULL; caller frees. */
char *xstrdup(const char *s);
/* Keeps p until the store is freed (borrowed pointers to it stay valid). */
void grave_add(cu_store *s, void *p);
/* Keeps o until the store is freed. */
void jgrave_add(cu_store *s, json_object *o);
/* Keeps rx until the store is freed. */
void rxgrave_add(cu_store *s, cu_schema_rx *rx);
/* Parses JSON up to CU_JSON_MAX_DEPTH; new (json_object_put), NULL if invalid. */
json_object *jparse(const char *s, size_t n);
/* jparse of a stored string. */
json_object *jparse_r(const rstr *r);
/* 1 if the array a holds the string s. */
int jarr_has_str(json_object *a, const char *s);
/* Parses a resourceVersion: 0 and *out, or -1 if it is not one. */
int parse_rv(const char *s, int64_t *out);
/* The index key "ns/name" (or "name") into buf. */
void make_key(char *buf, size_t n, const char *ns, const char *name);
/* Sets the details (kind, name, group) of a status. */
void st_details(cu_status *st, const char *kind, const char *name, const char *group);
/* These fill st as kube-apiserver does and return the matching cu_err. */
cu_err err_notfound(cu_status *st, const rt_ent *rt, const char *name);
cu_err err_not_served(cu_status *st);
cu_err err_conflict(cu_status *st, const rt_ent *rt, const char *name);
/* Records one field error (counted past the 32 kept). */
void ferr_add(ferrs *fe, const char *field, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
cu_err err_invalid_gk(cu_status *st, const char *kind, const char *group, const char *name,
                      const ferrs *fe);
cu_err err_invalid(cu_status *st, const rt_ent *rt, const char *name, const ferrs *fe);
cu_err err_invalid1(cu_status *st, const rt_ent *rt, const char *name, const char *field,
                    const char *type, const char *msg);

/* cu_registry.c */
/* Frees n strings and the vector. */
void free_strv(char **v, size_t n);
/* Frees n printer columns and the vector. */
void free_cols(cu_pcol *c, size_t n);
/* The stored resource of group/plural, or NULL. Borrowed (lives as long as the store). */
res_t *res_find_q(cu_store *s, const char *group, const char *plural);
/* The stored resource by qualified name ("jobs.batch"), or NULL. Borrowed. */
res_t *res_by_qname(cu_store *s, const char *qname);
/* Registers one built-in type; 0, or -1 without memory. */
int add_builtin(cu_store *s, const bdef *d);
/* Registers crd's served versions and fills its status as the apiextensions
 * controllers do. crd (borrowed) is modified (defaults, status). */
cu_err register_crd_locked(cu_store *s, json_object *crd, cu_status *st);

/* cu_storeobj.c */
extern const char EV_ADDED[], EV_MODIFIED[], EV_DELETED[]; /* compared by address */
/* A new object entry, not yet linked; free with ent_free. */
ent *ent_new(res_t *r, const char *ns, const char *name);
/* Frees an unlinked entry and drops its data reference. */
void ent_free(ent *e);
/* The entry of ns/name in r, or NULL. Borrowed. */
ent *ent_find(res_t *r, const char *ns, const char *name);
/* Refreshes e's uid, owners and terminating flag from o (borrowed). */
void ent_set_meta(cu_store *s, ent *e, json_object *o);
/* Adds e to the indexes; 0, or -1 without memory. */
int ent_link(cu_store *s, ent *e);
/* Removes e from the indexes (not freed). */
void ent_unlink(cu_store *s, ent *e);
/* Sorts r's vector by key (etcd order) if it is not sorted. */
void res_sort(res_t *r);
/* First index whose key is > key (strict) or >= key. */
size_t res_bound(res_t *r, const char *key, int strict);
/* Drops the oldest event of the history (its RV becomes too old). */
void ring_pop(cu_store *s);
/* o serialized into a new string (one reference), its numbers first made
 * to serialize as Go writes them (cu_json_go_numbers). */
rstr *serialize(json_object *o);
/* Sets o's metadata.resourceVersion. */
void set_rv(json_object *o, int64_t rv);
/* Stores o (borrowed; its resourceVersion is set) as the new state of e,
 * or of a new object when e is NULL (ns/name taken from o). */
cu_err commit_put(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o, cu_status *st);
/* Unlocks and calls the hooks for the operation's events. */
void op_finish(cu_store *s, opctx *c);
/* Commits o as e's new state: removes e when it is terminating with no
 * finalizers (and, for a namespace or CRD, empty). */
cu_err commit_or_remove(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o, cu_status *st);
/* Deletes e (propagation prop: "Orphan", "Foreground" or background); on
 * success the deleted or terminating object in *out (new, caller puts). */
cu_err del_ent(cu_store *s, opctx *c, rt_ent *rt, ent *e, const char *prop, json_object **out,
               cu_status *st);
/* Runs the garbage collection the operation queued (owner references). */
void cascade(cu_store *s, opctx *c);

/* cu_storesel.c */
/* Frees a parsed selector's contents. */
void sel_free(selector *sl);
/* 1 if the selector selects everything. */
int sel_empty(const selector *sl);
/* 1 if o (borrowed) matches the selector. */
int sel_match(const selector *sl, json_object *o);
/* 1 if ns/name pass the selector's metadata.name and metadata.namespace
 * requirements (the others are not looked at). */
int sel_meta_match(const selector *sl, const char *ns, const char *name);
/* sel_meta_match on an entry. */
int sel_meta_ok(const selector *sl, const ent *e);
/* 1 if the selector names only metadata.name and metadata.namespace. */
int sel_meta_only(const selector *sl);
/* Parses the list options' label and field selectors into sl (free with
 * sel_free); on error fills st (kube-apiserver's 400) and returns it. */
cu_err sel_parse(const rt_ent *rt, const cu_list_opts *o, selector *sl, cu_status *st);

/* cu_storecrud.c */
/* Sets apiVersion and kind as served by rt; returns o. */
json_object *to_rt(const rt_ent *rt, json_object *o);

#endif
