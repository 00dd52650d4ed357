/* mop_trace_dtype.h - the layout of a message's datatype, in trace mode only
 * (docs/profiler.md, "Datatype layouts"): a message whose data is not one
 * contiguous block gets a layout id in its MATCH event, and the datatype's
 * constructor tree is written into the trace once per datatype (a DTYPES
 * chunk), so that a prediction can tell which messages move non-contiguous
 * data and what shape, and a probe can build the same datatype elsewhere. */
#ifndef MOP_TRACE_DTYPE_H
#define MOP_TRACE_DTYPE_H

#include <mpi.h>
#include <stdint.h>

#include "mop_trace.h"

/* At MPI_Init, in trace mode (mop_match_start): ids are given from now on. */
void mop_dtype_start(mop_trace *tr);

/* The layout id of count x dt: 0 where the data is one contiguous block
 * (every predefined type but the pair types, a derived type without holes or
 * gaps between its copies) or where layouts are not recorded; else the id of
 * dt's layout, >= 1, the same for every message of that datatype while it
 * lives. */
uint16_t mop_dtype_layout(MPI_Datatype dt);

#endif
