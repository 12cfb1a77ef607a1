/*
 * main.c - the `cueue` command: subcommand dispatch and option parsing.
 *
 * Results go to stdout, every error and warning to stderr as
 * "cueue: message", one per line. Exit codes: 0 ok, 1 internal error
 * (out of memory, failed write), 2 bad usage or bad input. A command that
 * fails prints nothing on stdout: output is built in a buffer first.
 */
#include "cu_apiserver.h"
#include "cu_cli.h"
#include "cu_controller.h"
#include "cu_sim.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CUEUE_VERSION "0.1.0"

enum { EXIT_INTERNAL = 1, EXIT_USAGE = 2 };

/* Folders nested deeper than this are not read (guards symlink loops). */
#define MAX_DIR_DEPTH 32

static const char help_main[] =
    "Usage: cueue COMMAND [OPTIONS] [ARGS...]\n"
    "\n"
    "Cueue is a Kueue-style admission and quota controller for Kubernetes batch\n"
    "workloads.\n"
    "\n"
    "Commands:\n"
    "  simulate    run the admission engine on manifests and show which workloads\n"
    "              are admitted, where, and why the others are pending\n"
    "  convert     rewrite kueue.x-k8s.io/v1beta1 manifests as v1beta2\n"
    "  cluster     run an embedded Kubernetes cluster (API server, simulated GPU\n"
    "              nodes, scheduler and Job controller) for trials and tests\n"
    "  controller  run the admission controller against a Kubernetes API server\n"
    "  explain     why a Workload or Job is pending (or where it is admitted): the\n"
    "              queue chain, its position, quota numbers per flavor, what would\n"
    "              unblock it\n"
    "  queue       queue visibility: 'queue list' (the queues with their counts),\n"
    "              'queue pending CQ|NS/LQ' (pending workloads in admission order)\n"
    "  dev         the main job on the embedded default: a cluster with sample\n"
    "              GPU nodes, the CRDs and samples, the controller, and a live\n"
    "              log of what is admitted, started, finished and why the rest\n"
    "              waits\n"
    "  help [CMD]  show this help, or the help of CMD\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this help\n"
    "      --version  print the version and exit\n"
    "\n"
    "Run 'cueue COMMAND --help' for the options of a command.\n"
    "\n"
    "Exit codes: 0 success, 1 internal error, 2 bad usage or bad input.\n";

static const char help_simulate[] =
    "Usage: cueue simulate [OPTIONS] PATH...\n"
    "\n"
    "Loads Kueue manifests, validates them, runs the admission engine until\n"
    "nothing changes and prints the result. Nothing is sent to a cluster.\n"
    "\n"
    "Inputs:\n"
    "  Each PATH is a file or a folder. Folders are read recursively in name\n"
    "  order, taking *.yaml, *.yml and *.json files (hidden ones are skipped).\n"
    "  A file holds one or more YAML documents (separated by \"---\") or JSON;\n"
    "  \"List\" objects are expanded. Kinds read:\n"
    "    kueue.x-k8s.io (v1beta2; v1beta1 is converted on read): ResourceFlavor,\n"
    "      Cohort, ClusterQueue, LocalQueue, Workload, WorkloadPriorityClass\n"
    "    batch/v1 Job with the kueue.x-k8s.io/queue-name label (it becomes a\n"
    "      Workload, as Kueue's job integration creates one)\n"
    "    v1 Namespace (labels, for ClusterQueue namespaceSelectors)\n"
    "    scheduling.k8s.io PriorityClass, config.kueue.x-k8s.io Configuration\n"
    "      (at most one; see --config)\n"
    "  Other kinds are skipped with a warning. Workloads that already hold quota\n"
    "  (status.admission and QuotaReserved=True) count from the start.\n"
    "\n"
    "Options:\n"
    "  -o, --output FORMAT       output format (default table):\n"
    "                              table  per ClusterQueue: quota, usage and\n"
    "                                     borrowing per flavor, the admitted\n"
    "                                     workloads and the pending ones with\n"
    "                                     the reason they wait (and who\n"
    "                                     preempted them); with fair sharing,\n"
    "                                     its weighted share\n"
    "                              json   {\"workloads\": [...], \"clusterQueues\":\n"
    "                                     [...]}, a stable shape for scripts;\n"
    "                                     with fair sharing, \"weightedShare\" on\n"
    "                                     each ClusterQueue and \"cohorts\": [...]\n"
    "                              yaml   the ClusterQueues, Cohorts (with fair\n"
    "                                     sharing), LocalQueues and Workloads\n"
    "                                     with the status the controller would\n"
    "                                     write (a YAML stream)\n"
    "      --config FILE         Kueue's controller Configuration file (the\n"
    "                            config.kueue.x-k8s.io v1beta2 or v1beta1\n"
    "                            Configuration Kueue's manager reads); its\n"
    "                            fairSharing (preemptionStrategies) and\n"
    "                            admissionFairSharing settings are used.\n"
    "                            Without --config, a Configuration among the\n"
    "                            inputs is used; with it, those are ignored\n"
    "                            with a warning\n"
    "      --fair-sharing        turn Kueue's fair sharing on (ordering by\n"
    "                            weighted share and fair-sharing preemption),\n"
    "                            as a fairSharing block in the Configuration\n"
    "                            does; the Configuration's preemptionStrategies\n"
    "                            still apply\n"
    "      --one-head-per-cycle  run Kueue's exact loop: one head per\n"
    "                            ClusterQueue per scheduling cycle (same\n"
    "                            result, more cycles)\n"
    "      --max-cycles N        stop after N scheduling cycles (default\n"
    "                            100000); a warning says if work was left\n"
    "      --now TIME            the simulated current time, RFC 3339 (default\n"
    "                            2026-01-01T00:00:00Z); used for admission\n"
    "                            and condition timestamps\n"
    "      --explain [NS/]NAME   after the run, explain Workload NS/NAME (or\n"
    "                            the Workload of Job NS/NAME; NS defaults to\n"
    "                            \"default\") as 'cueue explain' does on a\n"
    "                            cluster: why it is pending or where it is\n"
    "                            admitted, the queue chain, its position,\n"
    "                            what it requests, for each flavor why it\n"
    "                            did not fit (requested, free, borrowable,\n"
    "                            limit), what preemption could do and what\n"
    "                            would unblock it. Repeatable: explanations\n"
    "                            in the order given. They replace the normal\n"
    "                            output; with an explicit -o table they\n"
    "                            follow the table; -o json prints a JSON\n"
    "                            array of the documents 'cueue explain -o\n"
    "                            json' prints (plus \"job\" when named by a\n"
    "                            Job), -o yaml a YAML stream of them\n"
    "  -h, --help                show this help\n"
    "\n"
    "The result goes to stdout; errors and warnings go to stderr, one per line,\n"
    "prefixed \"cueue: \".\n"
    "\n"
    "Exit codes:\n"
    "  0  success (warnings may have been printed)\n"
    "  1  internal error (out of memory, failed write)\n"
    "  2  bad usage or bad input: a syntax error (FILE:LINE:COLUMN: message),\n"
    "     invalid objects (every problem is listed and nothing is printed on\n"
    "     stdout), an unreadable PATH or an --explain name that no Workload\n"
    "     or Job among the inputs has\n";

static const char help_convert[] =
    "Usage: cueue convert PATH...\n"
    "\n"
    "Rewrites kueue.x-k8s.io/v1beta1 objects as v1beta2 and prints every\n"
    "document as one YAML stream on stdout (\"---\" between documents):\n"
    "  ClusterQueue spec.cohort -> spec.cohortName\n"
    "  flavorFungibility Borrow / Preempt -> MayStopSearch\n"
    "  ClusterQueue spec.admissionChecks -> spec.admissionChecksStrategy\n"
    "  Workload priorityClassName/priorityClassSource -> priorityClassRef\n"
    "  Cohort spec.parent -> spec.parentName\n"
    "Objects of other API groups and objects already at v1beta2 are printed\n"
    "unchanged. Comments, anchors and the original formatting are lost, and\n"
    "JSON inputs are printed as YAML.\n"
    "\n"
    "Inputs: files or folders, as for 'cueue simulate' (folders are read\n"
    "recursively in name order, taking *.yaml, *.yml and *.json).\n"
    "\n"
    "Options:\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0 success, 1 internal error, 2 bad usage, a syntax error\n"
    "(FILE:LINE:COLUMN: message) or an unreadable PATH; nothing is printed on\n"
    "stdout then.\n";

/* ---------------- helpers ---------------- */

static int usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "cueue: MESSAGE" and a hint to stderr; returns EXIT_USAGE. */
static int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cueue: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *help = !cmd ? help_main
                       : strcmp(cmd, "simulate") == 0 ? help_simulate : help_convert;
    /* the help's first line is the usage synopsis */
    fprintf(stderr, "\n%.*s\n", (int)strcspn(help, "\n"), help);
    if (cmd)
        fprintf(stderr, "Try 'cueue %s --help'.\n", cmd);
    else
        fputs("Try 'cueue --help'.\n", stderr);
    return EXIT_USAGE;
}

static void print_diag(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "cueue: %s\n", d->msgs[i]);
    if (d->dropped)
        fprintf(stderr, "cueue: ... and %zu more messages not shown\n", d->dropped);
}

/* Maps an error to an exit code: bad input is 2, the rest internal. */
static int exit_code(cu_err err)
{
    switch (err) {
    case CU_OK:
        return 0;
    case CU_EINVAL:
    case CU_ESYNTAX:
    case CU_EIO:
    case CU_ENOTFOUND:
    case CU_EOVERFLOW:
        return EXIT_USAGE;
    default:
        return EXIT_INTERNAL;
    }
}

/* Writes the whole buffer to stdout; returns 0 or EXIT_INTERNAL. */
static int write_out(const cu_buf *out)
{
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len) {
        fprintf(stderr, "cueue: writing the output failed: %s\n", strerror(errno));
        return EXIT_INTERNAL;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "cueue: writing the output failed: %s\n", strerror(errno));
        return EXIT_INTERNAL;
    }
    return 0;
}

/* The option as the user wrote it, for messages about it: "-x" built in
 * buf (3 bytes) for a short option, else the argument itself. */
static const char *bad_option(char **argv, int optind_now, int optopt_now, char *buf)
{
    if (optopt_now > 0 && optopt_now < 256) {
        buf[0] = '-';
        buf[1] = (char)optopt_now;
        buf[2] = '\0';
        return buf;
    }
    return argv[optind_now - 1];
}

/* ---------------- simulate ---------------- */

/* Parses the options of `cueue simulate` into so; the --explain names go
 * to explain (room for argc pointers, borrowed from argv). Returns -1 to
 * go on, else the exit code (help printed, or a usage error). */
static int simulate_parse(int argc, char **argv, cu_sim_opts *so_out, const char **explain)
{
    enum { OPT_ONE_HEAD = 256, OPT_MAX_CYCLES, OPT_NOW, OPT_CONFIG, OPT_FAIR_SHARING,
           OPT_EXPLAIN };
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "one-head-per-cycle", no_argument, NULL, OPT_ONE_HEAD },
        { "max-cycles", required_argument, NULL, OPT_MAX_CYCLES },
        { "now", required_argument, NULL, OPT_NOW },
        { "config", required_argument, NULL, OPT_CONFIG },
        { "fair-sharing", no_argument, NULL, OPT_FAIR_SHARING },
        { "explain", required_argument, NULL, OPT_EXPLAIN },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char sbuf[3];
    cu_sim_opts so = { 0 };
    so.format = CU_SIM_TABLE;
    so.explain = explain;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(help_simulate, stdout);
            return 0;
        case 'o':
            so.explain_after_table = 0;
            if (strcmp(optarg, "table") == 0) {
                so.format = CU_SIM_TABLE;
                so.explain_after_table = 1;
            } else if (strcmp(optarg, "json") == 0)
                so.format = CU_SIM_JSON;
            else if (strcmp(optarg, "yaml") == 0)
                so.format = CU_SIM_YAML;
            else
                return usage_error("simulate",
                                   "unknown output format '%s' (use table, json or yaml)",
                                   optarg);
            break;
        case OPT_ONE_HEAD:
            so.one_head_per_cycle = 1;
            break;
        case OPT_MAX_CYCLES: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > INT_MAX)
                return usage_error("simulate",
                                   "--max-cycles needs a positive integer, got '%s'", optarg);
            so.max_cycles = (int)v;
            break;
        }
        case OPT_NOW:
            if (cu_time_parse(optarg, &so.now_ms) != CU_OK)
                return usage_error("simulate",
                                   "--now needs an RFC 3339 time like "
                                   "2026-01-01T00:00:00Z, got '%s'", optarg);
            if (so.now_ms <= 0)
                return usage_error("simulate", "--now must be after 1970, got '%s'", optarg);
            break;
        case OPT_CONFIG:
            if (so.config_path)
                return usage_error("simulate", "--config given twice ('%s' and '%s')",
                                   so.config_path, optarg);
            if (!*optarg)
                return usage_error("simulate", "--config needs a FILE");
            so.config_path = optarg;
            break;
        case OPT_FAIR_SHARING:
            so.fair_sharing = 1;
            break;
        case OPT_EXPLAIN:
            if (!*optarg)
                return usage_error("simulate", "--explain needs NAMESPACE/NAME of a Workload "
                                               "or a Job");
            explain[so.nexplain++] = optarg;
            break;
        case ':':
            return usage_error("simulate", "option '%s' needs a value",
                               bad_option(argv, optind, 0, sbuf));
        default:
            return usage_error("simulate", "unknown option '%s'",
                               bad_option(argv, optind, optopt, sbuf));
        }
    }
    if (optind >= argc)
        return usage_error("simulate", "no PATH given (files or folders of manifests)");
    *so_out = so;
    return -1;
}

static int cmd_simulate(int argc, char **argv)
{
    cu_sim_opts so;
    /* the --explain names: argv pointers, at most one per argument */
    const char **explain = calloc((size_t)argc + 1, sizeof(*explain));
    if (!explain) {
        fputs("cueue: out of memory\n", stderr);
        return EXIT_INTERNAL;
    }
    int rc = simulate_parse(argc, argv, &so, explain);
    if (rc >= 0) {
        free(explain);
        return rc;
    }
    const char *const *paths = (const char *const *)&argv[optind];
    size_t npaths = (size_t)(argc - optind);
    cu_buf out;
    cu_buf_init(&out, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_sim_run(paths, npaths, &so, &out, &d);
    print_diag(&d);
    if (err) {
        if (d.nerrors == 0)
            fprintf(stderr, "cueue: simulate failed: %s\n", cu_strerror(err));
        rc = exit_code(err);
    } else {
        rc = write_out(&out);
    }
    cu_diag_free(&d);
    cu_buf_free(&out);
    free(explain);
    return rc;
}

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

static int has_manifest_ext(const char *name)
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

/* Adds the manifest files under dir, recursively in name order. Returns
 * 0, EXIT_USAGE (unreadable) or EXIT_INTERNAL (out of memory). */
static int collect_dir(file_list *fl, const char *dir, int depth)
{
    if (depth > MAX_DIR_DEPTH) {
        fprintf(stderr, "cueue: %s: folders nested deeper than %d levels\n", dir,
                MAX_DIR_DEPTH);
        return EXIT_USAGE;
    }
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "cueue: %s: %s\n", dir, strerror(errno));
        return EXIT_USAGE;
    }
    file_list names = { 0 };
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ".", ".." and hidden files, as simulate skips them */
        if (fl_add(&names, de->d_name)) {
            rc = EXIT_INTERNAL;
            break;
        }
    }
    closedir(dp);
    if (names.n)
        qsort(names.items, names.n, sizeof(names.items[0]), cmp_str);
    for (size_t i = 0; i < names.n && !rc; i++) {
        size_t len = strlen(dir) + strlen(names.items[i]) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = EXIT_INTERNAL;
            break;
        }
        size_t dl = strlen(dir);
        snprintf(p, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names.items[i]);
        struct stat st;
        if (stat(p, &st) != 0) {
            fprintf(stderr, "cueue: %s: %s\n", p, strerror(errno));
            rc = EXIT_USAGE;
        } else if (S_ISDIR(st.st_mode)) {
            rc = collect_dir(fl, p, depth + 1);
        } else if (S_ISREG(st.st_mode) && has_manifest_ext(names.items[i])) {
            if (fl_add(fl, p))
                rc = EXIT_INTERNAL;
        }
        free(p);
    }
    fl_free(&names);
    return rc;
}

static int collect_paths(file_list *fl, char **paths, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "cueue: %s: %s\n", paths[i], strerror(errno));
            return EXIT_USAGE;
        }
        int rc = S_ISDIR(st.st_mode) ? collect_dir(fl, paths[i], 0)
                                     : (fl_add(fl, paths[i]) ? EXIT_INTERNAL : 0);
        if (rc)
            return rc;
    }
    return 0;
}

static int cmd_convert(int argc, char **argv)
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
            fputs(help_convert, stdout);
            return 0;
        }
        return usage_error("convert", "unknown option '%s'", bad_option(argv, optind, optopt, sbuf));
    }
    if (optind >= argc)
        return usage_error("convert", "no PATH given (files or folders of manifests)");

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
            rc = exit_code(err);
            break;
        }
        for (size_t k = 0; k < ndocs && !err; k++) {
            if (!docs[k].root)
                continue;
            cu_convert_v1beta2(&a, docs[k].root);
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
    print_diag(&d);
    if (!rc)
        rc = write_out(&out);
    cu_diag_free(&d);
    cu_buf_free(&out);
    cu_arena_free(&a);
    fl_free(&fl);
    return rc;
}

/* ---------------- dispatch ---------------- */

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        fputs(help_main, stdout);
        return 0;
    }
    if (argc > 2)
        return usage_error(NULL, "help takes at most one COMMAND, got extra '%s'", argv[2]);
    if (strcmp(argv[1], "simulate") == 0)
        fputs(help_simulate, stdout);
    else if (strcmp(argv[1], "convert") == 0)
        fputs(help_convert, stdout);
    else if (strcmp(argv[1], "help") == 0)
        fputs(help_main, stdout);
    else if (strcmp(argv[1], "cluster") == 0)
        fputs(cu_cluster_help(), stdout);
    else if (strcmp(argv[1], "controller") == 0)
        return cu_controller_main(2, (char *[]){ "controller", "--help", NULL });
    else if (strcmp(argv[1], "dev") == 0)
        return cu_dev_main(2, (char *[]){ "dev", "--help", NULL });
    else if (strcmp(argv[1], "explain") == 0)
        return cu_explain_main(2, (char *[]){ "explain", "--help", NULL });
    else if (strcmp(argv[1], "queue") == 0)
        return cu_queue_main(2, (char *[]){ "queue", "--help", NULL });
    else
        return usage_error(NULL, "unknown command '%s'", argv[1]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(help_main, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0)
        return fputs(help_main, stdout) < 0 ? EXIT_INTERNAL : 0;
    if (strcmp(cmd, "--version") == 0) {
        puts("cueue " CUEUE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (strcmp(cmd, "simulate") == 0)
        return cmd_simulate(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0)
        return cmd_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "cluster") == 0)
        return cu_cluster_main(argc - 1, argv + 1);
    if (strcmp(cmd, "controller") == 0)
        return cu_controller_main(argc - 1, argv + 1);
    if (strcmp(cmd, "dev") == 0)
        return cu_dev_main(argc - 1, argv + 1);
    if (strcmp(cmd, "explain") == 0)
        return cu_explain_main(argc - 1, argv + 1);
    if (strcmp(cmd, "queue") == 0)
        return cu_queue_main(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return usage_error(NULL, "unknown option '%s'", cmd);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
