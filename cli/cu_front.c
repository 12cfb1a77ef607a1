/*
 * cu_front.c - the help texts of `cueue`, `cueue simulate` and `cueue
 * convert`, `cueue help [CMD]`, and what the fronts of simulate and convert
 * share: usage errors, diagnostics on stderr, exit codes, the output.
 */
#include "cu_front.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

const char cli_help_main[] =
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

const char cli_help_simulate[] =
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
    "      Cohort, ClusterQueue, LocalQueue, Workload, WorkloadPriorityClass,\n"
    "      AdmissionCheck, Topology\n"
    "    batch/v1 Job with the kueue.x-k8s.io/queue-name label (it becomes a\n"
    "      Workload, as Kueue's job integration creates one); so does a\n"
    "      jobset.x-k8s.io/v1alpha2 JobSet (a pod set per replicated Job)\n"
    "    v1 Namespace (labels, for ClusterQueue namespaceSelectors)\n"
    "    v1 Node and Pod: node capacity for Topology-Aware Scheduling, the\n"
    "      pods bound to a node counting against it (a Pod with the\n"
    "      queue-name label becomes its single pod's Workload); admitted TAS\n"
    "      pod sets show where their pods go\n"
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

const char cli_help_convert[] =
    "Usage: cueue convert PATH...\n"
    "\n"
    "Rewrites kueue.x-k8s.io/v1beta1 objects as v1beta2 and prints every\n"
    "document as one YAML stream on stdout (\"---\" between documents):\n"
    "  ClusterQueue spec.cohort -> spec.cohortName\n"
    "  flavorFungibility Borrow / Preempt -> MayStopSearch\n"
    "  ClusterQueue spec.admissionChecks -> spec.admissionChecksStrategy\n"
    "  Workload priorityClassName/priorityClassSource -> priorityClassRef\n"
    "  Cohort spec.parent -> spec.parentName\n"
    "  LocalQueue status.flavorUsage -> status.flavorsUsage\n"
    "  Workload topology assignment domains -> slices\n"
    "  v1beta1-only fields (e.g. AdmissionCheck retryDelayMinutes) -> dropped\n"
    "The conversion webhook uses the same rules (docs/conversion.md lists\n"
    "them all). Objects of other API groups and objects already at v1beta2\n"
    "are printed unchanged. Kueue objects in another version (v1alpha1) are\n"
    "printed unchanged with a warning. Comments, anchors and the original\n"
    "formatting are lost, and JSON inputs are printed as YAML.\n"
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

int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "cueue: MESSAGE" and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cueue: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *help = !cmd                           ? cli_help_main
                       : strcmp(cmd, "simulate") == 0 ? cli_help_simulate
                                                      : cli_help_convert;
    /* the help's first line is the usage synopsis */
    fprintf(stderr, "\n%.*s\n", (int)strcspn(help, "\n"), help);
    if (cmd)
        fprintf(stderr, "Try 'cueue %s --help'.\n", cmd);
    else
        fputs("Try 'cueue --help'.\n", stderr);
    return EXIT_USAGE;
}

void cli_print_diag(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "cueue: %s\n", d->msgs[i]);
    if (d->dropped)
        fprintf(stderr, "cueue: ... and %zu more messages not shown\n", d->dropped);
}

/* Maps an error to an exit code: bad input is 2, the rest internal. */
int cli_exit_code(cu_err err)
{
    switch (err) {
    case CU_OK: return 0;
    case CU_EINVAL:
    case CU_ESYNTAX:
    case CU_EIO:
    case CU_ENOTFOUND:
    case CU_EOVERFLOW: return EXIT_USAGE;
    default: return EXIT_INTERNAL;
    }
}

/* Writes the whole buffer to stdout; returns 0 or EXIT_INTERNAL. */
int cli_write_out(const cu_buf *out)
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
const char *cli_bad_option(char **argv, int optind_now, int optopt_now, char *buf)
{
    if (optopt_now > 0 && optopt_now < 256) {
        buf[0] = '-';
        buf[1] = (char)optopt_now;
        buf[2] = '\0';
        return buf;
    }
    return argv[optind_now - 1];
}

/* ---------------- dispatch ---------------- */

int cu_help_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(cli_help_main, stdout);
        return 0;
    }
    if (argc > 2)
        return cli_usage_error(NULL, "help takes at most one COMMAND, got extra '%s'", argv[2]);
    if (strcmp(argv[1], "simulate") == 0)
        fputs(cli_help_simulate, stdout);
    else if (strcmp(argv[1], "convert") == 0)
        fputs(cli_help_convert, stdout);
    else if (strcmp(argv[1], "help") == 0)
        fputs(cli_help_main, stdout);
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
        return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
    return 0;
}
