/*
 * cu_dev_int.h - the parts of `cueue dev` (cu_dev.c) that need no process:
 * reading the manifests, the API path of an object, and the wording of
 * the change lines. For cu_dev.c and its test only.
 */
#ifndef CU_DEV_INT_H
#define CU_DEV_INT_H

#include <json-c/json.h>
#include <stddef.h>

typedef struct dev_obj {
    json_object *obj; /* owned */
    char *where;      /* "FILE:LINE", owned */
} dev_obj;

typedef struct dev_objs {
    dev_obj *items;
    size_t n, cap;
} dev_objs;

/* Frees every object of l (owned) and empties it. */
void cli_dev_objs_free(dev_objs *l);

/* Appends the objects of path to l: a file (YAML documents or JSON; List
 * items expanded), or a folder read recursively in name order, taking
 * *.yaml, *.yml and *.json and skipping hidden entries. Returns 0, 2
 * (unreadable or malformed; the message is printed on stderr) or 1 (out
 * of memory). */
int cli_dev_load_path(dev_objs *l, const char *path);

/* Writes the collection path of obj (borrowed) into out: /api/v1/... or
 * /apis/GROUP/VERSION/..., namespaced as the kind is (known kinds) or as
 * metadata.namespace says. Returns 0, or -1 without apiVersion or kind. */
int cli_dev_collection_path(json_object *obj, char *out, size_t n);

/* "flavors a, b" of a Workload's admission (distinct names in order, or
 * "none"), plus "; N of M pods" when fewer pods were admitted than asked. */
void cli_dev_describe_admission(json_object *wl, char *out, size_t n);

/* How a Workload is named in the change lines: "NS/JOB" when a Job owns
 * it (*job_owned = 1), else "Workload NS/NAME". */
void cli_dev_wl_display(json_object *wl, char *out, size_t n, int *job_owned);

#endif
