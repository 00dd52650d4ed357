/* shmsync.h - flags in node-shared memory that tell one rank that another has
 * done something, without any MPI call. The matching and waitany benchmarks
 * time a receive "once the message has arrived": the sender sets a flag after
 * its send returned, the receiver spins on it (yielding the core, so that an
 * oversubscribed run still makes progress) and only then starts its clock. An
 * MPI message or barrier in its place would pass through the very matching
 * queues being measured.
 *
 * On one node the flags live in an MPI_Win_allocate_shared window over
 * MPI_COMM_WORLD (one cache line per rank and slot), accessed with GCC/Clang
 * __atomic builtins (sequentially consistent), which is what the MPI
 * shared-memory model leaves to the language.
 *
 * mo_shm_open() also serves two ranks on different nodes: the flags then
 * travel over a TCP connection of the program's own between rank 0 and rank 1
 * (a side channel: still no MPI call, so it drives no MPI progress), each rank
 * keeping a mirror of the other's flags. A flag set there is seen one network
 * latency later, and the peer's clock is not this rank's: a benchmark that
 * compares timestamps across ranks must not use them (mo_shm_remote()). A
 * benchmark that waits for "the sender's send returned" then waits one
 * latency more, which on the emulated link is FIFO behind the message's own
 * frames. More than 2 ranks across nodes: mo_shm_open() refuses. */
#ifndef MO_SHMSYNC_H
#define MO_SHMSYNC_H
#include <mpi.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MO_SHM_SLOTS = 4, MO_SHM_LINE = 64 };

typedef struct mo_shm {
    MPI_Win win;
    volatile unsigned char *base; /* rank r, slot s at (r * MO_SHM_SLOTS + s) * MO_SHM_LINE */
    int fd;          /* the side channel across nodes; -1: shared memory */
    int me;          /* this rank (0 or 1 on the side channel) */
    int64_t *mirror; /* side channel: [rank * MO_SHM_SLOTS + slot] for ranks 0 and 1 */
} mo_shm;

/* Whether the flags travel over the side channel (ranks on different nodes). */
static inline int mo_shm_remote(const mo_shm *s)
{
    return s->fd >= 0;
}

/* Side channel: takes in what the peer sent; blocking until something came. */
static inline void mo_shm_drain(const mo_shm *s, int block)
{
    int64_t msg[2];
    for (;;) {
        ssize_t n = recv(s->fd, msg, sizeof msg, MSG_PEEK | (block ? 0 : MSG_DONTWAIT));
        if (n < (ssize_t)sizeof msg) {
            if (n <= 0 || !block)
                return;
            continue; /* half a message: wait for the rest */
        }
        if (recv(s->fd, msg, sizeof msg, MSG_WAITALL) != (ssize_t)sizeof msg)
            return;
        if (msg[0] >= 0 && msg[0] < 2 * MO_SHM_SLOTS)
            s->mirror[msg[0]] = msg[1];
        block = 0;
    }
}

static inline int64_t *mo_shm_flag(const mo_shm *s, int rank, int slot)
{
    return (int64_t *)(void *)(s->base + ((size_t)rank * MO_SHM_SLOTS + (size_t)slot) * MO_SHM_LINE);
}

static inline void mo_shm_set(const mo_shm *s, int rank, int slot, int64_t v)
{
    if (mo_shm_remote(s)) { /* only a rank's own flags are set, by itself */
        int64_t msg[2] = {(int64_t)rank * MO_SHM_SLOTS + slot, v};
        s->mirror[msg[0]] = v;
        if (send(s->fd, msg, sizeof msg, 0) != (ssize_t)sizeof msg)
            perror("shmsync: side channel");
        return;
    }
    __atomic_store_n(mo_shm_flag(s, rank, slot), v, __ATOMIC_SEQ_CST);
}

static inline int64_t mo_shm_get(const mo_shm *s, int rank, int slot)
{
    if (mo_shm_remote(s)) {
        if (rank != s->me)
            mo_shm_drain(s, 0);
        return s->mirror[rank * MO_SHM_SLOTS + slot];
    }
    return __atomic_load_n(mo_shm_flag(s, rank, slot), __ATOMIC_SEQ_CST);
}

/* Spins (yielding) until flag (rank, slot) reaches at least v; on the side
 * channel it blocks in the kernel instead. */
static inline void mo_shm_wait(const mo_shm *s, int rank, int slot, int64_t v)
{
    if (mo_shm_remote(s)) {
        while (s->mirror[rank * MO_SHM_SLOTS + slot] < v)
            mo_shm_drain(s, 1);
        return;
    }
    while (mo_shm_get(s, rank, slot) < v)
        sched_yield();
}

/* Collective over MPI_COMM_WORLD: whether every rank is on one node. */
static inline int mo_all_on_one_node(void)
{
    MPI_Comm node;
    int wsize, nsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    int ok = nsize == wsize, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    return all;
}

/* The window, once mo_all_on_one_node() said yes (collective). */
static inline int mo_shm_open_window(mo_shm *s, char *err, size_t errlen)
{
    s->fd = -1;
    s->mirror = NULL;
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Aint bytes = wrank == 0 ? (MPI_Aint)wsize * MO_SHM_SLOTS * MO_SHM_LINE : 0;
    void *mine = NULL;
    if (MPI_Win_allocate_shared(bytes, MO_SHM_LINE, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &s->win) !=
        MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Win_allocate_shared failed");
        return -1;
    }
    MPI_Aint size;
    int disp;
    void *base = NULL;
    MPI_Win_shared_query(s->win, 0, &size, &disp, &base);
    s->base = base;
    if (wrank == 0)
        for (int i = 0; i < wsize * MO_SHM_SLOTS; i++)
            mo_shm_set(s, i / MO_SHM_SLOTS, i % MO_SHM_SLOTS, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

/* Side channel between ranks 0 and 1 of a 2-rank MPI_COMM_WORLD: rank 1
 * listens on an ephemeral port of every address and sends its host name and
 * port to rank 0, which connects (the name resolves as the node's own). */
static inline int mo_shm_open_channel(mo_shm *s, char *err, size_t errlen)
{
    int wrank, lfd = -1, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    s->me = wrank;
    s->fd = -1;
    s->mirror = calloc(2 * MO_SHM_SLOTS, sizeof *s->mirror);
    char where[MPI_MAX_PROCESSOR_NAME + 16] = "";
    if (wrank == 1) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t len = sizeof a;
        int name_len = 0;
        char host[MPI_MAX_PROCESSOR_NAME];
        ok = s->mirror && (lfd = socket(AF_INET, SOCK_STREAM, 0)) >= 0 &&
             bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 1) == 0 &&
             getsockname(lfd, (struct sockaddr *)&a, &len) == 0 &&
             MPI_Get_processor_name(host, &name_len) == MPI_SUCCESS;
        if (ok)
            snprintf(where, sizeof where, "%s %u", host, (unsigned)ntohs(a.sin_port));
    }
    MPI_Bcast(where, (int)sizeof where, MPI_CHAR, 1, MPI_COMM_WORLD);
    if (wrank == 0 && where[0]) {
        char host[MPI_MAX_PROCESSOR_NAME], port[16];
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
        ok = sscanf(where, "%255s %15s", host, port) == 2 && s->mirror &&
             getaddrinfo(host, port, &hints, &res) == 0 &&
             (s->fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0 &&
             connect(s->fd, res->ai_addr, res->ai_addrlen) == 0;
        if (res)
            freeaddrinfo(res);
    } else if (wrank == 0) {
        ok = 0;
    }
    if (wrank == 1 && ok)
        ok = (s->fd = accept(lfd, NULL, NULL)) >= 0;
    if (lfd >= 0)
        close(lfd);
    if (s->fd >= 0) {
        int one = 1;
        setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        snprintf(err, errlen, "ranks on different nodes, and the side channel between them "
                              "(TCP, rank 1's host name) could not be opened");
        if (s->fd >= 0)
            close(s->fd);
        s->fd = -1;
        free(s->mirror);
        s->mirror = NULL;
        return -1;
    }
    return 0;
}

/* Collective over MPI_COMM_WORLD: the window when every rank is on one node,
 * else with 2 ranks the side channel. Returns 0, or -1 with err (more than 2
 * ranks across nodes, or the window or channel cannot be made). */
static inline int mo_shm_open(mo_shm *s, char *err, size_t errlen)
{
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (mo_all_on_one_node())
        return mo_shm_open_window(s, err, errlen);
    if (wsize == 2)
        return mo_shm_open_channel(s, err, errlen);
    s->fd = -1;
    snprintf(err, errlen, "needs every rank on one node, or 2 ranks on two (the arrival flags are in shared memory or a side channel)");
    return -1;
}

static inline void mo_shm_close(mo_shm *s)
{
    if (mo_shm_remote(s)) {
        close(s->fd);
        free(s->mirror);
        s->fd = -1;
        s->mirror = NULL;
        return;
    }
    MPI_Win_free(&s->win);
}

/* Online cores of the node, for the oversubscription flag (a rank's own
 * affinity mask may be one core when the launcher binds). */
static inline int mo_node_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
#endif
