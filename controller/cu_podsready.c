/*
 * cu_podsready.c - waitForPodsReady decisions (see cu_podsready.h for the
 * rules and where they come from). Pure functions: no I/O, no clock.
 */
#include "cu_podsready.h"

#include <stdio.h>
#include <string.h>

void cu_pr_config_default(cu_pr_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->enable = 1;
    cfg->timeout_ms = 30LL * 60 * 1000;
    cfg->recovery_timeout_ms = cfg->timeout_ms;
    cfg->block_admission = 0;
    cfg->requeue_at_creation = 0;
    cfg->backoff_limit = -1;
    cfg->backoff_base_ms = 60LL * 1000;
    cfg->backoff_max_ms = 3600LL * 1000;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* splitmix64: one well-mixed 64-bit value per seed. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int64_t cu_pr_backoff_ms(const cu_pr_config *cfg, int32_t n, uint64_t jitter_seed)
{
    int64_t base = cfg->backoff_base_ms > 0 ? cfg->backoff_base_ms : 0;
    int64_t max = cfg->backoff_max_ms > 0 ? cfg->backoff_max_ms : 0;
    if (n < 1)
        n = 1;
    int64_t d = base;
    for (int32_t i = 1; i < n && d < max; i++)
        d = d > INT64_MAX / 2 ? INT64_MAX : d * 2;
    if (d >= max)
        return max;
    /* r in [0, 1) from the top 53 bits */
    double r = (double)(mix64(jitter_seed) >> 11) * (1.0 / 9007199254740992.0);
    int64_t j = (int64_t)((double)d * CU_PR_BACKOFF_JITTER * r);
    int64_t v = sat_add(d, j);
    return v < max ? v : max;
}

int cu_pr_job_pods_ready(int32_t pod_count, int64_t ready, int64_t succeeded)
{
    if (ready < 0)
        ready = 0;
    if (succeeded < 0)
        succeeded = 0;
    return sat_add(ready, succeeded) >= (int64_t)pod_count;
}

static int reason_is(const cu_pr_wl *w, const char *reason)
{
    return w->has_ready_cond && w->ready_reason && strcmp(w->ready_reason, reason) == 0;
}

/* The PodsReady condition the Job reconciler would write now. */
static void desired_condition(const cu_pr_wl *w, int *ready, const char **reason,
                              const char **message)
{
    *ready = 0;
    *reason = CU_PR_REASON_WAIT_START;
    *message = CU_PR_MSG_NOT_READY;
    if (!w->admitted)
        return;
    if (w->job_pods_ready) {
        *ready = 1;
        *message = CU_PR_MSG_READY;
        *reason = reason_is(w, CU_PR_REASON_WAIT_RECOVERY) || reason_is(w, CU_PR_REASON_RECOVERED)
                      ? CU_PR_REASON_RECOVERED
                      : CU_PR_REASON_STARTED;
        return;
    }
    if (w->has_ready_cond && (w->ready || reason_is(w, CU_PR_REASON_WAIT_RECOVERY))) {
        *reason = CU_PR_REASON_WAIT_RECOVERY;
        *message = CU_PR_MSG_RECOVERY;
    }
}

cu_pr_action cu_pr_decide(const cu_pr_config *cfg, const cu_pr_wl *w, int64_t now_ms,
                          uint64_t jitter_seed)
{
    cu_pr_action a;
    memset(&a, 0, sizeof(a));
    a.kind = CU_PR_NOTHING;
    a.recheck_at_ms = -1;
    if (!cfg || !w || !cfg->enable)
        return a;

    int d_ready;
    const char *d_reason, *d_message;
    desired_condition(w, &d_ready, &d_reason, &d_message);
    int cond_differs =
        !w->has_ready_cond || (w->ready ? 1 : 0) != d_ready || !reason_is(w, d_reason);

    /* The timers run on the stored condition (Kueue's workload reconciler);
     * pods that are ready now win over an expired timer. */
    if (w->admitted && !w->inactive && !w->evicted && !w->job_pods_ready) {
        const char *cause = NULL;
        int64_t deadline = 0;
        if (!w->has_ready_cond || (!w->ready && (reason_is(w, CU_PR_REASON_WAIT_START) ||
                                                 reason_is(w, CU_PR_REASON_LEGACY)))) {
            cause = CU_PR_REASON_WAIT_START;
            deadline = sat_add(w->admitted_ltt_ms, cfg->timeout_ms);
        } else if (!w->ready && reason_is(w, CU_PR_REASON_WAIT_RECOVERY) &&
                   cfg->recovery_timeout_ms >= 0) {
            cause = CU_PR_REASON_WAIT_RECOVERY;
            deadline = sat_add(w->ready_ltt_ms, cfg->recovery_timeout_ms);
        }
        if (cause && now_ms >= deadline) {
            int64_t next = (int64_t)(w->requeue_count > 0 ? w->requeue_count : 0) + 1;
            if (cfg->backoff_limit >= 0 && next > cfg->backoff_limit) {
                a.kind = CU_PR_DEACTIVATE;
                a.reason = CU_PR_CAUSE_LIMIT;
                a.message = CU_PR_MSG_LIMIT;
                a.evict_reason = CU_PR_EVICT_DEACTIVATED;
                a.underlying_cause = CU_PR_CAUSE_LIMIT;
                snprintf(a.evict_message, sizeof(a.evict_message), "%s", CU_PR_MSG_DEACTIVATED);
                return a;
            }
            if (next > INT32_MAX)
                next = INT32_MAX;
            a.kind = CU_PR_EVICT;
            a.evict_reason = CU_PR_EVICT_TIMEOUT;
            a.underlying_cause = cause;
            snprintf(a.evict_message, sizeof(a.evict_message),
                     "Exceeded the PodsReady timeout %s/%s", w->ns ? w->ns : "",
                     w->name ? w->name : "");
            a.new_requeue_count = (int32_t)next;
            a.requeue_at_ms = sat_add(now_ms, cu_pr_backoff_ms(cfg, (int32_t)next, jitter_seed));
            return a;
        }
        if (cause)
            a.recheck_at_ms = deadline;
    }

    if (cond_differs) {
        a.kind = CU_PR_SET_CONDITION;
        a.ready = d_ready;
        a.reason = d_reason;
        a.message = d_message;
        /* Losing readiness starts the recovery timer at the write. */
        if (w->admitted && !w->inactive && !w->evicted && !d_ready &&
            strcmp(d_reason, CU_PR_REASON_WAIT_RECOVERY) == 0 &&
            !reason_is(w, CU_PR_REASON_WAIT_RECOVERY) && cfg->recovery_timeout_ms >= 0)
            a.recheck_at_ms = sat_add(now_ms, cfg->recovery_timeout_ms);
    }
    return a;
}

int cu_pr_wl_not_ready(const cu_pr_wl *w)
{
    return w->admitted && !(w->has_ready_cond && w->ready);
}

int cu_pr_may_admit(const cu_pr_config *cfg, size_t n_not_ready)
{
    return !cfg->enable || !cfg->block_admission || n_not_ready == 0;
}

int64_t cu_pr_queue_order_ms(const cu_pr_config *cfg, int64_t creation_ms,
                             int evicted_by_pods_ready_timeout, int64_t evicted_ltt_ms)
{
    if (evicted_by_pods_ready_timeout && !cfg->requeue_at_creation)
        return evicted_ltt_ms;
    return creation_ms;
}
