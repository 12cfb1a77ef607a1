/*
 * cu_cli.h - the command fronts: simulate, convert, help, dev (cu_dev.c),
 * and the read-only troubleshooting commands: `cueue explain`
 * (why one Workload or Job is pending) and `cueue queue` (the pending
 * workloads of a queue in admission order, and the queues with their
 * counts).
 *
 * Both ask the running controller first, at the read-only endpoints of its
 * metrics server (GET /debug/explain, GET /debug/pending; found with
 * --controller URL, else $CUEUE_CONTROLLER, else http://127.0.0.1:8080).
 * When no controller answers (connection refused, 2 s timeout, or not
 * ready), they read the API objects with the kubeconfig (as `cueue
 * controller` does), run the admission engine on them and answer from it,
 * saying so on the first line of the output.
 */
#ifndef CU_CLI_H
#define CU_CLI_H

/* `cueue explain [OPTIONS] [NAMESPACE/]NAME`: argv[0] is "explain".
 * Prints the explanation (text, or the JSON document with -o json) on
 * stdout. Returns the exit code: 0 ok, 1 no such Workload or Job, or a
 * runtime failure (API server unreachable, bad answer), 2 bad usage. */
int cu_explain_main(int argc, char **argv);

/* `cueue queue list|pending [OPTIONS] [CQ|NAMESPACE/LQ]`: argv[0] is
 * "queue". Same sources and exit codes as cu_explain_main. */
int cu_queue_main(int argc, char **argv);

/* ---- the fronts of simulate, convert and help (cu_front.c) ---- */

enum { EXIT_INTERNAL = 1, EXIT_USAGE = 2 };

/* The help of `cueue` (static text). */
extern const char cli_help_main[];

/* Prints "cueue: MESSAGE" and a hint to stderr; returns EXIT_USAGE. cmd:
 * "simulate", "convert", or NULL for the main usage. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `cueue dev [OPTIONS]`: argv[0] is "dev" (cu_dev.c; also declared in
 * cu_controller.h until that declaration is dropped). Returns the exit
 * code. */
int cu_dev_main(int argc, char **argv);

/* `cueue help [CMD]`: argv[0] is "help". Returns the exit code. */
int cu_help_main(int argc, char **argv);

/* `cueue simulate [OPTIONS] PATH...`: argv[0] is "simulate". Returns the
 * exit code: 0 ok, 1 internal error, 2 bad usage or bad input. */
int cu_simulate_main(int argc, char **argv);

/* `cueue convert PATH...`: argv[0] is "convert". Exit codes as simulate. */
int cu_convert_main(int argc, char **argv);

#endif
