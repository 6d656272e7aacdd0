#include "trainer/nccl_process_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"

namespace fleetplan::trainer {
namespace {

constexpr char kUniqueIdKey[] = "unique_id";

void ThrowIfCuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(
        absl::StrCat(what, ": ", cudaGetErrorString(error)));
  }
}

void ThrowIfNccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) {
    throw std::runtime_error(
        absl::StrCat(what, ": ", ncclGetErrorString(result)));
  }
}

ncclDataType_t NcclType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return ncclFloat32;
    case at::kDouble: return ncclFloat64;
    case at::kHalf: return ncclFloat16;
    case at::kInt: return ncclInt32;
    case at::kLong: return ncclInt64;
    case at::kByte: return ncclUint8;
    default:
      throw std::invalid_argument(absl::StrCat(
          "NCCL process group: unsupported dtype ",
          std::string(c10::toString(tensor.scalar_type()))));
  }
}

// Work that finished before it was returned: collectives here are
// synchronous with respect to the host.
class CompletedWork : public c10d::Work {
 public:
  explicit CompletedWork(std::vector<at::Tensor> tensors)
      : tensors_(std::move(tensors)) {}
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
  std::vector<at::Tensor> result() override { return tensors_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    auto future = c10::make_intrusive<c10::ivalue::Future>(
        c10::ListType::create(c10::TensorType::get()));
    future->markCompleted(c10::IValue(tensors_));
    return future;
  }

 private:
  std::vector<at::Tensor> tensors_;
};

class NcclProcessGroup : public c10d::ProcessGroup {
 public:
  NcclProcessGroup(int rank, int size, ncclComm_t comm, cudaStream_t stream)
      : ProcessGroup(rank, size), comm_(comm), stream_(stream) {}

  ~NcclProcessGroup() override {
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  const std::string getBackendName() const override { return "nccl"; }

  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override {
    if (opts.reduceOp != c10d::ReduceOp::SUM) {
      throw std::invalid_argument("NCCL process group: only SUM all-reduce");
    }
    for (at::Tensor& tensor : tensors) {
      Staged(tensor, [&](void* buffer, size_t count, ncclDataType_t type) {
        ThrowIfNccl(ncclAllReduce(buffer, buffer, count, type, ncclSum,
                                  comm_, stream_),
                    "ncclAllReduce");
      });
    }
    return c10::make_intrusive<CompletedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override {
    for (at::Tensor& tensor : tensors) {
      Staged(tensor, [&](void* buffer, size_t count, ncclDataType_t type) {
        ThrowIfNccl(ncclBroadcast(buffer, buffer, count, type,
                                  static_cast<int>(opts.rootRank), comm_,
                                  stream_),
                    "ncclBroadcast");
      });
    }
    return c10::make_intrusive<CompletedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions&) override {
    std::vector<at::Tensor> token = {at::zeros({1})};
    return allreduce(token, c10d::AllreduceOptions());
  }

 private:
  // Copies `tensor` to the device buffer, runs `collective` on it, and
  // copies the result back into `tensor`.
  template <typename Collective>
  void Staged(at::Tensor& tensor, Collective collective) {
    at::Tensor host = tensor.contiguous();
    const size_t bytes = host.numel() * host.element_size();
    Reserve(bytes);
    ThrowIfCuda(cudaMemcpyAsync(device_buffer_, host.data_ptr(), bytes,
                                cudaMemcpyHostToDevice, stream_),
                "cudaMemcpy to device");
    collective(device_buffer_, host.numel(), NcclType(host));
    ThrowIfCuda(cudaMemcpyAsync(host.data_ptr(), device_buffer_, bytes,
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpy to host");
    ThrowIfCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    if (!host.is_same(tensor)) tensor.copy_(host);
  }

  void Reserve(size_t bytes) {
    if (bytes <= capacity_) return;
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    device_buffer_ = nullptr;
    ThrowIfCuda(cudaMalloc(&device_buffer_, bytes), "cudaMalloc");
    capacity_ = bytes;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  void* device_buffer_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

absl::Status CheckNcclAvailable() {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--backend=nccl needs a CUDA device, and this host has none (",
        error != cudaSuccess ? cudaGetErrorString(error) : "0 devices",
        "); use --backend=gloo on CPU"));
  }
  return absl::OkStatus();
}

absl::StatusOr<c10::intrusive_ptr<c10d::ProcessGroup>> MakeNcclProcessGroup(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
    int local_rank) {
  FP_RETURN_IF_ERROR(CheckNcclAvailable());
  try {
    ThrowIfCuda(cudaSetDevice(local_rank), "cudaSetDevice(LOCAL_RANK)");
    ncclUniqueId id;
    if (rank == 0) {
      ThrowIfNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
      store->set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
    } else {
      std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
      if (bytes.size() != sizeof(id)) {
        throw std::runtime_error("NCCL unique id has the wrong size");
      }
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
    ncclComm_t comm;
    ThrowIfNccl(ncclCommInitRank(&comm, world_size, id, rank),
                "ncclCommInitRank");
    cudaStream_t stream;
    ThrowIfCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                "cudaStreamCreate");
    return c10::intrusive_ptr<c10d::ProcessGroup>(
        c10::make_intrusive<NcclProcessGroup>(rank, world_size, comm, stream));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "rank ", rank, ": cannot set up NCCL on device ", local_rank, ": ",
        e.what()));
  }
}

}  // namespace fleetplan::trainer
