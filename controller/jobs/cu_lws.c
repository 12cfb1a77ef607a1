/*
 * cu_lws.c - the LeaderWorkerSet integration (Kueue's "leaderworkerset.x-k8s.io/leaderworkerset" framework).
 * Not written yet: its objects are recorded and left alone.
 */
#include "cu_ctrl_int.h"

const ctrl_integ ctrl_integ_lws = {
    .r = R_LWS,
};
