#include "tools/plan/test_specs.h"

#include <utility>

#include "plugins/ssh/ssh_groups.h"

namespace fleetplan {

NodeSpec TestNode(const std::string& name, const std::string& address,
                  int index, int nproc, std::vector<int> gpus) {
  NodeSpec node;
  node.name = name;
  node.address = address;
  node.transport = "ssh";
  node.workdir = "/home/ubuntu/project";
  node.python.kind = PythonEnv::Kind::kVenv;
  node.python.venv = "/home/ubuntu/venvs/train";
  node.gpus = std::move(gpus);
  node.nproc = nproc;
  node.index = index;
  return node;
}

ClusterSpec TwoByTwoSpec() {
  ClusterSpec spec;
  spec.name = "resnet-2x2";
  spec.spec_path = "/home/me/fleetplan/cluster_specs/lambda.toml";
  NodeSpec worker = TestNode("worker", "104.171.200.182", 0, 2, {0, 1});
  worker.groups["ssh"] = "lambda-b";
  NodeSpec head = TestNode("head", "104.171.200.62", 1, 2, {0, 1});
  head.private_address = "10.0.0.5";
  head.chief = true;
  head.groups["ssh"] = "lambda";
  spec.nodes = {worker, head};
  SshGroup lambda;
  lambda.name = "lambda";
  lambda.user = "ubuntu";
  lambda.port = 22;
  lambda.key_file = "~/.ssh/lambda.pem";
  lambda.env = {{"LD_LIBRARY_PATH", "$LD_LIBRARY_PATH:/usr/local/cuda/lib64"}};
  SshGroup lambda_b;
  lambda_b.name = "lambda-b";
  lambda_b.user = "ubuntu";
  EditSshGroups(spec).groups = {lambda, lambda_b};
  spec.keys.distribute = true;
  spec.sync.enabled = true;
  spec.sync.source = "/home/me/fleetplan";
  spec.sync.exclude = {".git", "bazel-*", "*.pt"};
  spec.env = {{"NCCL_DEBUG", "INFO"}};
  spec.network.nccl_socket_ifname = "auto";
  spec.network.ib = false;
  spec.network.p2p = true;
  spec.network.master_port = 29500;
  spec.job.program = "//trainer:train";
  spec.job.args = {"--backend=gloo", "--dataset=fashion-mnist", "--epochs=2"};
  return spec;
}

ClusterSpec ThreeNodeSpec() {
  ClusterSpec spec;
  spec.name = "three";
  spec.spec_path = "/specs/three.toml";
  for (int i = 0; i < 3; ++i) {
    NodeSpec node = TestNode("n" + std::to_string(i), "10.1.0." + std::to_string(i + 1),
                             i, i + 1);
    node.transport = "local";
    node.python = PythonEnv();
    spec.nodes.push_back(node);
  }
  spec.nodes[0].chief = true;
  spec.network.master_port = 23456;
  spec.job.program = "bin/train.sh";
  return spec;
}

}  // namespace fleetplan
