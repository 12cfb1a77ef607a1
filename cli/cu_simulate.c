/*
 * cu_simulate.c - the front of `cueue simulate`: options into cu_sim_opts,
 * cu_sim_run, diagnostics on stderr, the result on stdout.
 */
#include "cu_front.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- simulate ---------------- */

/* Parses the options of `cueue simulate` into so; the --explain names go
 * to explain (room for argc pointers, borrowed from argv). Returns -1 to
 * go on, else the exit code (help printed, or a usage error). */
static int simulate_parse(int argc, char **argv, cu_sim_opts *so_out, const char **explain)
{
    enum { OPT_ONE_HEAD = 256, OPT_MAX_CYCLES, OPT_NOW, OPT_CONFIG, OPT_FAIR_SHARING, OPT_EXPLAIN };
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
        case 'h': fputs(cli_help_simulate, stdout); return 0;
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
                return cli_usage_error(
                    "simulate", "unknown output format '%s' (use table, json or yaml)", optarg);
            break;
        case OPT_ONE_HEAD: so.one_head_per_cycle = 1; break;
        case OPT_MAX_CYCLES: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > INT_MAX)
                return cli_usage_error("simulate",
                                       "--max-cycles needs a positive integer, got '%s'", optarg);
            so.max_cycles = (int)v;
            break;
        }
        case OPT_NOW:
            if (cu_time_parse(optarg, &so.now_ms) != CU_OK)
                return cli_usage_error("simulate",
                                       "--now needs an RFC 3339 time like "
                                       "2026-01-01T00:00:00Z, got '%s'",
                                       optarg);
            if (so.now_ms <= 0)
                return cli_usage_error("simulate", "--now must be after 1970, got '%s'", optarg);
            break;
        case OPT_CONFIG:
            if (so.config_path)
                return cli_usage_error("simulate", "--config given twice ('%s' and '%s')",
                                       so.config_path, optarg);
            if (!*optarg)
                return cli_usage_error("simulate", "--config needs a FILE");
            so.config_path = optarg;
            break;
        case OPT_FAIR_SHARING: so.fair_sharing = 1; break;
        case OPT_EXPLAIN:
            if (!*optarg)
                return cli_usage_error("simulate", "--explain needs NAMESPACE/NAME of a Workload "
                                                   "or a Job");
            explain[so.nexplain++] = optarg;
            break;
        case ':':
            return cli_usage_error("simulate", "option '%s' needs a value",
                                   cli_bad_option(argv, optind, 0, sbuf));
        default:
            return cli_usage_error("simulate", "unknown option '%s'",
                                   cli_bad_option(argv, optind, optopt, sbuf));
        }
    }
    if (optind >= argc)
        return cli_usage_error("simulate", "no PATH given (files or folders of manifests)");
    *so_out = so;
    return -1;
}

int cu_simulate_main(int argc, char **argv)
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
    cli_print_diag(&d);
    if (err) {
        if (d.nerrors == 0)
            fprintf(stderr, "cueue: simulate failed: %s\n", cu_strerror(err));
        rc = cli_exit_code(err);
    } else {
        rc = cli_write_out(&out);
    }
    cu_diag_free(&d);
    cu_buf_free(&out);
    free(explain);
    return rc;
}
