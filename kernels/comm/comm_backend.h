// The C interface between MSL and a collective-communication back end
// loaded at run time (kernels/comm/comm_mpi.cpp builds libmsl_comm_mpi.so).
//
// Why a plug-in: linking libmpi into msl would load Open MPI, its
// portability layer and hwloc at every start of every program, and a
// build machine without MPI could not build msl at all. The back end is a
// small shared library linked against the MPI found at build time, opened
// with dlopen by msl.communication.init() only under a launcher.
//
// Every call returns 0 on success, or non-zero with a message in `err`
// (the back end's own text, e.g. MPI_Error_string). Collectives are
// non-blocking: they return a request that the caller polls with `test`,
// so the wait can time out and name the collective that never completed
// (kernels/comm/communicator.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSL_COMM_ABI_VERSION 1

// Element types a back end reduces. Float16/bfloat16 are reduced in float32
// by the caller; gathers and broadcasts move bytes.
enum MslCommDType { MSL_COMM_BYTE = 0, MSL_COMM_INT32, MSL_COMM_INT64, MSL_COMM_FLOAT32, MSL_COMM_FLOAT64 };
enum MslCommOp { MSL_COMM_SUM = 0, MSL_COMM_PROD, MSL_COMM_MAX, MSL_COMM_MIN };

typedef struct MslCommGroup MslCommGroup;      // a communicator
typedef struct MslCommRequest MslCommRequest;  // an operation in flight

typedef struct MslCommBackend {
  int abi_version;
  const char* name;
  // Starts the back end (MPI_Init_thread); the world group's handle is then
  // available from `world`.
  int (*init)(char* err, size_t errlen);
  int (*finalize)(char* err, size_t errlen);
  MslCommGroup* (*world)(void);
  // The ranks of `group` on this machine: (local rank, local size).
  int (*local_rank)(MslCommGroup* group, int* rank, int* size, char* err, size_t errlen);
  int (*rank)(MslCommGroup* group);
  int (*size)(MslCommGroup* group);
  // A sub-group of the world holding `ranks` (world ranks, in order); every
  // world rank calls it, members and others alike (MPI_Comm_split). A
  // non-member gets a null group.
  int (*create_group)(const int* ranks, int n, MslCommGroup** out, char* err, size_t errlen);
  void (*destroy_group)(MslCommGroup* group);
  // recv = op over ranks of send (count elements); send == recv: in place.
  int (*iallreduce)(MslCommGroup* g, const void* send, void* recv, int64_t count, int dtype, int op,
                    MslCommRequest** req, char* err, size_t errlen);
  // recv = the ranks' `bytes` each, concatenated in rank order.
  int (*iallgather)(MslCommGroup* g, const void* send, void* recv, int64_t bytes, MslCommRequest** req, char* err,
                    size_t errlen);
  // recv = chunk `rank` (count elements) of op over ranks of send (size * count).
  int (*ireduce_scatter)(MslCommGroup* g, const void* send, void* recv, int64_t count, int dtype, int op,
                         MslCommRequest** req, char* err, size_t errlen);
  // buf = root's buf on every rank.
  int (*ibroadcast)(MslCommGroup* g, void* buf, int64_t bytes, int root, MslCommRequest** req, char* err,
                    size_t errlen);
  // 1 when `req` has completed (and is freed), 0 while in flight.
  int (*test)(MslCommRequest* req, int* done, char* err, size_t errlen);
  // Ends every process of the job (MPI_Abort): after a timeout, when the
  // others cannot be told any other way.
  void (*abort)(int code);
} MslCommBackend;

// The one symbol a back-end library exports.
typedef const MslCommBackend* (*MslCommBackendEntry)(void);
#define MSL_COMM_BACKEND_ENTRY "msl_comm_backend"

#ifdef __cplusplus
}
#endif
