#ifndef FLEETPLAN_TRAINER_MODELS_H_
#define FLEETPLAN_TRAINER_MODELS_H_

// The image classifiers the trainer offers: a small conv net for
// Fashion-MNIST and torchvision-style ResNet-18/50.

#include <torch/torch.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fleetplan::trainer {

struct ModelSpec {
  std::string arch = "cnn";  // "cnn" | "resnet18" | "resnet50"
  int channels = 1;
  int image_size = 28;
  int num_classes = 10;
};

// A module mapping N x C x H x W images to N x num_classes logits.
class Classifier : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor images) = 0;
};

// Builds the model `spec` names, initialized from torch's global generator.
// InvalidArgument for an unknown arch or an image size it cannot take.
absl::StatusOr<std::shared_ptr<Classifier>> CreateModel(const ModelSpec& spec);

// The input channels `arch` expects: 1 for cnn, 3 for the ResNets.
int InputChannels(const std::string& arch);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_MODELS_H_
