/* mop_stacks.h - deeper call sites (profile --callsite-depth N; docs/profiler.md,
 * "Call sites"). With MPI_OVERLAP_CALLSITE_DEPTH=N > 1, an outermost call's site is
 * the chain of the N innermost frames outside this library that led to it, taken
 * with the unwinder (glibc backtrace(), which needs no frame pointers): a helper
 * called from two places gives two sites. The chain is named by a key (a hash of
 * its frames with MOP_STACK_KEY_BIT set) that takes the return address's place in
 * the ENTER event, and kept in a fixed table for the profile. This costs an unwind
 * per MPI call (measured in docs/profiler.md), so it is off unless asked for. */
#ifndef MOP_STACKS_H
#define MOP_STACKS_H

#include <stdint.h>

enum {
    MOP_STACK_MAX_DEPTH = 8,
    MOP_MAX_STACKS = 1024,  /* distinct chains kept; more are counted */
};

/* Return addresses are user-space addresses (below 2^47 on x86-64 and AArch64),
 * so keys with this bit cannot be one. */
#define MOP_STACK_KEY_BIT (UINT64_C(1) << 62)

/* The depth asked for: 1 (the return address only, the default) to
 * MOP_STACK_MAX_DEPTH. Set once by mop_stacks_init. */
extern int mop_stack_depth;

/* Reads MPI_OVERLAP_CALLSITE_DEPTH; with depth > 1, finds this library's code
 * and warms the unwinder up (its first use may allocate). */
void mop_stacks_init(void);

/* The call site of the MPI call now being entered, as a chain key; `ret`, the
 * wrapper's return address, when the chain cannot be taken. */
uint64_t mop_stack_site(uint64_t ret);

/* The frames of chain `key`, innermost first, into out (up to max); their count,
 * 0 when the key is not a kept chain. Thread-safe. */
int mop_stack_frames(uint64_t key, uint64_t *out, int max);

/* Chains that found the table full (their calls' site has no frames). */
uint64_t mop_stack_overflow(void);

#endif
