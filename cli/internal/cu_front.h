/*
 * cu_front.h - what the fronts of `cueue simulate`, `cueue convert` and
 * `cueue help` share: the help texts, usage errors, diagnostics, exit
 * codes and the output writer.
 */
#ifndef CU_FRONT_H
#define CU_FRONT_H

#include "cu_apiserver.h"
#include "cu_cli.h"
#include "cu_controller.h"
#include "cu_sim.h"

/* Folders nested deeper than this are not read (guards symlink loops). */
#define MAX_DIR_DEPTH 32

/* The help texts (static). */
extern const char cli_help_simulate[];
extern const char cli_help_convert[];

/* Prints every message of d (borrowed) to stderr as "cueue: message". */
void cli_print_diag(const cu_diag *d);

/* Maps an error to an exit code: bad input is EXIT_USAGE, the rest
 * EXIT_INTERNAL, CU_OK 0. */
int cli_exit_code(cu_err err);

/* Writes out to stdout and flushes; returns 0 or EXIT_INTERNAL. */
int cli_write_out(const cu_buf *out);

/* The option as the user wrote it: "-x" built in buf (3 bytes) for a
 * short option optopt_now, else argv[optind_now - 1]. Borrowed. */
const char *cli_bad_option(char **argv, int optind_now, int optopt_now, char *buf);

#endif
