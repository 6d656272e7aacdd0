#ifndef FLEETPLAN_TRAINER_CUDA_DEVICE_COUNT_H_
#define FLEETPLAN_TRAINER_CUDA_DEVICE_COUNT_H_

#include <cuda_runtime.h>

namespace fleetplan::trainer {

// How many CUDA devices this host has, asked of the CUDA runtime directly
// (not through the code under test), so that GPU tests skip where there are
// none; 0 when the runtime cannot tell.
inline int CudaDeviceCount() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess ? devices : 0;
}

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_CUDA_DEVICE_COUNT_H_
