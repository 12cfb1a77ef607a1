/*
 * cu_convert.c - `cueue convert PATH...`: manifest files (folders read
 * recursively in name order) rewritten from v1beta1 to v1beta2, printed as
 * one YAML stream.
 */
#include "cu_front.h"
#include "cu_walk.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- convert ---------------- */

typedef struct file_list {
    char **items;
    size_t n, cap;
} file_list;

static int fl_add(file_list *fl, const char *path)
{
    if (fl->n == fl->cap) {
        size_t cap = fl->cap ? fl->cap * 2 : 16;
        char **p = realloc(fl->items, cap * sizeof(*p));
        if (!p)
            return -1;
        fl->items = p;
        fl->cap = cap;
    }
    char *s = malloc(strlen(path) + 1);
    if (!s)
        return -1;
    strcpy(s, path);
    fl->items[fl->n++] = s;
    return 0;
}

static void fl_free(file_list *fl)
{
    for (size_t i = 0; i < fl->n; i++)
        free(fl->items[i]);
    free(fl->items);
}

/* cli_walk_fn: adds file to the list (ud). */
static int add_file(const char *file, void *ud) { return fl_add(ud, file) ? EXIT_INTERNAL : 0; }

static int collect_paths(file_list *fl, char **paths, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = cli_walk_manifests(paths[i], "cueue: ", MAX_DIR_DEPTH, add_file, fl);
        if (rc)
            return rc;
    }
    return 0;
}

int cu_convert_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char sbuf[3];
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(cli_help_convert, stdout);
            return 0;
        }
        return cli_usage_error("convert", "unknown option '%s'",
                               cli_bad_option(argv, optind, optopt, sbuf));
    }
    if (optind >= argc)
        return cli_usage_error("convert", "no PATH given (files or folders of manifests)");

    file_list fl = { 0 };
    int rc = collect_paths(&fl, &argv[optind], argc - optind);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_buf out;
    cu_buf_init(&out, 0);
    cu_diag d;
    cu_diag_init(&d);
    int first = 1;
    for (size_t i = 0; i < fl.n && !rc; i++) {
        cu_doc *docs = NULL;
        size_t ndocs = 0;
        cu_err err = cu_doc_parse_file(fl.items[i], &a, &docs, &ndocs, &d);
        if (err) {
            if (d.nerrors == 0)
                fprintf(stderr, "cueue: %s: %s\n", fl.items[i], cu_strerror(err));
            rc = cli_exit_code(err);
            break;
        }
        for (size_t k = 0; k < ndocs && !err; k++) {
            if (!docs[k].root)
                continue;
            cu_convert_v1beta2_diag(&a, docs[k].root, fl.items[i], &d);
            if (!first)
                err = cu_buf_puts(&out, "---\n");
            first = 0;
            if (!err)
                err = cu_node_emit_yaml(docs[k].root, &out);
            if (!err && out.len && out.data[out.len - 1] != '\n')
                err = cu_buf_puts(&out, "\n");
        }
        if (err) {
            fprintf(stderr, "cueue: %s: %s\n", fl.items[i], cu_strerror(err));
            rc = EXIT_INTERNAL;
        }
    }
    cli_print_diag(&d);
    if (!rc)
        rc = cli_write_out(&out);
    cu_diag_free(&d);
    cu_buf_free(&out);
    cu_arena_free(&a);
    fl_free(&fl);
    return rc;
}
