/* mop_hot.h - where the switches every wrapper reads live: all in one output
 * section of 40 bytes (mop_active, mop_use_tsc, mop_xt_on, mop_post_fusion,
 * mop_need_peers, mop_stack_depth, mop_status_needs, ...), so one cache line
 * holds them, or two where the section straddles a line's end (its alignment
 * is its variables', 4: aligning it to a line would need one of them aligned
 * and placed first, which the order the compiler emits them in decides).
 *
 * Why: they are defined in the files whose concern they are (the clock, the
 * peers, the call stacks, ...), and the linker spread them over four cache
 * lines. An application's computation between two MPI calls evicts those
 * lines, so each call fetched all four again. Gathered, a cold iteration of
 * MPI_Irecv + MPI_Isend + MPI_Waitall and two region events after a 4 MB sweep
 * costs 55 ns less (median of 8 interleaved pairs, 6 of them 44-79 ns less;
 * the hot message-rate loop is unchanged, +0.6 ns; 2026-12-04, MPICH wheel;
 * docs/profiler.md, "Memory and cost"). A section whose name is no standard
 * one is placed whole by the linker (GNU ld, lld): its variables from every
 * file stay together, which a ".data.*" name would not ensure. */
#ifndef MOP_HOT_H
#define MOP_HOT_H

#define MOP_HOT_FLAG __attribute__((section("mop_hot")))

#endif
