/* mop_stacks.c - chains of call sites for --callsite-depth; see mop_stacks.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr; the build defines it for the library already */
#endif
#include "mop_hot.h"
#include "mop_stacks.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

MOP_HOT_FLAG int mop_stack_depth = 1;

typedef struct mop_stack {
    uint64_t key; /* 0: empty */
    int n;
    uint64_t frame[MOP_STACK_MAX_DEPTH];
} mop_stack;

/* The chain table: written on the slow path of deep call sites only, under its lock. */
static struct {
    pthread_mutex_t lock;
    mop_stack slot[2 * MOP_MAX_STACKS];
    int count;
    uint64_t overflow;
    uintptr_t self_lo, self_hi; /* this library's code: frames to skip */
} mop_stacks_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int mop_find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t here = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (here >= lo && here < hi) {
            mop_stacks_g.self_lo = lo;
            mop_stacks_g.self_hi = hi;
            return 1;
        }
    }
    return 0;
}

void mop_stacks_init(void)
{
    const char *s = getenv("MPI_OVERLAP_CALLSITE_DEPTH");
    int depth = s ? atoi(s) : 1;
    if (depth < 1)
        depth = 1;
    if (depth > MOP_STACK_MAX_DEPTH)
        depth = MOP_STACK_MAX_DEPTH;
    if (depth > 1) {
        dl_iterate_phdr(mop_find_self, (void *)(uintptr_t)&mop_stacks_init);
        void *warm[4];
        backtrace(warm, 4);
    }
    mop_stack_depth = depth;
}

static inline int mop_is_self(uint64_t a)
{
    return a >= mop_stacks_g.self_lo && a < mop_stacks_g.self_hi;
}

uint64_t mop_stack_site(uint64_t ret)
{
    enum { SKIP_MAX = 12 };
    void *buf[SKIP_MAX + MOP_STACK_MAX_DEPTH];
    int got = backtrace(buf, SKIP_MAX + mop_stack_depth);
    uint64_t frame[MOP_STACK_MAX_DEPTH];
    int n = 0;
    for (int i = 0; i < got && n < mop_stack_depth; i++) {
        uint64_t a = (uint64_t)(uintptr_t)buf[i];
        if (n == 0 && mop_is_self(a))
            continue; /* the profiler's own frames, down to the program's */
        frame[n++] = a;
    }
    if (n == 0)
        return ret;
    uint64_t key = UINT64_C(1469598103934665603); /* FNV-1a over the frames */
    for (int i = 0; i < n; i++) {
        key ^= frame[i];
        key *= UINT64_C(1099511628211);
    }
    key = (key & ~(UINT64_C(3) << 62)) | MOP_STACK_KEY_BIT;
    pthread_mutex_lock(&mop_stacks_g.lock);
    size_t cap = 2 * MOP_MAX_STACKS, i = key % cap;
    while (mop_stacks_g.slot[i].key && mop_stacks_g.slot[i].key != key)
        i = (i + 1) % cap;
    if (!mop_stacks_g.slot[i].key) {
        if (mop_stacks_g.count == MOP_MAX_STACKS) {
            mop_stacks_g.overflow++;
            pthread_mutex_unlock(&mop_stacks_g.lock);
            return frame[0]; /* counted; the call keeps its innermost frame */
        }
        mop_stacks_g.slot[i].key = key;
        mop_stacks_g.slot[i].n = n;
        memcpy(mop_stacks_g.slot[i].frame, frame, (size_t)n * sizeof frame[0]);
        mop_stacks_g.count++;
    }
    pthread_mutex_unlock(&mop_stacks_g.lock);
    return key;
}

int mop_stack_frames(uint64_t key, uint64_t *out, int max)
{
    if (!(key & MOP_STACK_KEY_BIT))
        return 0;
    int n = 0;
    pthread_mutex_lock(&mop_stacks_g.lock);
    size_t cap = 2 * MOP_MAX_STACKS, i = key % cap;
    while (mop_stacks_g.slot[i].key && mop_stacks_g.slot[i].key != key)
        i = (i + 1) % cap;
    if (mop_stacks_g.slot[i].key == key) {
        n = mop_stacks_g.slot[i].n < max ? mop_stacks_g.slot[i].n : max;
        memcpy(out, mop_stacks_g.slot[i].frame, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&mop_stacks_g.lock);
    return n;
}

uint64_t mop_stack_overflow(void)
{
    pthread_mutex_lock(&mop_stacks_g.lock);
    uint64_t n = mop_stacks_g.overflow;
    pthread_mutex_unlock(&mop_stacks_g.lock);
    return n;
}
