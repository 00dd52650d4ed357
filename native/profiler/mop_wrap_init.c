/* mop_wrap_init.c - PMPI wrappers that start and stop the profiler
 * (MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort) and MPI_Pcontrol,
 * which turns monitoring off (level 0) and on again (level >= 1), as in mpiP:
 * for the computation's CPU time too (mop_cpu.h); level -1 (MOP_PCONTROL_PAUSE)
 * also pauses the wrappers until the next MPI_Pcontrol (mop_runtime.h). */
#include "mop_wrap_util.h"

int MPI_Init(int *argc, char ***argv)
{
    mop_clock_rate_start(); /* the MPI's start-up measures the TSC's rate for us */
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        mop_runtime_start(MOP_FN_MPI_Init, MOP_CALLER());
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    mop_clock_rate_start();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        mop_runtime_start(MOP_FN_MPI_Init_thread, MOP_CALLER());
    return rc;
}

int MPI_Finalize(void)
{
    mop_runtime_stop(MOP_CALLER());
    return PMPI_Finalize();
}

/* The aborting rank writes its profile first (status incomplete): PMPI_Abort
 * does not return, and how it ends the process (exit, a signal, being killed
 * by the launcher) is the MPI's choice. */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    mop_runtime_abort(errorcode, MOP_CALLER());
    return PMPI_Abort(comm, errorcode);
}

int MPI_Pcontrol(const int level, ...)
{
    /* Any MPI_Pcontrol ends a pause (mop_pause), then does what its level says. */
    mop_thread *th = mop_unpause();
    if (!th)
        th = mop_self();
    if (th) {
        uint64_t t0 = mop_now();
        mop_enter(th, MOP_FN_MPI_Pcontrol, t0, MOP_CALLER());
        /* A pause is monitoring off for the processing: the paused stretch
         * is neither computation nor MPI time in the profile. */
        const int monitored = level == MOP_PCONTROL_PAUSE ? 0 : level;
        mop_push_event(th, MOP_EV_PCONTROL, t0, 0, 0, MOP_KIND_SEND, 0, monitored);
        th->cpu.off = monitored == 0; /* as the processing's monitoring (mop_process.c) */
    }
    int rc = PMPI_Pcontrol(level);
    if (th) {
        mop_exit(th, mop_now());
        if (level == MOP_PCONTROL_PAUSE)
            mop_pause(th); /* refused with threads in use: then as level 0 */
    }
    return rc;
}
