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

extern const char cli_help_simulate[];
extern const char cli_help_convert[];

void cli_print_diag(const cu_diag *d);
int cli_exit_code(cu_err err);
int cli_write_out(const cu_buf *out);
const char *cli_bad_option(char **argv, int optind_now, int optopt_now, char *buf);

#endif
