#include "trainer/models.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetplan::trainer {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                        .stride(stride)
                        .padding(kernel / 2)
                        .bias(false));
}

// nn::Linear's function on nn::Linear's parameters (so checkpoints keep
// their names and shapes), computed as a 1x1 convolution: LibTorch runs
// CPU convolutions through oneDNN, while a Linear's matrix product goes to
// the system BLAS, which on Debian is the reference implementation unless
// OpenBLAS is installed; there the CNN's fc1 alone took a third of a step.
torch::Tensor FullyConnected(const nn::Linear& fc, const torch::Tensor& x) {
  const torch::Tensor& w = fc->weight;
  torch::Tensor y = torch::conv2d(x.view({x.size(0), x.size(1), 1, 1}),
                                  w.view({w.size(0), w.size(1), 1, 1}), fc->bias);
  return y.view({x.size(0), w.size(0)});
}

// Two conv/BatchNorm/pool stages and two linear layers: about 0.1 M
// parameters, small enough for CPU tests; BatchNorm lets it reach ~0.89 on
// Fashion-MNIST in two epochs even at the large learning rates that linear
// scaling gives four ranks.
class SmallCnn : public Classifier {
 public:
  explicit SmallCnn(const ModelSpec& spec)
      : conv1_(register_module("conv1", Conv(spec.channels, 16, 3, 1))),
        bn1_(register_module("bn1", nn::BatchNorm2d(16))),
        conv2_(register_module("conv2", Conv(16, 32, 3, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(32))),
        fc1_(register_module(
            "fc1", nn::Linear(32 * (spec.image_size / 4) *
                                  (spec.image_size / 4),
                              64))),
        fc2_(register_module("fc2", nn::Linear(64, spec.num_classes))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(bn1_(conv1_(x))), 2);
    x = torch::max_pool2d(torch::relu(bn2_(conv2_(x))), 2);
    x = torch::relu(FullyConnected(fc1_, x.flatten(1)));
    return FullyConnected(fc2_, x);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Linear fc1_, fc2_;
};

// A residual block: BasicBlock (two 3x3 convs) or Bottleneck (1x1, 3x3,
// 1x1 with 4x expansion), with a 1x1 projection when the shape changes.
class ResidualBlock : public nn::Module {
 public:
  ResidualBlock(int64_t in, int64_t planes, int64_t stride, bool bottleneck) {
    const int64_t out = bottleneck ? planes * 4 : planes;
    if (bottleneck) {
      Add(Conv(in, planes, 1, 1), planes);
      Add(Conv(planes, planes, 3, stride), planes);
      Add(Conv(planes, out, 1, 1), out);
    } else {
      Add(Conv(in, planes, 3, stride), planes);
      Add(Conv(planes, planes, 3, 1), planes);
    }
    if (stride != 1 || in != out) {
      downsample_ = register_module(
          "downsample", nn::Sequential(Conv(in, out, 1, stride),
                                       nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = x;
    for (size_t i = 0; i < convs_.size(); ++i) {
      y = norms_[i](convs_[i](y));
      if (i + 1 < convs_.size()) y = torch::relu(y);
    }
    return torch::relu(y + (downsample_ ? downsample_->forward(x) : x));
  }

 private:
  void Add(nn::Conv2d conv, int64_t channels) {
    const std::string n = std::to_string(convs_.size() + 1);
    convs_.push_back(register_module("conv" + n, conv));
    norms_.push_back(register_module("bn" + n, nn::BatchNorm2d(channels)));
  }

  std::vector<nn::Conv2d> convs_;
  std::vector<nn::BatchNorm2d> norms_;
  nn::Sequential downsample_{nullptr};
};

// torchvision's ResNet: 7x7 stem, max pool, four stages, global average pool.
class ResNet : public Classifier {
 public:
  ResNet(const ModelSpec& spec, const std::vector<int>& blocks,
         bool bottleneck)
      : stem_(register_module("conv1", Conv(spec.channels, 64, 7, 2))),
        stem_norm_(register_module("bn1", nn::BatchNorm2d(64))) {
    int64_t in = 64;
    const int64_t planes[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      for (int b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
        blocks_.push_back(register_module(
            absl::StrCat("layer", stage + 1, "_", b),
            std::make_shared<ResidualBlock>(in, planes[stage], stride,
                                            bottleneck)));
        in = bottleneck ? planes[stage] * 4 : planes[stage];
      }
    }
    fc_ = register_module("fc", nn::Linear(in, spec.num_classes));
    // torchvision's initialization; BatchNorm already starts at (1, 0).
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut,
                                  torch::kReLU);
      }
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(stem_norm_(stem_(x)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& block : blocks_) x = block->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  nn::Conv2d stem_;
  nn::BatchNorm2d stem_norm_;
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;
  nn::Linear fc_{nullptr};
};

}  // namespace

int InputChannels(const std::string& arch) { return arch == "cnn" ? 1 : 3; }

absl::StatusOr<std::shared_ptr<Classifier>> CreateModel(const ModelSpec& spec) {
  if (spec.arch == "cnn") {
    if (spec.image_size < 4 || spec.image_size % 4 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--arch=cnn needs an image size divisible by 4, got ",
          spec.image_size));
    }
    return std::shared_ptr<Classifier>(std::make_shared<SmallCnn>(spec));
  }
  if (spec.image_size < 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--arch=", spec.arch, " needs images of at least 32x32, got ",
        spec.image_size));
  }
  if (spec.arch == "resnet18") {
    return std::shared_ptr<Classifier>(
        std::make_shared<ResNet>(spec, std::vector<int>{2, 2, 2, 2}, false));
  }
  if (spec.arch == "resnet50") {
    return std::shared_ptr<Classifier>(
        std::make_shared<ResNet>(spec, std::vector<int>{3, 4, 6, 3}, true));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --arch=", spec.arch, ": expected cnn, resnet18 or resnet50"));
}

}  // namespace fleetplan::trainer
