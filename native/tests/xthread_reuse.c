/* xthread_reuse.c - a request handle that the MPI frees inside one thread's
 * completion call and gives to another thread's new request before the
 * profiler has recorded that completion (docs/profiler.md, "Threads"). The
 * window is real but short (between the MPI's free and the wrapper's lookup
 * of the handle's posting thread); this program makes it wide and certain by
 * defining PMPI_Wait, PMPI_Waitall, PMPI_Test and PMPI_Testall itself (a
 * waiting wrapper may complete its call with the Test form, mop_idle.h): the profiler's
 * wrappers call these, which call the MPI's (dlsym RTLD_NEXT) and then, when
 * the calling thread armed them and its request completed, hold the thread
 * until the other threads have reused the handle and completed the new
 * request. Run without the profiler, the same hand-shake follows the MPI call.
 *
 * Each rank works alone with messages to itself, 3 threads in one of two
 * scenarios, `instances` times (each 1/3 with MPI_Wait, MPI_Waitall, MPI_Test
 * as the held completion):
 *   own-first      A posts receive H and completes it itself, held after the
 *                  MPI freed H; C posts a receive (given H again) and hands it
 *                  to B, which completes it; then A's completion is recorded.
 *                  Per instance 4 transfers, 1 completed on another thread.
 *   foreign-first  X posts receive H and hands it to Y, which completes it and
 *                  is held; P posts a receive (given H again) and hands it to
 *                  X, which completes it; then Y's completion is recorded.
 *                  Per instance 4 transfers, 2 completed on another thread.
 * Prints "xthread_reuse: rank R: SCENARIO N instances, K handles reused,
 * held H": K counts the instances whose second receive got the freed handle
 * (the MPI reused it at once), H those held inside the PMPI call (0 without
 * a profiler calling PMPI_*). Exit 0 when the data were right.
 * Usage: xthread_reuse own-first|foreign-first [instances] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_FIRST = 1, TAG_SECOND = 2 };

typedef int (*wait_fn)(MPI_Request *, MPI_Status *);
typedef int (*waitall_fn)(int, MPI_Request[], MPI_Status[]);
typedef int (*test_fn)(MPI_Request *, int *, MPI_Status *);
typedef int (*testall_fn)(int, MPI_Request[], int *, MPI_Status[]);

static wait_fn real_wait;
static waitall_fn real_waitall;
static test_fn real_test;
static testall_fn real_testall;

static int g_rank, g_instances, g_errors;
static pthread_barrier_t g_bar;
/* Steps of instance i (counted from 1), set to i (release; read with
 * acquire): g_posted (foreign-first): the first receive is posted, in
 * g_first; g_freed: its handle was freed by the MPI (its completer is held);
 * g_ready: the second receive is posted, in g_second; g_done: it was
 * completed (and recorded) by the thread it was handed to. g_old: the
 * handles the held call freed, which the second receive may get again. */
static int g_freed, g_ready, g_done, g_posted;
static MPI_Request g_first, g_second, g_old[2];
static int g_reused, g_held;
/* In the thread that completes the first receive: its instance, whether the
 * next completing PMPI call is to hold it (armed), and whether one did. */
static _Thread_local int tl_armed, tl_instance, tl_fired;

static void wait_step(const int *step, int want)
{
    while (__atomic_load_n(step, __ATOMIC_ACQUIRE) != want)
        sched_yield();
}

static void set_step(int *step, int v)
{
    __atomic_store_n(step, v, __ATOMIC_RELEASE);
}

/* The first receive's completer: the MPI has freed its handle. Let the
 * second receive be posted and completed before this completion goes on. */
static void hold(void)
{
    set_step(&g_freed, tl_instance);
    wait_step(&g_done, tl_instance);
}

static void maybe_hold(int completed)
{
    if (tl_armed && completed) {
        tl_armed = 0;
        tl_fired = 1;
        hold();
    }
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int rc = real_wait(request, status);
    maybe_hold(1);
    return rc;
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    int rc = real_waitall(count, array_of_requests, array_of_statuses);
    maybe_hold(1);
    return rc;
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int rc = real_test(request, flag, status);
    maybe_hold(*flag);
    return rc;
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status array_of_statuses[])
{
    int rc = real_testall(count, array_of_requests, flag, array_of_statuses);
    maybe_hold(*flag);
    return rc;
}

/* Completes *r with the instance's call (0 Wait, 1 Waitall, 2 Test), held
 * after the MPI freed it; `also` (or MPI_REQUEST_NULL) goes into the Waitall. */
static void complete_held(int instance, MPI_Request *r, MPI_Request *also)
{
    tl_instance = instance;
    tl_armed = 1;
    tl_fired = 0;
    switch (instance % 3) {
    case 0:
        MPI_Wait(r, MPI_STATUS_IGNORE);
        break;
    case 1: {
        MPI_Request rs[2] = {*r, *also};
        MPI_Status st[2];
        MPI_Waitall(2, rs, st);
        *r = rs[0];
        *also = rs[1];
        break;
    }
    default: {
        int flag = 0;
        while (!flag) {
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
            if (!flag)
                sched_yield();
        }
    }
    }
    tl_armed = 0;
    if (tl_fired)
        __atomic_fetch_add(&g_held, 1, __ATOMIC_RELAXED);
    else
        hold(); /* not reached through PMPI_*: no profiler in between */
}

static void check(int got, int want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "xthread_reuse: rank %d: bad data in %s (%d, want %d)\n", g_rank, what,
                got, want);
        __atomic_fetch_add(&g_errors, 1, __ATOMIC_RELAXED);
    }
}

/* The second receive (thread C or P): posted once the first one's handle was
 * freed, handed over, and its send completed here. */
static void post_second(int i, int *rbuf, int *sbuf)
{
    wait_step(&g_freed, i);
    MPI_Request send;
    MPI_Irecv(rbuf, 1, MPI_INT, g_rank, TAG_SECOND, MPI_COMM_WORLD, &g_second);
    if (g_second == g_old[0] || g_second == g_old[1])
        g_reused++;
    *sbuf = 2 * i + 1;
    MPI_Isend(sbuf, 1, MPI_INT, g_rank, TAG_SECOND, MPI_COMM_WORLD, &send);
    set_step(&g_ready, i);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    wait_step(&g_done, i); /* completed by the thread it was handed to */
    check(*rbuf, 2 * i + 1, "second receive");
}

/* The first receive (thread A or X): posted into g_first, whose handle the
 * MPI may give the second receive again (g_old[0]), with its send in *send. */
static void post_first(int i, int *rbuf, int *sbuf, MPI_Request *send)
{
    MPI_Irecv(rbuf, 1, MPI_INT, g_rank, TAG_FIRST, MPI_COMM_WORLD, &g_first);
    *sbuf = 2 * i;
    MPI_Isend(sbuf, 1, MPI_INT, g_rank, TAG_FIRST, MPI_COMM_WORLD, send);
    g_old[0] = g_first;
}

/* The second receive's completer (thread B or X): once it is handed over. */
static void complete_second(int i)
{
    wait_step(&g_ready, i);
    MPI_Wait(&g_second, MPI_STATUS_IGNORE);
    set_step(&g_done, i);
}

/* own-first: role 0 = A, 1 = B, 2 = C. */
static void own_first(int role, int i, int *rbuf, int *sbuf)
{
    if (role == 0) {
        MPI_Request send;
        post_first(i, rbuf, sbuf, &send);
        g_old[1] = i % 3 == 1 ? send : MPI_REQUEST_NULL; /* freed by the Waitall too */
        complete_held(i, &g_first, &send);
        MPI_Wait(&send, MPI_STATUS_IGNORE); /* MPI_REQUEST_NULL after the Waitall */
        check(*rbuf, 2 * i, "own-first first receive");
    } else if (role == 1) {
        complete_second(i);
    } else {
        post_second(i, rbuf, sbuf);
    }
}

/* foreign-first: role 0 = X, 1 = Y, 2 = P. */
static void foreign_first(int role, int i, int *rbuf, int *sbuf)
{
    if (role == 0) {
        MPI_Request send;
        post_first(i, rbuf, sbuf, &send);
        g_old[1] = MPI_REQUEST_NULL;
        set_step(&g_posted, i);
        complete_second(i);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        check(*rbuf, 2 * i, "foreign-first first receive");
    } else if (role == 1) {
        wait_step(&g_posted, i);
        MPI_Request none = MPI_REQUEST_NULL;
        complete_held(i, &g_first, &none);
    } else {
        post_second(i, rbuf, sbuf);
    }
}

static int g_foreign;

static void *worker(void *arg)
{
    int role = (int)(size_t)arg;
    int rbuf = -1, sbuf = 0;
    for (int i = 1; i <= g_instances; i++) {
        pthread_barrier_wait(&g_bar); /* nothing else allocates a request meanwhile */
        rbuf = -1;
        if (g_foreign)
            foreign_first(role, i, &rbuf, &sbuf);
        else
            own_first(role, i, &rbuf, &sbuf);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    real_wait = (wait_fn)dlsym(RTLD_NEXT, "PMPI_Wait");
    real_waitall = (waitall_fn)dlsym(RTLD_NEXT, "PMPI_Waitall");
    real_test = (test_fn)dlsym(RTLD_NEXT, "PMPI_Test");
    real_testall = (testall_fn)dlsym(RTLD_NEXT, "PMPI_Testall");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    const char *scenario = argc > 1 ? argv[1] : "";
    g_foreign = strcmp(scenario, "foreign-first") == 0;
    g_instances = argc > 2 ? atoi(argv[2]) : 150;
    if ((!g_foreign && strcmp(scenario, "own-first") != 0) || g_instances < 1 ||
        provided != MPI_THREAD_MULTIPLE || !real_wait || !real_waitall || !real_test ||
        !real_testall) {
        if (g_rank == 0)
            fprintf(stderr, "usage: xthread_reuse own-first|foreign-first [instances] "
                            "(needs MPI_THREAD_MULTIPLE, provided %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_barrier_init(&g_bar, NULL, 3);
    pthread_t th[3];
    for (int t = 0; t < 3; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(size_t)t) != 0) {
            fprintf(stderr, "xthread_reuse: cannot create a thread\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&g_bar);
    printf("xthread_reuse: rank %d: %s %d instances, %d handles reused, held %d\n", g_rank,
           scenario, g_instances, g_reused, g_held);
    int errors = __atomic_load_n(&g_errors, __ATOMIC_RELAXED);
    MPI_Finalize();
    return errors ? 1 : 0;
}
