/*
 * main.c - the `cueue` command: subcommand dispatch (the commands live in
 * cli/, cluster/ and controller/).
 *
 * Results go to stdout, every error and warning to stderr as
 * "cueue: message", one per line. Exit codes: 0 ok, 1 internal error
 * (out of memory, failed write), 2 bad usage or bad input. A command that
 * fails prints nothing on stdout: output is built in a buffer first.
 */
#include "cu_apiserver.h"
#include "cu_cli.h"
#include "cu_controller.h"

#include <stdio.h>
#include <string.h>

#define CUEUE_VERSION "0.1.0"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(cli_help_main, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0)
        return fputs(cli_help_main, stdout) < 0 ? EXIT_INTERNAL : 0;
    if (strcmp(cmd, "--version") == 0) {
        puts("cueue " CUEUE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0)
        return cu_help_main(argc - 1, argv + 1);
    if (strcmp(cmd, "simulate") == 0)
        return cu_simulate_main(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0)
        return cu_convert_main(argc - 1, argv + 1);
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
        return cli_usage_error(NULL, "unknown option '%s'", cmd);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}
