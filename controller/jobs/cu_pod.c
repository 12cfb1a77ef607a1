/*
 * cu_pod.c - the Pod integration (Kueue's "pod" framework).
 * Not written yet: its objects are recorded and left alone.
 */
#include "cu_ctrl_int.h"

const ctrl_integ ctrl_integ_pod = {
    .r = R_POD,
};
