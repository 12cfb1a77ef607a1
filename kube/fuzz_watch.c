/*
 * fuzz_watch.c - libFuzzer target for the informer's decoding of what the
 * API server streams (cu_informer.c): watch event lines and LIST answers,
 * handed over with cu_informer_feed (no network).
 *
 * Input: lines split at '\n'; a line that starts with "L " is a LIST
 * answer (the rest of the line), any other line one watch event line
 * (seeds in fuzz-seeds-watch/). Each input starts from an empty informer
 * (an empty LIST first). Besides "no crash, no sanitizer report", the
 * informer is checked against a model built from its own callbacks and
 * from reading each line independently (a violation aborts):
 *  - every event carries an object with a metadata.name; ADDED only for
 *    an unknown key, MODIFIED and DELETED only for known keys;
 *  - one watch line gives at most one event or one skip, a skip always
 *    has a reason;
 *  - after a valid ADDED/MODIFIED line the key is known, after a DELETED
 *    line it is not, and the informer's resourceVersion is the event's
 *    (or the BOOKMARK's) when it has one;
 *  - after a LIST answer that reads as a list, the known keys are
 *    exactly the keys of its items that have a name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_informer.h"
#include "cu_json.h"
#include "cu_kclient.h"
#include "cu_kconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEYMAX 600 /* the informer's key buffer */

static void must(int cond)
{
    if (!cond)
        abort();
}

static struct ev_loop *loop;
static cu_kconfig *cfg;
static cu_kclient *kc;
static cu_informer *inf;

/* the model: the keys the informer has reported, as a set of strings */
static char **keys;
static size_t nkeys, capkeys;
static int nevents, nskips;

static long find(const char *k)
{
    for (size_t i = 0; i < nkeys; i++)
        if (strcmp(keys[i], k) == 0)
            return (long)i;
    return -1;
}

static void add(const char *k)
{
    if (nkeys == capkeys) {
        capkeys = capkeys ? capkeys * 2 : 64;
        keys = realloc(keys, capkeys * sizeof *keys);
        must(keys != NULL);
    }
    keys[nkeys] = strdup(k);
    must(keys[nkeys] != NULL);
    nkeys++;
}

static void del(long i)
{
    free(keys[i]);
    keys[i] = keys[--nkeys];
}

/* "ns/name" or "name" of obj as the informer forms it; 0, or -1 without
 * a name or when the key does not fit. */
static int key_of(json_object *obj, char *out, size_t n)
{
    json_object *md = cu_jget(obj, "metadata");
    const char *name = cu_jstr(md, "name"), *ns = cu_jstr(md, "namespace");
    if (!name || !*name || strchr(name, '/') || (ns && strchr(ns, '/')))
        return -1;
    int w = ns && *ns ? snprintf(out, n, "%s/%s", ns, name) : snprintf(out, n, "%s", name);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static void on_event(cu_informer *in, cu_ievent ev, json_object *obj, void *ud)
{
    (void)in;
    (void)ud;
    char key[KEYMAX];
    must(json_object_is_type(obj, json_type_object));
    must(key_of(obj, key, sizeof key) == 0);
    long i = find(key);
    nevents++;
    if (ev == CU_IEV_ADDED) {
        must(i < 0);
        add(key);
    } else if (ev == CU_IEV_MODIFIED) {
        must(i >= 0);
    } else {
        must(ev == CU_IEV_DELETED && i >= 0);
        del(i);
    }
}

static void on_skip(cu_informer *in, const char *why, json_object *obj, void *ud)
{
    (void)in;
    (void)obj;
    (void)ud;
    must(why && *why);
    nskips++;
}

static void init(void)
{
    char path[] = "/tmp/fuzz_watch_kc.XXXXXX";
    int fd = mkstemp(path);
    must(fd >= 0);
    static const char kcfg[] =
        "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster: {server: "
        "'http://127.0.0.1:1'}\ncontexts:\n- name: x\n  context: {cluster: x}\n"
        "current-context: x\n";
    must(write(fd, kcfg, sizeof(kcfg) - 1) == (ssize_t)(sizeof(kcfg) - 1));
    close(fd);
    cu_diag d;
    cu_diag_init(&d);
    cfg = cu_kconfig_load(path, NULL, &d);
    unlink(path);
    loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko;
    memset(&ko, 0, sizeof(ko));
    kc = cfg && loop ? cu_kclient_new(loop, cfg, &ko, &d) : NULL;
    must(kc != NULL);
    cu_informer_opts o;
    memset(&o, 0, sizeof(o));
    o.path = "/api/v1/configmaps";
    o.on_event = on_event;
    o.on_skip = on_skip;
    inf = cu_informer_start(kc, &o, &d);
    must(inf != NULL);
    cu_diag_free(&d);
}

/* A LIST answer: when it reads as one list (one "items" key, so the
 * informer's split reading and json-c agree), the known keys are exactly
 * its named items' keys. */
static void feed_list(const char *s, size_t n)
{
    cu_informer_feed(inf, 0, s, n);
    size_t nitems = 0;
    for (size_t i = 0; i + 5 <= n; i++)
        nitems += memcmp(s + i, "tems\"", 5) == 0; /* "items" or "\u0069tems" */
    if (nitems > 1)
        return; /* two "items" keys? json-c keeps the last, the informer's scan the first */
    for (size_t i = 0; i + 2 <= n; i++)
        if (s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '*'))
            return; /* json-c reads a comment there (the rest of the line, items included),
                       which is not JSON; the informer's scan does not */
    json_object *root = cu_json_parse(NULL, s, n, NULL, 0);
    json_object *items = cu_jget(root, "items");
    if (json_object_is_type(root, json_type_object) &&
        (!items || json_object_is_type(items, json_type_array))) {
        size_t want = 0;
        for (size_t i = 0; i < cu_jarr_len(items); i++) {
            char key[KEYMAX];
            json_object *it = json_object_array_get_idx(items, i);
            if (json_object_is_type(it, json_type_object) && key_of(it, key, sizeof key) == 0) {
                must(find(key) >= 0);
                int dup = 0;
                for (size_t j = 0; j < i && !dup; j++) {
                    char k2[KEYMAX];
                    json_object *o2 = json_object_array_get_idx(items, j);
                    dup = json_object_is_type(o2, json_type_object) &&
                          key_of(o2, k2, sizeof k2) == 0 && strcmp(k2, key) == 0;
                }
                want += !dup;
            }
        }
        must(nkeys == want);
    }
    json_object_put(root);
}

static void feed_watch(const char *s, size_t n)
{
    int ev0 = nevents, sk0 = nskips;
    cu_informer_feed(inf, 1, s, n);
    must(nevents - ev0 + nskips - sk0 <= 1);
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    json_object *ev = n ? cu_json_parse(NULL, s, n, NULL, 0) : NULL;
    const char *type = cu_jstr(ev, "type");
    json_object *obj = cu_jget(ev, "object");
    if (type && json_object_is_type(obj, json_type_object)) {
        const char *rv = cu_jpath_str(obj, "metadata.resourceVersion");
        char key[KEYMAX];
        int named = key_of(obj, key, sizeof key) == 0;
        int add_mod = !strcmp(type, "ADDED") || !strcmp(type, "MODIFIED");
        if (named && add_mod)
            must(find(key) >= 0);
        if (named && !strcmp(type, "DELETED"))
            must(find(key) < 0);
        if (rv && *rv &&
            (!strcmp(type, "BOOKMARK") || (named && (add_mod || !strcmp(type, "DELETED")))))
            must(strcmp(cu_informer_rv(inf), rv) == 0);
    }
    json_object_put(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!inf)
        init();
    if (size > 256 * 1024)
        return 0;
    static const char empty[] = "{\"kind\":\"ConfigMapList\",\"items\":[]}";
    cu_informer_feed(inf, 0, empty, sizeof empty - 1);
    must(nkeys == 0);
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (n >= 2 && s[0] == 'L' && s[1] == ' ')
            feed_list(s + 2, n - 2);
        else
            feed_watch(s, n);
        s += n + (nl ? 1 : 0);
    }
    return 0;
}
