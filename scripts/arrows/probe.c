/*
 * probe.c - compiled by scripts/check-arrows.sh, once per wrong arrow
 * (a module including a header of a module it may not use) with
 * PROBE_HEADER naming the header: that build must fail. Built once more
 * against the module that owns the header, it must succeed, which shows
 * the failure comes from the missing arrow and nothing else.
 */
#include PROBE_HEADER

int cu_arrow_probe(void);
int cu_arrow_probe(void) { return 0; }
