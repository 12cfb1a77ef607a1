/*
 * fuzz_decode.h - for the controller's fuzz targets (fuzz_jobs.c,
 * fuzz_informer.c): decodes o as the informers' consumer does, into a
 * world that is thrown away; only crashes and sanitizer reports matter.
 */
#ifndef FUZZ_DECODE_H
#define FUZZ_DECODE_H

#include "cu_controller.h"

static inline void decode_as(json_object *o, const char *api_version, const char *kind)
{
    cu_world w;
    cu_world_init(&w);
    cu_diag d;
    cu_diag_init(&d);
    cu_ctrl_decode_as(&w, o, api_version, kind, &d);
    cu_diag_free(&d);
    cu_world_free(&w);
}

#endif
