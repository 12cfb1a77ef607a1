/*
 * cu_walk.h - the manifest files named on a command line, as `cueue
 * convert` and `cueue dev` read them: a file as it is, a folder
 * recursively in name order, taking *.yaml, *.yml and *.json and skipping
 * hidden entries. (cu_world_load in api/ walks folders the same way for
 * simulate, with its messages in a cu_diag.)
 */
#ifndef CU_WALK_H
#define CU_WALK_H

/* Called for each file, in order; a nonzero return stops the walk and is
 * returned by cli_walk_manifests. file is borrowed for the call. */
typedef int (*cli_walk_fn)(const char *file, void *ud);

/* 1 when name ends in .yaml, .yml or .json (and has more before it). */
int cli_manifest_name(const char *name);

/* Walks path, calling fn for each file. Problems are printed on stderr
 * as PREFIX "PATH: message". Folders deeper than max_depth below path are
 * refused. Returns 0, 2 (a path unreadable or nested too deep), 1 (out of
 * memory) or fn's nonzero return. */
int cli_walk_manifests(const char *path, const char *prefix, int max_depth, cli_walk_fn fn,
                       void *ud);

#endif
