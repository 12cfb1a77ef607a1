/*
 * cu_jobset.c - the JobSet integration (Kueue's "jobset.x-k8s.io/jobset" framework).
 * Not written yet: its objects are recorded and left alone.
 */
#include "cu_ctrl_int.h"

const ctrl_integ ctrl_integ_jobset = {
    .r = R_JOBSET,
};
