// The MPI back end of MSL's collectives (kernels/comm/comm_backend.h):
// built as libmsl_comm_mpi.so against the MPI found at build time (Debian's
// Open MPI), opened by kernels/comm/communicator.cpp under a launcher.
//
// MSL calls MPI from one thread (the interpreter's), so MPI_THREAD_FUNNELED
// is all it asks for. Errors come back as codes (MPI_ERRORS_RETURN on every
// communicator) and are turned into text here; nothing in this file
// aborts except `abort`, which is what it is for.
// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <new>

#include "kernels/comm/comm_backend.h"

struct MslCommGroup {
  MPI_Comm comm;
};
struct MslCommRequest {
  MPI_Request request;
};

namespace {

MslCommGroup g_world{MPI_COMM_NULL};
bool g_we_initialized = false;

int fail(char* err, size_t errlen, const char* what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "MPI error %d", code);
  std::snprintf(err, errlen, "%s: %s", what, text);
  return 1;
}

int too_large(char* err, size_t errlen, const char* what, int64_t count) {
  std::snprintf(err, errlen, "%s: %lld elements is more than MPI's int count allows (%d)", what,
                static_cast<long long>(count), INT_MAX);
  return 1;
}

MPI_Datatype mpi_type(int dtype) {
  switch (dtype) {
    case MSL_COMM_INT32: return MPI_INT32_T;
    case MSL_COMM_INT64: return MPI_INT64_T;
    case MSL_COMM_FLOAT32: return MPI_FLOAT;
    case MSL_COMM_FLOAT64: return MPI_DOUBLE;
    default: return MPI_BYTE;
  }
}

MPI_Op mpi_op(int op) {
  switch (op) {
    case MSL_COMM_PROD: return MPI_PROD;
    case MSL_COMM_MAX: return MPI_MAX;
    case MSL_COMM_MIN: return MPI_MIN;
    default: return MPI_SUM;
  }
}

int start(int code, MPI_Request request, MslCommRequest** out, const char* what, char* err, size_t errlen) {
  if (code != MPI_SUCCESS) return fail(err, errlen, what, code);
  *out = new (std::nothrow) MslCommRequest{request};
  if (*out == nullptr) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    std::snprintf(err, errlen, "%s: out of memory", what);
    return 1;
  }
  return 0;
}

int init(char* err, size_t errlen) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    std::snprintf(err, errlen, "init: MPI cannot be started again in a process after release()");
    return 1;
  }
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (code != MPI_SUCCESS) return fail(err, errlen, "MPI_Init_thread", code);
    g_we_initialized = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_world.comm = MPI_COMM_WORLD;
  return 0;
}

int finalize(char* err, size_t errlen) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!g_we_initialized || finalized) return 0;
  int code = MPI_Finalize();
  return code == MPI_SUCCESS ? 0 : fail(err, errlen, "MPI_Finalize", code);
}

MslCommGroup* world() { return &g_world; }

int rank(MslCommGroup* g) {
  int r = 0;
  MPI_Comm_rank(g->comm, &r);
  return r;
}

int size(MslCommGroup* g) {
  int n = 0;
  MPI_Comm_size(g->comm, &n);
  return n;
}

int local_rank(MslCommGroup* g, int* r, int* n, char* err, size_t errlen) {
  MPI_Comm node;
  int code = MPI_Comm_split_type(g->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (code != MPI_SUCCESS) return fail(err, errlen, "MPI_Comm_split_type", code);
  MPI_Comm_rank(node, r);
  MPI_Comm_size(node, n);
  MPI_Comm_free(&node);
  return 0;
}

int create_group(const int* ranks, int n, MslCommGroup** out, char* err, size_t errlen) {
  int me = rank(&g_world);
  int key = -1;
  for (int i = 0; i < n; ++i)
    if (ranks[i] == me) key = i;
  MPI_Comm comm = MPI_COMM_NULL;
  int code = MPI_Comm_split(MPI_COMM_WORLD, key >= 0 ? 0 : MPI_UNDEFINED, key, &comm);
  if (code != MPI_SUCCESS) return fail(err, errlen, "MPI_Comm_split", code);
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return 0;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  *out = new (std::nothrow) MslCommGroup{comm};
  if (*out == nullptr) {
    MPI_Comm_free(&comm);
    std::snprintf(err, errlen, "create_group: out of memory");
    return 1;
  }
  return 0;
}

void destroy_group(MslCommGroup* g) {
  if (g == nullptr || g == &g_world) return;
  MPI_Comm_free(&g->comm);
  delete g;
}

int iallreduce(MslCommGroup* g, const void* send, void* recv, int64_t count, int dtype, int op, MslCommRequest** req,
               char* err, size_t errlen) {
  if (count > INT_MAX) return too_large(err, errlen, "MPI_Iallreduce", count);
  MPI_Request r;
  int code = MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(count), mpi_type(dtype),
                            mpi_op(op), g->comm, &r);
  return start(code, r, req, "MPI_Iallreduce", err, errlen);
}

int iallgather(MslCommGroup* g, const void* send, void* recv, int64_t bytes, MslCommRequest** req, char* err,
               size_t errlen) {
  if (bytes > INT_MAX) return too_large(err, errlen, "MPI_Iallgather", bytes);
  MPI_Request r;
  int n = static_cast<int>(bytes);
  int code = MPI_Iallgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, g->comm, &r);
  return start(code, r, req, "MPI_Iallgather", err, errlen);
}

int ireduce_scatter(MslCommGroup* g, const void* send, void* recv, int64_t count, int dtype, int op,
                    MslCommRequest** req, char* err, size_t errlen) {
  if (count > INT_MAX) return too_large(err, errlen, "MPI_Ireduce_scatter_block", count);
  MPI_Request r;
  int code = MPI_Ireduce_scatter_block(send, recv, static_cast<int>(count), mpi_type(dtype), mpi_op(op), g->comm, &r);
  return start(code, r, req, "MPI_Ireduce_scatter_block", err, errlen);
}

int ibroadcast(MslCommGroup* g, void* buf, int64_t bytes, int root, MslCommRequest** req, char* err, size_t errlen) {
  if (bytes > INT_MAX) return too_large(err, errlen, "MPI_Ibcast", bytes);
  MPI_Request r;
  int code = MPI_Ibcast(buf, static_cast<int>(bytes), MPI_BYTE, root, g->comm, &r);
  return start(code, r, req, "MPI_Ibcast", err, errlen);
}

int test(MslCommRequest* req, int* done, char* err, size_t errlen) {
  int flag = 0;
  int code = MPI_Test(&req->request, &flag, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    delete req;
    return fail(err, errlen, "MPI_Test", code);
  }
  *done = flag;
  if (flag) delete req;
  return 0;
}

void abort_job(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

const MslCommBackend kBackend = {MSL_COMM_ABI_VERSION, "mpi", init, finalize, world, local_rank, rank, size,
                                 create_group, destroy_group, iallreduce, iallgather, ireduce_scatter, ibroadcast,
                                 test, abort_job};

}  // namespace

extern "C" __attribute__((visibility("default"))) const MslCommBackend* msl_comm_backend() { return &kBackend; }
