/* mop_wrap_completion.c - PMPI wrappers of the calls that complete requests:
 * Wait/Test and their -any/-some/-all forms, MPI_Request_get_status and its
 * MPI-4.1 -all/-any/-some forms (and MPI_Cancel, which tells them that a
 * completion may now be a cancellation). Each completed request gives an
 * XFER_END stamped with the call's CALL_EXIT; a completed receive carries its
 * received size (from the status, ours when the caller ignores statuses);
 * a cancelled one is marked so it is not counted as a transfer; one seen by
 * Request_get_status, which leaves the request to be completed again by a
 * Wait/Test or freed, is marked a query so that it is closed only once.
 * Handles are saved before the call because MPI overwrites completed ones
 * with MPI_REQUEST_NULL; with threads in use, their posts are held before it
 * too (mop_hold_req), because the MPI may give a handle it frees to another
 * thread's new request before the call returns. docs/profiler.md,
 * "Completion paths", lists what each path records. */
#include <stdlib.h>

#include "mop_hot.h"
#include "mop_idle.h"
#include "mop_wrap_util.h"

/* Threads in use: holds the posts of the saved keys (mop_hold_req). Without
 * memory for a long array nothing is held, and each completion's END stays
 * in this thread's queue (counted in out_of_memory). */
static void mop_saved_reqs_hold(mop_saved_reqs *s, mop_thread *th, int n)
{
    s->tickets = n <= MOP_STACK_REQS ? s->stack_tickets : malloc((size_t)n * sizeof *s->tickets);
    if (!s->tickets) {
        mop_note_out_of_memory();
        return;
    }
    s->n = n;
    for (int i = 0; i < n; i++)
        s->tickets[i] = mop_hold_req(th, s->keys[i]);
}

/* Lets go of the holds that no END took, unless the call failed. */
static void mop_saved_reqs_unhold(mop_saved_reqs *s, mop_thread *th, int failed)
{
    for (int i = 0; i < s->n && !failed; i++)
        mop_unhold(th, s->tickets[i]);
    if (s->tickets != s->stack_tickets)
        free(s->tickets);
    s->tickets = NULL;
}

int mop_saved_reqs_init(mop_saved_reqs *s, mop_thread *th, int n, const MPI_Request *reqs,
                        int need_status, int hold)
{
    s->keys = s->stack_keys;
    s->st = need_status ? s->stack_st : NULL;
    s->tickets = NULL;
    if (n > MOP_STACK_REQS) {
        s->keys = malloc((size_t)n * sizeof *s->keys);
        s->st = need_status ? malloc((size_t)n * sizeof *s->st) : NULL;
        if (!s->keys || (need_status && !s->st)) {
            mop_saved_reqs_free(s, th, 0);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        s->keys[i] = mop_key(reqs[i]);
    for (int i = 0; need_status && i < n; i++)
        mop_status_unset(&s->st[i]);
    if (__builtin_expect(mop_xt_on, 0) && hold)
        mop_saved_reqs_hold(s, th, n);
    return 0;
}

void mop_saved_reqs_free(mop_saved_reqs *s, mop_thread *th, int failed)
{
    if (__builtin_expect(s->tickets != NULL, 0))
        mop_saved_reqs_unhold(s, th, failed);
    if (s->keys != s->stack_keys)
        free(s->keys);
    if (s->st != s->stack_st)
        free(s->st);
    s->keys = NULL;
    s->st = NULL;
}

MOP_HOT_FLAG int mop_status_needs;

MOP_HOT_FLAG int mop_status_direct;

/* Whether mop_status_bytes may read a status's count itself: it must give what
 * PMPI_Get_count with MPI_BYTE gives on statuses the MPI has filled, counts
 * above INT_MAX and the cancelled flag included. Checked once here rather
 * than trusted from the header alone: the fields are the MPI's internals. */
void mop_status_layout_check(void)
{
    static const MPI_Count counts[] = {0, 1, 8, 4096, 65536, INT_MAX, (MPI_Count)INT_MAX + 1,
                                       ((MPI_Count)1 << 33) + 5};
    int ok = MOP_STATUS_HAS_COUNT;
    for (size_t i = 0; ok && i < sizeof counts / sizeof counts[0]; i++) {
        for (int cancelled = 0; ok && cancelled < 2; cancelled++) {
            MPI_Status st;
            memset(&st, 0, sizeof st);
            int n = MPI_UNDEFINED;
            if (PMPI_Status_set_elements_x(&st, MPI_BYTE, counts[i]) != MPI_SUCCESS ||
                PMPI_Status_set_cancelled(&st, cancelled) != MPI_SUCCESS ||
                PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS) {
                ok = 0;
                break;
            }
            int64_t mine = mop_status_count_field(&st);
            ok = (mine > INT_MAX ? -1 : mine) == (n == MPI_UNDEFINED ? -1 : n);
        }
    }
    mop_status_direct = ok;
}

int MPI_Cancel(MPI_Request *request)
{
    /* Set before the call: a completion in another thread may follow it. */
    __atomic_fetch_or(&mop_status_needs, MOP_STATUS_CANCEL, __ATOMIC_RELAXED);
    MOP_CALL_BEGIN(MPI_Cancel)
    int rc = PMPI_Cancel(request);
    MOP_CALL_END()
    return rc;
}

/* A completion once the program has called MPI_Cancel or a trace is written:
 * whether it was cancelled, and the STATUS of a trace after its END. */
static void mop_complete_slow(mop_thread *th, uint64_t t, uint64_t key, const MPI_Status *st,
                              int flags, int needs, uint32_t ticket)
{
    flags |= mop_status_cancelled(needs, st) ? MOP_END_CANCELLED : 0;
    mop_push_end(th, MOP_EV_END, t, key, mop_status_bytes(st), flags, ticket);
    if (needs & MOP_STATUS_TRACE)
        mop_status_slow(th, t, key, st);
}

/* flags: 0, or MOP_END_QUERY for Request_get_status*; ticket: the hold of
 * the request's post (mop_hold_req; 0 for a query, MPI_REQUEST_NULL, or
 * none), which this takes. */
static inline void mop_complete_as(mop_thread *th, uint64_t t, uint64_t key, const MPI_Status *st,
                                   int flags, uint32_t ticket)
{
    if (key == mop_key(MPI_REQUEST_NULL))
        return;
    int needs = __atomic_load_n(&mop_status_needs, __ATOMIC_RELAXED);
    if (__builtin_expect(needs != 0, 0)) {
        mop_complete_slow(th, t, key, st, flags, needs, ticket);
        return;
    }
    mop_push_end(th, MOP_EV_END, t, key, mop_status_bytes(st), flags, ticket);
}

static inline void mop_complete(mop_thread *th, uint64_t t, uint64_t key, const MPI_Status *st,
                                uint32_t ticket)
{
    mop_complete_as(th, t, key, st, 0, ticket);
}

/* MPI_Wait, after working on the queue while the request is incomplete. */
static inline int mop_wait(mop_thread *th, MPI_Request *request, MPI_Status *st)
{
    int rc;
    if (mop_idle_wait_worth(th) && mop_idle_wait(th, request, st, &rc))
        return rc;
    return PMPI_Wait(request, st);
}

/* Wait and Test hold their request's post before the MPI call (mop_hold_req).
 * A call that fails keeps its holds (here and in the calls below): the MPI
 * may have freed the handles, and a held post is one no other completion
 * takes. */
int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    uint64_t key = mop_key(*request);
    uint32_t ticket = 0;
    MOP_WRAP(MPI_Wait, PMPI_Wait(request, status),
             (ticket = mop_hold_req(th, key), mop_wait(th, request, st)),
             mop_complete(th, t1, key, st, ticket))
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    uint64_t key = mop_key(*request);
    uint32_t ticket = 0;
    MOP_WRAP(MPI_Test, PMPI_Test(request, flag, status),
             (ticket = mop_hold_req(th, key), PMPI_Test(request, flag, st)),
             if (*flag) mop_complete(th, t1, key, st, ticket); else mop_unhold(th, ticket))
}

/* The class of an error code (MPICH's codes carry more than their class). */
static int mop_error_class(int code)
{
    int cls = code;
    if (code != MPI_SUCCESS && PMPI_Error_class(code, &cls) != MPI_SUCCESS)
        cls = code;
    return cls;
}

/* Whether an -all or -some call that returned rc reports completions: when it
 * succeeded, or with MPI_ERR_IN_STATUS (errors returned, not fatal). */
static inline int mop_reports(int rc)
{
    return rc == MPI_SUCCESS || mop_error_class(rc) == MPI_ERR_IN_STATUS;
}

/* Whether request i of an -all call that reported completions completed: with
 * MPI_ERR_IN_STATUS every status says whether its request is still pending;
 * one that failed has completed (and been freed) all the same. */
static inline int mop_completed(int rc, const MPI_Status *st)
{
    return rc == MPI_SUCCESS || mop_error_class(st->MPI_ERROR) != MPI_ERR_PENDING;
}

/* Waitall and Testall: every request completes together (or, for Testall
 * with flag false, none does). */
static int mop_all(uint16_t fn, uint64_t site, int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    mop_thread *th = mop_self();
    if (!th)
        return flag ? PMPI_Testall(count, reqs, flag, statuses) : PMPI_Waitall(count, reqs, statuses);
    uint64_t t0 = mop_now();
    mop_enter(th, fn, t0, site);
    mop_saved_reqs s;
    int saved =
        mop_saved_reqs_init(&s, th, count, reqs, statuses == MPI_STATUSES_IGNORE, 1) == 0;
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE && saved ? s.st : statuses;
    int rc;
    if (flag)
        rc = PMPI_Testall(count, reqs, flag, st);
    else if (!(mop_idle_wait_worth(th) && mop_idle_waitall(th, count, reqs, st, &rc)))
        rc = PMPI_Waitall(count, reqs, st);
    uint64_t t1 = mop_now();
    if (saved && (rc != MPI_SUCCESS ? mop_reports(rc) : (!flag || *flag)))
        for (int i = 0; i < count; i++)
            if (mop_completed(rc, &st[i]))
                mop_complete(th, t1, s.keys[i], &st[i], mop_saved_ticket(&s, i));
    if (saved)
        mop_saved_reqs_free(&s, th, rc != MPI_SUCCESS && !mop_reports(rc));
    mop_exit(th, t1);
    return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    return mop_all(MOP_FN_MPI_Waitall, MOP_CALLER(), count, array_of_requests, NULL, array_of_statuses);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    return mop_all(MOP_FN_MPI_Testall, MOP_CALLER(), count, array_of_requests, flag, array_of_statuses);
}

/* Waitany and Testany: at most one completes, named by *index. */
static int mop_any(uint16_t fn, uint64_t site, int count, MPI_Request reqs[], int *index, int *flag,
                   MPI_Status *status)
{
    mop_thread *th = mop_self();
    if (!th)
        return flag ? PMPI_Testany(count, reqs, index, flag, status)
                    : PMPI_Waitany(count, reqs, index, status);
    MOP_STATUS_OR_OWN(st, status);
    uint64_t t0 = mop_now();
    mop_enter(th, fn, t0, site);
    mop_saved_reqs s;
    int saved = mop_saved_reqs_init(&s, th, count, reqs, 0, 1) == 0;
    int rc;
    if (flag)
        rc = PMPI_Testany(count, reqs, index, flag, st);
    else if (!(mop_idle_wait_worth(th) && mop_idle_waitany(th, count, reqs, index, st, &rc)))
        rc = PMPI_Waitany(count, reqs, index, st);
    uint64_t t1 = mop_now();
    if (saved && rc == MPI_SUCCESS && (!flag || *flag) && *index != MPI_UNDEFINED &&
        *index >= 0 && *index < count)
        mop_complete(th, t1, s.keys[*index], st, mop_saved_ticket(&s, *index));
    if (saved)
        mop_saved_reqs_free(&s, th, rc != MPI_SUCCESS);
    mop_exit(th, t1);
    return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return mop_any(MOP_FN_MPI_Waitany, MOP_CALLER(), count, array_of_requests, index, NULL, status);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    return mop_any(MOP_FN_MPI_Testany, MOP_CALLER(), count, array_of_requests, index, flag, status);
}

/* Waitsome and Testsome: *outcount of them complete, named by indices. */
static int mop_some(uint16_t fn, uint64_t site, int incount, MPI_Request reqs[], int *outcount, int indices[],
                    MPI_Status statuses[], int is_test)
{
    mop_thread *th = mop_self();
    if (!th)
        return is_test ? PMPI_Testsome(incount, reqs, outcount, indices, statuses)
                       : PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    uint64_t t0 = mop_now();
    mop_enter(th, fn, t0, site);
    mop_saved_reqs s;
    int saved =
        mop_saved_reqs_init(&s, th, incount, reqs, statuses == MPI_STATUSES_IGNORE, 1) == 0;
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE && saved ? s.st : statuses;
    int rc;
    if (is_test)
        rc = PMPI_Testsome(incount, reqs, outcount, indices, st);
    else if (!(mop_idle_wait_worth(th) &&
               mop_idle_waitsome(th, incount, reqs, outcount, indices, st, &rc)))
        rc = PMPI_Waitsome(incount, reqs, outcount, indices, st);
    uint64_t t1 = mop_now();
    if (saved && mop_reports(rc) && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++)
            if (indices[i] >= 0 && indices[i] < incount)
                mop_complete(th, t1, s.keys[indices[i]], &st[i], mop_saved_ticket(&s, indices[i]));
    if (saved)
        mop_saved_reqs_free(&s, th, !mop_reports(rc));
    mop_exit(th, t1);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    return mop_some(MOP_FN_MPI_Waitsome, MOP_CALLER(), incount, array_of_requests, outcount, array_of_indices,
                    array_of_statuses, 0);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    return mop_some(MOP_FN_MPI_Testsome, MOP_CALLER(), incount, array_of_requests, outcount, array_of_indices,
                    array_of_statuses, 1);
}

/* ---- Request_get_status: completion seen, request not freed ------------ */

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    MOP_WRAP(MPI_Request_get_status, PMPI_Request_get_status(request, flag, status),
             PMPI_Request_get_status(request, flag, st),
             if (*flag) mop_complete_as(th, t1, mop_key(request), st, MOP_END_QUERY, 0))
}

/* MPI 4.1. Intel MPI 2021 declares the request arrays without const. */
#ifdef I_MPI_VERSION
#define MOP_GET_STATUS_CONST
#else
#define MOP_GET_STATUS_CONST const
#endif

#ifdef MOP_HAVE_MPI_Request_get_status_all
int MPI_Request_get_status_all(int count, MOP_GET_STATUS_CONST MPI_Request array_of_requests[],
                               int *flag, MPI_Status *array_of_statuses)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Request_get_status_all(count, array_of_requests, flag, array_of_statuses);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Request_get_status_all, t0, MOP_CALLER());
    mop_saved_reqs s;
    int ignore = array_of_statuses == MPI_STATUSES_IGNORE;
    int saved = mop_saved_reqs_init(&s, th, count, array_of_requests, ignore, 0) == 0;
    MPI_Status *st = ignore && saved ? s.st : array_of_statuses;
    int rc = PMPI_Request_get_status_all(count, array_of_requests, flag, st);
    uint64_t t1 = mop_now();
    if (saved && rc == MPI_SUCCESS && *flag)
        for (int i = 0; i < count; i++)
            mop_complete_as(th, t1, s.keys[i], &st[i], MOP_END_QUERY, 0);
    if (saved)
        mop_saved_reqs_free(&s, th, 0);
    mop_exit(th, t1);
    return rc;
}
#endif

#ifdef MOP_HAVE_MPI_Request_get_status_any
int MPI_Request_get_status_any(int count, MOP_GET_STATUS_CONST MPI_Request array_of_requests[],
                               int *indx, int *flag, MPI_Status *status)
{
    MOP_STATUS_OR_OWN(st, status);
    MOP_WRAP(MPI_Request_get_status_any,
             PMPI_Request_get_status_any(count, array_of_requests, indx, flag, status),
             PMPI_Request_get_status_any(count, array_of_requests, indx, flag, st),
             if (*flag && *indx != MPI_UNDEFINED && *indx >= 0 && *indx < count)
                 mop_complete_as(th, t1, mop_key(array_of_requests[*indx]), st, MOP_END_QUERY,
                                 0))
}
#endif

#ifdef MOP_HAVE_MPI_Request_get_status_some
int MPI_Request_get_status_some(int incount,
                                MOP_GET_STATUS_CONST MPI_Request array_of_requests[],
                                int *outcount, int array_of_indices[],
                                MPI_Status *array_of_statuses)
{
    mop_thread *th = mop_self();
    if (!th)
        return PMPI_Request_get_status_some(incount, array_of_requests, outcount,
                                            array_of_indices, array_of_statuses);
    uint64_t t0 = mop_now();
    mop_enter(th, MOP_FN_MPI_Request_get_status_some, t0, MOP_CALLER());
    mop_saved_reqs s;
    int ignore = array_of_statuses == MPI_STATUSES_IGNORE;
    int saved = mop_saved_reqs_init(&s, th, incount, array_of_requests, ignore, 0) == 0;
    MPI_Status *st = ignore && saved ? s.st : array_of_statuses;
    int rc = PMPI_Request_get_status_some(incount, array_of_requests, outcount,
                                          array_of_indices, st);
    uint64_t t1 = mop_now();
    if (saved && rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++)
            if (array_of_indices[i] >= 0 && array_of_indices[i] < incount)
                mop_complete_as(th, t1, s.keys[array_of_indices[i]], &st[i], MOP_END_QUERY, 0);
    if (saved)
        mop_saved_reqs_free(&s, th, 0);
    mop_exit(th, t1);
    return rc;
}
#endif
