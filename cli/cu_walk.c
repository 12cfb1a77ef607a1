/*
 * cu_walk.c - the manifest files under the paths of a command line (see
 * cu_walk.h), for convert and dev.
 */
#include "cu_walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_manifest_name(const char *name)
{
    static const char *const exts[] = { ".yaml", ".yml", ".json" };
    size_t l = strlen(name);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t el = strlen(exts[i]);
        if (l > el && strcmp(name + l - el, exts[i]) == 0)
            return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(const char *dir, const char *prefix, int max_depth, int depth, cli_walk_fn fn,
                    void *ud)
{
    if (depth > max_depth) {
        fprintf(stderr, "%s%s: folders nested deeper than %d levels\n", prefix, dir, max_depth);
        return 2;
    }
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "%s%s: %s\n", prefix, dir, strerror(errno));
        return 2;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ".", ".." and hidden files, as simulate skips them */
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(names, cap * sizeof(*p));
            if (!p) {
                rc = 1;
                break;
            }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = 1;
            break;
        }
        n++;
    }
    closedir(dp);
    if (n)
        qsort(names, n, sizeof(*names), cmp_str);
    size_t dl = strlen(dir);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t len = dl + strlen(names[i]) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = 1;
            break;
        }
        snprintf(p, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (stat(p, &st) != 0) {
            fprintf(stderr, "%s%s: %s\n", prefix, p, strerror(errno));
            rc = 2;
        } else if (S_ISDIR(st.st_mode)) {
            rc = walk_dir(p, prefix, max_depth, depth + 1, fn, ud);
        } else if (S_ISREG(st.st_mode) && cli_manifest_name(names[i])) {
            rc = fn(p, ud);
        }
        free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int cli_walk_manifests(const char *path, const char *prefix, int max_depth, cli_walk_fn fn,
                       void *ud)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s%s: %s\n", prefix, path, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode))
        return fn(path, ud);
    return walk_dir(path, prefix, max_depth, 0, fn, ud);
}
