#include "tools/spec/spec_parser.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "plugins/docker/docker_settings.h"
#include "plugins/ssh/ssh_groups.h"
#include "tools/spec/settings_parser.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

constexpr char kPath[] = "/specs/cluster.toml";

// A valid two-node spec that each test varies.
constexpr char kBase[] = R"(
[defaults]
transport = "ssh"
workdir = "/home/ubuntu/project"
ssh = "lambda"

[[nodes]]
address = "10.0.0.1"
gpus = [0, 1]
chief = true

[[nodes]]
address = "10.0.0.2"
gpus = [0, 1]

[ssh.lambda]
user = "ubuntu"

[job]
program = "//trainer:train"
)";

// $TEST_TMPDIR without a trailing "/", as LoadSpecFile names it.
std::string NormalizedTmpDir() {
  std::string dir = getenv("TEST_TMPDIR");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<ClusterSpec> spec = ParseSpec(text, kPath);
  EXPECT_FALSE(spec.ok()) << "parsed without error:\n" << text;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(SpecParserTest, ResolvesDefaultsAndDerivedValues) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(kBase, kPath));
  EXPECT_EQ(spec.name, "cluster");
  EXPECT_EQ(spec.spec_path, kPath);
  ASSERT_EQ(spec.nodes.size(), 2u);
  const NodeSpec& worker = spec.nodes[1];
  EXPECT_EQ(worker.name, "10.0.0.2");
  EXPECT_EQ(worker.private_address, "10.0.0.2");
  EXPECT_EQ(worker.transport, "ssh");
  EXPECT_EQ(worker.workdir, "/home/ubuntu/project");
  EXPECT_EQ(worker.GroupIn("ssh"), "lambda");
  EXPECT_EQ(worker.nproc, 2);
  EXPECT_EQ(worker.index, 1);
  EXPECT_FALSE(worker.chief);
  EXPECT_EQ(worker.location.line, 12);
  EXPECT_EQ(spec.chief().address, "10.0.0.1");
  EXPECT_EQ(spec.network.master_port, 29500);
  EXPECT_FALSE(spec.sync.enabled);
}

TEST(SpecParserTest, NodeValuesOverrideDefaults) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(R"(
name = "mixed"
[defaults]
workdir = "/w/"
python = { venv = "/venvs/a" }
gpus = [0]
[[nodes]]
address = "a.example"
name = "head"
chief = true
[[nodes]]
address = "b.example"
private_address = "10.1.0.2"
workdir = "/other"
transport = "docker"
python = { conda = "torch", conda_sh = "/opt/conda/etc/profile.d/conda.sh" }
gpus = []
cpus = [0, 3]
[docker]
image = "img:latest"
[sync]
source = "../src/./x"
exclude = [".git"]
[job]
program = "bin/train"
nproc_per_node = 3
restarts = 2
args = ["--a", "--b=c"]
)", kPath));
  EXPECT_EQ(spec.name, "mixed");
  const NodeSpec& head = spec.nodes[0];
  const NodeSpec& other = spec.nodes[1];
  EXPECT_EQ(head.name, "head");
  EXPECT_EQ(head.transport, "local");
  EXPECT_EQ(head.workdir, "/w");
  EXPECT_EQ(head.python.kind, PythonEnv::Kind::kVenv);
  EXPECT_EQ(head.python.venv, "/venvs/a");
  EXPECT_EQ(head.gpus, std::vector<int>{0});
  EXPECT_EQ(other.private_address, "10.1.0.2");
  EXPECT_EQ(other.workdir, "/other");
  EXPECT_EQ(other.transport, "docker");
  EXPECT_EQ(other.python.kind, PythonEnv::Kind::kConda);
  EXPECT_EQ(other.python.conda, "torch");
  EXPECT_EQ(other.python.conda_sh, "/opt/conda/etc/profile.d/conda.sh");
  EXPECT_TRUE(other.gpus.empty());
  EXPECT_EQ(other.cpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(head.nproc, 3);
  EXPECT_EQ(other.nproc, 3);
  EXPECT_TRUE(spec.sync.enabled);
  EXPECT_EQ(spec.sync.source, "/src/x");
  EXPECT_EQ(spec.sync.exclude, std::vector<std::string>{".git"});
  EXPECT_EQ(spec.job.program, "bin/train");
  EXPECT_EQ(spec.job.restarts, 2);
  EXPECT_EQ(spec.job.args, (std::vector<std::string>{"--a", "--b=c"}));
  EXPECT_EQ(DockerSettingsOf(spec).image, "img:latest");
}

TEST(SpecParserTest, ReadsSshGroupsEnvNetworkAndKeys) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(absl::StrCat(kBase, R"(
[ssh.other]
user = "ec2-user"
port = 2222
key_file = "~/.ssh/k.pem"
known_hosts = "/etc/kh"
env = { LD_LIBRARY_PATH = "$LD_LIBRARY_PATH:/usr/local/cuda/lib64" }
[keys]
distribute = true
[env]
NCCL_DEBUG = "INFO"
HOSTILE = "$(rm -rf ~) `id` '\" \\"
[network]
nccl_socket_ifname = "^lo,docker0"
ib = false
p2p = true
master_port = 1234
)"), kPath));
  const auto* groups = dynamic_cast<const SshGroups*>(spec.Settings("ssh"));
  ASSERT_NE(groups, nullptr);
  const SshGroup* other = groups->Find("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->user, "ec2-user");
  EXPECT_EQ(other->port, 2222);
  EXPECT_EQ(other->key_file, "~/.ssh/k.pem");
  EXPECT_EQ(other->known_hosts, "/etc/kh");
  EXPECT_EQ(other->env, (EnvList{{"LD_LIBRARY_PATH", "$LD_LIBRARY_PATH:/usr/local/cuda/lib64"}}));
  EXPECT_TRUE(spec.keys.distribute);
  // TOML tables are unordered; variables come sorted by name.
  EXPECT_EQ(spec.env, (EnvList{{"HOSTILE", "$(rm -rf ~) `id` '\" \\"}, {"NCCL_DEBUG", "INFO"}}));
  EXPECT_EQ(spec.network.nccl_socket_ifname, "^lo,docker0");
  EXPECT_EQ(spec.network.ib, false);
  EXPECT_EQ(spec.network.p2p, true);
  EXPECT_EQ(spec.network.master_port, 1234);
}

TEST(SpecParserTest, SingleNodeNeedsNoChief) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(R"(
[[nodes]]
address = "127.0.0.1"
workdir = "/tmp/w"
[job]
program = "//trainer:train"
)", kPath));
  EXPECT_EQ(spec.chief().address, "127.0.0.1");
  EXPECT_EQ(spec.nodes[0].nproc, 1);
}

TEST(SpecParserTest, TomlSyntaxErrorHasItsLocation) {
  EXPECT_EQ(ErrorOf("[job]\nprogram = \"//x:y\n"),
            "/specs/cluster.toml:2:17: error: invalid TOML: Error while parsing string: "
            "unescaped control characters other than TAB (U+0009) are explicitly "
            "prohibited\n  program = \"//x:y\n                  ^");
}

// NUL can reach no argv, environ or path; other control characters are
// refused in names and paths, and allowed in arguments and environment
// values only as tabs and newlines.
TEST(SpecParserTest, NulIsRefusedEverywhere) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "args = [\"--a\", \"x\\u0000\"]\n")),
            "/specs/cluster.toml:21:16: error: job.args: contains a NUL byte (\\u0000) at "
            "character 2: no path, argument or environment value can hold one\n"
            "  args = [\"--a\", \"x\\u0000\"]\n"
            "                 ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[env]\nA = \"\\u0000\"\n")),
            "/specs/cluster.toml:22:5: error: env.A: contains a NUL byte (\\u0000) at "
            "character 1: no path, argument or environment value can hold one\n"
            "  A = \"\\u0000\"\n"
            "      ^");
}

TEST(SpecParserTest, ControlCharactersInNamesAndPathsAreRefused) {
  std::string text = kBase;
  text.replace(text.find("\"/home/ubuntu/project\""), 22, "\"/home/ubuntu/pr\\noject\"");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:4:11: error: defaults.workdir: contains the control "
            "character \\u000a at character 16 (names and paths must be printable text)\n"
            "  workdir = \"/home/ubuntu/pr\\noject\"\n"
            "            ^");
  // A transport's own table reads its strings through the same reader.
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[docker]\nimage = \"n\\u00e9\\u007f\"\n")),
            "/specs/cluster.toml:22:9: error: docker.image: contains the control "
            "character \\u007f at character 3 (names and paths must be printable text)\n"
            "  image = \"n\\u00e9\\u007f\"\n"
            "          ^");
}

TEST(SpecParserTest, ArgumentsAndEnvValuesMayHoldTabsAndNewlinesOnly) {
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseSpec(absl::StrCat(kBase, "args = [\"-c\", \"\"\"import os\n\tprint(1)\n\"\"\"]\n",
                             "[env]\nA = \"x\\ty\\nz\"\n"),
                kPath));
  EXPECT_EQ(spec.job.args, (std::vector<std::string>{"-c", "import os\n\tprint(1)\n"}));
  EXPECT_EQ(spec.env, (EnvList{{"A", "x\ty\nz"}}));
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "args = [\"\\u001b[31m\"]\n[env]\nB = \"a\\r\\n\"\n")),
            "/specs/cluster.toml:23:5: error: env.B: contains the control character \\u000d at "
            "character 2 (arguments and environment values may hold tabs and newlines, no "
            "other control characters)\n"
            "  B = \"a\\r\\n\"\n"
            "      ^\n"
            "/specs/cluster.toml:21:9: error: job.args: contains the control character "
            "\\u001b at character 1 (arguments and environment values may hold tabs and "
            "newlines, no other control characters)\n"
            "  args = [\"\\u001b[31m\"]\n"
            "          ^");
}

TEST(SpecParserTest, AnErrorOnAVeryLongLineQuotesAWindowAroundIt) {
  std::string args = "args = [";
  for (int i = 0; i < 20000; ++i) absl::StrAppend(&args, "\"--flag", i % 10, "\", ");
  args += "7]\n";
  std::string error = ErrorOf(absl::StrCat(kBase, args));
  // The 7 is the last but one character of the line.
  const size_t seven = args.size() - 3;
  EXPECT_EQ(error, absl::StrCat("/specs/cluster.toml:21:", seven + 1,
                                ": error: job.args: expected a string, got an integer\n  ...",
                                args.substr(args.size() - 1 - 100, 100), "\n  ",
                                std::string(3 + 98, ' '), "^"));
}

// Found by spec_fuzzer: TOML++ 3.3.0 asserted on these in debug builds.
TEST(SpecParserTest, ATableHeaderWithoutAKeyIsATomlError) {
  EXPECT_EQ(ErrorOf("[\n"),
            "/specs/cluster.toml:1:2: error: invalid TOML: Error while parsing key: expected "
            "bare key starting character or string delimiter, saw '\\n'\n  [\n   ^");
  EXPECT_EQ(ErrorOf("[job]\n[[ [a]]\n"),
            "/specs/cluster.toml:2:4: error: invalid TOML: Error while parsing key: expected "
            "bare key starting character or string delimiter, saw '['\n  [[ [a]]\n     ^");
}

// Found by spec_fuzzer: TOML++ 3.3.0 reached __builtin_unreachable on a
// character from U+00A1 to U+0499 wherever whitespace may come.
TEST(SpecParserTest, NonAsciiCharactersOutsideStringsAreTomlErrors) {
  EXPECT_EQ(ErrorOf("caf\xc3\xa9 = 1\n"),
            "/specs/cluster.toml:1:4: error: invalid TOML: Error while parsing key-value pair: "
            "expected '=', saw '\xc3\xa9'\n  caf\xc3\xa9 = 1\n     ^");
  EXPECT_EQ(ErrorOf("a = 1\xd0\x96\n"),
            "/specs/cluster.toml:1:6: error: invalid TOML: Error while parsing decimal integer: "
            "expected digit, saw '\xd0\x96'\n  a = 1\xd0\x96\n       ^");
}

TEST(SpecParserTest, ANonAsciiCharacterAfterALineEndingBackslashIsText) {
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseSpec(absl::StrCat(kBase, "[env]\nA = \"\"\"x\\\n  \xc3\xa9\\\n \xe3\x80\x80y\"\"\"\n"),
                kPath));
  // U+3000, an ideographic space, is whitespace the backslash trims.
  EXPECT_EQ(spec.env, (EnvList{{"A", "x\xc3\xa9y"}}));
}

TEST(SpecParserTest, UnknownKeySuggestsTheNearest) {
  std::string text = kBase;
  text.replace(text.find("gpus = [0, 1]\nchief"), 4, "gpu ");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:9:1: error: nodes[0].gpu: unknown key (expected one of: "
            "transport, workdir, ssh, python, gpus, cpus, address, private_address, chief, spare, "
            "name); did you mean `gpus`?\n  gpu  = [0, 1]\n  ^");
}

TEST(SpecParserTest, SyncRelayIsAutoUnlessTurnedOff) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec relayed, ParseSpec(absl::StrCat(kBase, "[sync]\n"), kPath));
  EXPECT_TRUE(relayed.sync.relay);
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec direct,
                          ParseSpec(absl::StrCat(kBase, "[sync]\nrelay = \"off\"\n"), kPath));
  EXPECT_FALSE(direct.sync.relay);
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[sync]\nrelay = \"always\"\n")),
            "/specs/cluster.toml:22:9: error: sync.relay: \"always\" is not a relay mode "
            "(expected \"auto\" or \"off\")\n  relay = \"always\"\n          ^");
}

TEST(SpecParserTest, UnknownTopLevelTable) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[netwrok]\nib = false\n")),
            "/specs/cluster.toml:21:2: error: netwrok: unknown key (expected one of: name, "
            "defaults, nodes, ssh, keys, sync, env, secrets, network, job, docker); did you mean "
            "`network`?\n  [netwrok]\n   ^");
}

TEST(SpecParserTest, UnknownTransportTableSuggestsARegisteredOne) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[dockr]\nimage = \"x\"\n")),
            "/specs/cluster.toml:21:2: error: dockr: unknown key (expected one of: name, "
            "defaults, nodes, ssh, keys, sync, env, secrets, network, job, docker); did you mean "
            "`docker`?\n  [dockr]\n   ^");
}

// The tables and node keys of a transport exist only while its settings
// parser is registered: without the ssh plugin, [ssh.<group>] is unknown.
TEST(SpecParserTest, TablesOfUnlinkedTransportsAreUnknown) {
  ScopedSettingsParser no_ssh("ssh", nullptr);
  std::string error = ErrorOf(kBase);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:16:2: error: ssh: unknown key (expected one of: name, "
            "defaults, nodes, keys, sync, env, secrets, network, job, docker)");
  EXPECT_NE(error.find("defaults.ssh: unknown key (expected one of: transport, workdir, "
                       "python, gpus, cpus)"),
            std::string::npos)
      << error;
}

TEST(SpecParserTest, WrongTypeNamesTheExpectedOne) {
  std::string text = kBase;
  text.replace(text.find("chief = true"), 12, "chief = \"yes\"");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:10:9: error: nodes[0].chief: expected true or false, got a "
            "string\n  chief = \"yes\"\n          ^\n"
            "/specs/cluster.toml:7:1: error: nodes: exactly one node must set `chief = true` "
            "when there is more than one node; none does\n  [[nodes]]\n  ^");
}

TEST(SpecParserTest, NoChiefAmongSeveralNodes) {
  std::string text = kBase;
  text.replace(text.find("chief = true"), 12, "");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:7:1: error: nodes: exactly one node must set `chief = true` "
            "when there is more than one node; none does\n  [[nodes]]\n  ^");
}

TEST(SpecParserTest, TwoChiefs) {
  std::string text = kBase;
  text.replace(text.find("address = \"10.0.0.2\""), 20, "address = \"10.0.0.2\"\nchief = true");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:14:9: error: nodes[1].chief: only one node may be the chief; "
            "node '10.0.0.1' (line 7) already is\n  chief = true\n          ^");
}

TEST(SpecParserTest, ChiefNotFirst) {
  std::string text = kBase;
  text.replace(text.find("chief = true"), 12, "");
  text.replace(text.find("address = \"10.0.0.2\""), 20, "address = \"10.0.0.2\"\nchief = true");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:14:9: error: nodes[1].chief: the chief must be the first "
            "[[nodes]] entry: ranks are numbered in file order and rank 0 serves the rendezvous "
            "at MASTER_ADDR, the chief's address\n  chief = true\n          ^");
}

TEST(SpecParserTest, DuplicateAddressAndName) {
  std::string text = kBase;
  text.replace(text.find("10.0.0.2"), 8, "10.0.0.1");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:13:11: error: nodes[1].address: \"10.0.0.1\" is already the "
            "address of node '10.0.0.1' (line 7)\n  address = \"10.0.0.1\"\n            ^");
  std::string names = kBase;
  names.replace(names.find("chief = true"), 12, "chief = true\nname = \"n\"");
  names.replace(names.find("address = \"10.0.0.2\""), 20, "address = \"10.0.0.2\"\nname = \"n\"");
  EXPECT_EQ(ErrorOf(names),
            "/specs/cluster.toml:15:8: error: nodes[1].name: \"n\" is already the name of node "
            "at line 7\n  name = \"n\"\n         ^");
}

TEST(SpecParserTest, BadAddresses) {
  std::string text = kBase;
  text.replace(text.find("10.0.0.2"), 8, "300.0.0.2");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:13:11: error: nodes[1].address: \"300.0.0.2\" is not a valid "
            "hostname, IPv4 or IPv6 address\n  address = \"300.0.0.2\"\n            ^");
  std::string missing = kBase;
  missing.replace(missing.find("address = \"10.0.0.2\""), 20, "");
  EXPECT_EQ(ErrorOf(missing),
            "/specs/cluster.toml:12:1: error: nodes[1].address: missing: every node needs an "
            "address\n  [[nodes]]\n  ^");
}

TEST(SpecParserTest, EnvKeysAreChecked) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[env]\n1BAD = \"x\"\n")),
            "/specs/cluster.toml:22:1: error: env.1BAD: not a valid environment variable name "
            "(expected letters, digits and _, not starting with a digit)\n  1BAD = \"x\"\n  ^");
}

TEST(SpecParserTest, ReadsSecretsSortedByName) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(absl::StrCat(kBase, R"([secrets]
WANDB_API_KEY = { env = "WANDB_KEY_HERE" }
HF_TOKEN = { file = "~/.cache/huggingface/token" }
DB_PASSWORD = { command = "pass show db" }
)"), kPath));
  ASSERT_EQ(spec.secrets.size(), 3u);
  EXPECT_EQ(spec.secrets[0].name, "DB_PASSWORD");
  EXPECT_EQ(spec.secrets[0].source, SecretSpec::Source::kCommand);
  EXPECT_EQ(spec.secrets[0].from, "pass show db");
  EXPECT_EQ(spec.secrets[1].name, "HF_TOKEN");
  EXPECT_EQ(spec.secrets[1].source, SecretSpec::Source::kFile);
  EXPECT_EQ(spec.secrets[1].from, "~/.cache/huggingface/token");
  EXPECT_EQ(spec.secrets[2].name, "WANDB_API_KEY");
  EXPECT_EQ(spec.secrets[2].source, SecretSpec::Source::kEnv);
  EXPECT_EQ(spec.secrets[2].from, "WANDB_KEY_HERE");
  EXPECT_EQ(spec.secrets[2].location.line, 22);
}

TEST(SpecParserTest, SecretErrorsPointAtTheEntry) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\nTOKEN = { enV = \"T\" }\n")),
            "/specs/cluster.toml:22:11: error: secrets.TOKEN.enV: unknown key (expected one "
            "of: env, file, command); did you mean `env`?\n  TOKEN = { enV = \"T\" }\n"
            "            ^\n"
            "/specs/cluster.toml:22:9: error: secrets.TOKEN: expected exactly one of `env`, "
            "`file` or `command`\n  TOKEN = { enV = \"T\" }\n          ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\nTOKEN = \"hunter2\"\n")),
            "/specs/cluster.toml:22:9: error: secrets.TOKEN: expected a table with one "
            "source: { env = \"VAR\" }, { file = \"PATH\" } or { command = \"CMD\" }, got "
            "a string\n  TOKEN = \"hunter2\"\n          ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\nTOKEN = { env = \"A\", file = \"/f\" }\n")),
            "/specs/cluster.toml:22:9: error: secrets.TOKEN: expected exactly one of `env`, "
            "`file` or `command`\n  TOKEN = { env = \"A\", file = \"/f\" }\n          ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\n2X = { env = \"A\" }\n")),
            "/specs/cluster.toml:22:1: error: secrets.2X: not a valid environment variable "
            "name (expected letters, digits and _, not starting with a digit)\n"
            "  2X = { env = \"A\" }\n  ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\nX = { env = \"A-B\" }\n")),
            "/specs/cluster.toml:22:13: error: secrets.X.env: \"A-B\" is not an environment "
            "variable name\n  X = { env = \"A-B\" }\n              ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[secrets]\nX = { command = \"\" }\n")),
            "/specs/cluster.toml:22:17: error: secrets.X.command: must not be empty\n"
            "  X = { command = \"\" }\n                  ^");
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[env]\nX = \"1\"\n[secrets]\nX = { env = \"X\" }\n")),
            "/specs/cluster.toml:24:5: error: secrets.X: is also set in [env]; a rank's "
            "variable comes from one of them\n  X = { env = \"X\" }\n      ^");
}

TEST(SpecParserTest, UserNamesAreChecked) {
  std::string text = kBase;
  text.replace(text.find("user = \"ubuntu\""), 15, "user = \"Ubuntu Admin\"");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:17:8: error: ssh.lambda.user: \"Ubuntu Admin\" is not a valid "
            "user name (expected lowercase letters, digits, _ and -, not starting with a digit "
            "or -)\n  user = \"Ubuntu Admin\"\n         ^");
}

TEST(SpecParserTest, UndefinedSshGroup) {
  std::string text = kBase;
  text.replace(text.find("ssh = \"lambda\""), 14, "ssh = \"lambd\"");
  std::string error = ErrorOf(text);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:5:7: error: nodes[0].ssh: no [ssh.lambd] group is defined "
            "(defined: lambda); did you mean `lambda`?");
  // Both nodes inherit the bad default, and both are reported.
  EXPECT_NE(error.find("nodes[1].ssh"), std::string::npos);
}

TEST(SpecParserTest, WorkdirMustBeAbsoluteAndPresent) {
  std::string text = kBase;
  text.replace(text.find("\"/home/ubuntu/project\""), 22, "\"project/../x\"");
  std::string error = ErrorOf(text);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:4:11: error: defaults.workdir: \"project/../x\" must be an "
            "absolute path without \".\" or \"..\" components");
  std::string missing = kBase;
  missing.replace(missing.find("workdir = \"/home/ubuntu/project\""), 32, "");
  error = ErrorOf(missing);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:7:1: error: nodes[0].workdir: missing: set `workdir` (an "
            "absolute path) in [defaults] or on the node");
}

TEST(SpecParserTest, PortsInRange) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[network]\nmaster_port = 70000\n")),
            "/specs/cluster.toml:22:15: error: network.master_port: port 70000 is out of range "
            "(expected 1 to 65535)\n  master_port = 70000\n                ^");
  std::string text = kBase;
  text.replace(text.find("user = \"ubuntu\""), 15, "port = 0");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:17:8: error: ssh.lambda.port: port 0 is out of range "
            "(expected 1 to 65535)\n  port = 0\n         ^");
}

TEST(SpecParserTest, GpuIdsUniqueAndNonNegative) {
  std::string text = kBase;
  text.replace(text.find("gpus = [0, 1]"), 13, "gpus = [0, 0, -1]");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:9:12: error: nodes[0].gpus: id 0 is listed twice\n"
            "  gpus = [0, 0, -1]\n"
            "             ^\n"
            "/specs/cluster.toml:9:15: error: nodes[0].gpus: id -1 is negative or too large\n"
            "  gpus = [0, 0, -1]\n"
            "                ^");
}

TEST(SpecParserTest, JobRules) {
  std::string text = kBase;
  text.replace(text.find("program = \"//trainer:train\""), 27,
               "program = \"//trainer train\"\nrestarts = -1\nnproc_per_node = 0");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:20:11: error: job.program: \"//trainer train\" is not a valid "
            "Bazel label (expected //package:target)\n  program = \"//trainer train\"\n"
            "            ^\n"
            "/specs/cluster.toml:22:18: error: job.nproc_per_node: 0 is out of range (expected "
            "1 to 4096 ranks per node)\n  nproc_per_node = 0\n                   ^\n"
            "/specs/cluster.toml:21:12: error: job.restarts: -1 is out of range (expected 0 to "
            "1000)\n  restarts = -1\n             ^");
  std::string missing = kBase;
  missing.replace(missing.find("program = \"//trainer:train\""), 27, "");
  EXPECT_EQ(ErrorOf(missing),
            "/specs/cluster.toml:19:1: error: job.program: missing: a Bazel label "
            "(//trainer:train) or a path under workdir\n  [job]\n  ^");
}

TEST(SpecParserTest, SupervisionKeys) {
  std::string text = kBase;
  text.replace(text.find("program = \"//trainer:train\""), 27,
               "program = \"//trainer:train\"\nsupervisor_port = 4000\nheartbeat_timeout = \"2m\"");
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(text, kPath));
  EXPECT_EQ(spec.job.supervisor_port, 4000);
  EXPECT_EQ(spec.SupervisorPort(), 4000);
  EXPECT_EQ(spec.job.heartbeat_timeout, absl::Minutes(2));
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec defaults, ParseSpec(kBase, kPath));
  EXPECT_EQ(defaults.SupervisorPort(), defaults.network.master_port + 1);
  EXPECT_EQ(defaults.job.heartbeat_timeout, absl::Seconds(30));

  std::string bad = kBase;
  bad.replace(bad.find("program = \"//trainer:train\""), 27,
              "program = \"//trainer:train\"\nheartbeat_timeout = \"soon\"");
  EXPECT_EQ(ErrorOf(bad),
            "/specs/cluster.toml:21:21: error: job.heartbeat_timeout: \"soon\" is not a duration "
            "from 1s to 1h (expected e.g. \"30s\" or \"2m\")\n  heartbeat_timeout = \"soon\"\n"
            "                      ^");
}

std::string WithJobKeys(absl::string_view keys) {
  std::string text = kBase;
  text.replace(text.find("program = \"//trainer:train\""), 27,
               absl::StrCat("program = \"//trainer:train\"\n", keys));
  return text;
}

TEST(SpecParserTest, HangTimeoutIsOffUnlessSet) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec defaults, ParseSpec(kBase, kPath));
  EXPECT_FALSE(defaults.job.hang_timeout.has_value());
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec,
                          ParseSpec(WithJobKeys("hang_timeout = \"10m\""), kPath));
  EXPECT_EQ(spec.job.hang_timeout, absl::Minutes(10));
  EXPECT_EQ(ErrorOf(WithJobKeys("hang_timeout = \"2s\"")),
            "/specs/cluster.toml:21:16: error: job.hang_timeout: \"2s\" is not a duration "
            "from 5s to 24h (expected e.g. \"10m\" or \"90s\")\n  hang_timeout = \"2s\"\n"
            "                 ^");
  EXPECT_THAT(ErrorOf(WithJobKeys("hang_timeout = 600")),
              ::testing::HasSubstr("job.hang_timeout: expected a string"));
}

TEST(SpecParserTest, AnElasticJobsKeys) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec defaults, ParseSpec(kBase, kPath));
  EXPECT_FALSE(defaults.job.min_nodes.has_value());
  EXPECT_FALSE(defaults.job.max_node_losses.has_value());
  EXPECT_EQ(defaults.job.rejoin, "restart");
  EXPECT_FALSE(defaults.nodes[1].spare);
  std::string text = WithJobKeys("min_nodes = 1\nmax_node_losses = 2\nrejoin = \"next-failure\"");
  text.replace(text.find("[ssh.lambda]"), 12,
               "[[nodes]]\naddress = \"10.0.0.3\"\nspare = true\n\n[ssh.lambda]");
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseSpec(text, kPath));
  EXPECT_EQ(spec.job.min_nodes, 1);
  EXPECT_EQ(spec.job.max_node_losses, 2);
  EXPECT_EQ(spec.job.rejoin, "next-failure");
  EXPECT_TRUE(spec.nodes[2].spare);
  EXPECT_FALSE(spec.nodes[1].spare);
  EXPECT_TRUE(spec.Elastic());
  EXPECT_FALSE(defaults.Elastic());
  // min_nodes at every node: a job that needs them all.
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec all, ParseSpec(WithJobKeys("min_nodes = 2"), kPath));
  EXPECT_FALSE(all.Elastic());
}

TEST(SpecParserTest, AnElasticJobsKeysAreChecked) {
  EXPECT_EQ(ErrorOf(WithJobKeys("min_nodes = 3")),
            "/specs/cluster.toml:21:13: error: job.min_nodes: 3 is more than the 2 nodes that "
            "are no spares\n  min_nodes = 3\n              ^");
  EXPECT_THAT(ErrorOf(WithJobKeys("min_nodes = 0")),
              ::testing::HasSubstr("job.min_nodes: 0 is out of range (expected at least 1 node)"));
  EXPECT_THAT(ErrorOf(WithJobKeys("max_node_losses = -1")),
              ::testing::HasSubstr("job.max_node_losses: -1 is out of range"));
  EXPECT_EQ(ErrorOf(WithJobKeys("rejoin = \"restrat\"")),
            "/specs/cluster.toml:21:10: error: job.rejoin: \"restrat\" is not a choice "
            "(expected \"restart\" or \"next-failure\"); did you mean `restart`?\n"
            "  rejoin = \"restrat\"\n           ^");
  std::string chief_spare = kBase;
  chief_spare.replace(chief_spare.find("chief = true"), 12, "chief = true\nspare = true");
  EXPECT_EQ(ErrorOf(chief_spare),
            "/specs/cluster.toml:11:9: error: nodes[0].spare: the chief cannot be a spare: its "
            "agent coordinates the job, and its loss ends it\n  spare = true\n          ^");
  // With a spare, min_nodes counts the others.
  std::string spare = WithJobKeys("min_nodes = 2");
  spare.replace(spare.find("gpus = [0, 1]\n\n[ssh"), 13, "gpus = [0, 1]\nspare = true");
  EXPECT_THAT(ErrorOf(spare), ::testing::HasSubstr("job.min_nodes: 2 is more than the 1 nodes"));
}

TEST(SpecParserTest, AProgressPatternIsARegularExpressionWithAGroup) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec defaults, ParseSpec(kBase, kPath));
  EXPECT_EQ(defaults.job.progress, "");
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec,
                          ParseSpec(WithJobKeys("progress = \"step (\\\\d+)\""), kPath));
  EXPECT_EQ(spec.job.progress, "step (\\d+)");
  EXPECT_EQ(ErrorOf(WithJobKeys("progress = \"step (\\\\d+\"")),
            "/specs/cluster.toml:21:12: error: job.progress: \"step (\\d+\" is not a progress "
            "pattern: missing ): step (\\d+\n  progress = \"step (\\\\d+\"\n"
            "             ^");
  EXPECT_EQ(ErrorOf(WithJobKeys("progress = 'step \\d+'")),
            "/specs/cluster.toml:21:12: error: job.progress: \"step \\d+\" is not a progress "
            "pattern: it has no capturing group around the step (expected e.g. "
            "\"step (\\\\d+)\")\n  progress = 'step \\d+'\n             ^");
  EXPECT_THAT(ErrorOf(WithJobKeys("progress = \"\"")),
              ::testing::HasSubstr("job.progress: must not be empty"));
  EXPECT_THAT(ErrorOf(WithJobKeys("progress = 3")),
              ::testing::HasSubstr("job.progress: expected a string"));
}

TEST(SpecParserTest, LauncherKeys) {
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec defaults, ParseSpec(kBase, kPath));
  EXPECT_EQ(defaults.job.launcher.launcher, Launcher::kTorchrun);
  EXPECT_EQ(defaults.job.launcher.local_rank_arg, "");
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec old_script,
      ParseSpec(WithJobKeys("launcher = \"distributed-launch\"\nlocal_rank_arg = \"--local_rank\""),
                kPath));
  EXPECT_EQ(old_script.job.launcher.launcher, Launcher::kDistributedLaunch);
  EXPECT_EQ(old_script.job.launcher.local_rank_arg, "--local_rank");
  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec mpi, ParseSpec(WithJobKeys("launcher = \"mpirun\""), kPath));
  EXPECT_EQ(mpi.job.launcher.launcher, Launcher::kMpirun);

  EXPECT_EQ(ErrorOf(WithJobKeys("launcher = \"torch-run\"")),
            "/specs/cluster.toml:21:12: error: job.launcher: \"torch-run\" is not a launcher "
            "(expected one of: torchrun, distributed-launch, mpirun, deepspeed); did you mean "
            "`torchrun`?\n  launcher = \"torch-run\"\n             ^");
  EXPECT_EQ(ErrorOf(WithJobKeys("launcher = \"deepspeed\"\nlocal_rank_arg = \"local rank\"")),
            "/specs/cluster.toml:22:18: error: job.local_rank_arg: \"local rank\" is not an "
            "option name (expected e.g. \"--local_rank\")\n  local_rank_arg = \"local rank\"\n"
            "                   ^");
  EXPECT_EQ(ErrorOf(WithJobKeys("local_rank_arg = \"--local_rank\"")),
            "/specs/cluster.toml:21:18: error: job.local_rank_arg: launcher \"torchrun\" passes "
            "no local-rank argument; set launcher = \"distributed-launch\" or \"deepspeed\", or "
            "remove this key\n  local_rank_arg = \"--local_rank\"\n                   ^");
}

TEST(SpecParserTest, PythonRules) {
  std::string text = kBase;
  text.replace(text.find("ssh = \"lambda\""), 14,
               "ssh = \"lambda\"\npython = { conda = \"torch\" }");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:6:10: error: defaults.python: `conda` needs `conda_sh`, the "
            "conda.sh to source before `conda activate`\n"
            "  python = { conda = \"torch\" }\n           ^");
  std::string both = kBase;
  both.replace(both.find("ssh = \"lambda\""), 14,
               "ssh = \"lambda\"\npython = { conda = \"t\", venv = \"/v\" }");
  std::string error = ErrorOf(both);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:6:10: error: defaults.python: expected exactly one of `venv` "
            "or `conda`");
}

TEST(SpecParserTest, TransportNamesAndDockerImage) {
  std::string text = kBase;
  text.replace(text.find("transport = \"ssh\""), 17, "transport = \"SSH\"");
  std::string error = ErrorOf(text);
  EXPECT_EQ(error.substr(0, error.find('\n')),
            "/specs/cluster.toml:3:13: error: nodes[0].transport: \"SSH\" is not a transport "
            "name (expected a lowercase name such as \"local\", \"ssh\" or \"docker\")");
  std::string docker = kBase;
  docker.replace(docker.find("transport = \"ssh\""), 17, "transport = \"docker\"");
  EXPECT_EQ(ErrorOf(docker),
            "/specs/cluster.toml:1:1: error: docker.image: missing: nodes with transport "
            "\"docker\" need [docker] image");
}

TEST(SpecParserTest, NcclSocketIfname) {
  EXPECT_EQ(ErrorOf(absl::StrCat(kBase, "[network]\nnccl_socket_ifname = \"eth0;id\"\n")),
            "/specs/cluster.toml:22:22: error: network.nccl_socket_ifname: \"eth0;id\" is not "
            "an interface spec (expected \"auto\", an interface such as \"ens3\", a list "
            "\"eth,ib\", or an exclusion \"^lo,docker0\")\n"
            "  nccl_socket_ifname = \"eth0;id\"\n                       ^");
}

TEST(SpecParserTest, ReportsEveryErrorInOneRun) {
  std::string text = kBase;
  text.replace(text.find("gpus = [0, 1]\nchief"), 4, "gpu ");
  text.replace(text.find("10.0.0.2"), 8, "bad host");
  text += "[env]\nA-B = \"x\"\n[network]\nmaster_port = 0\n";
  std::string error = ErrorOf(text);
  for (const char* expected : {"nodes[0].gpu:", "nodes[1].address:", "env.A-B:",
                               "network.master_port:"}) {
    EXPECT_NE(error.find(expected), std::string::npos) << expected << "\n" << error;
  }
}

// A workdir every node inherits is refused once, as [defaults]' own, with
// why `~` does not do; a node's own is refused as the node's.
TEST(SpecParserTest, AWorkdirInDefaultsIsRefusedOnceNotPerNode) {
  std::string text = kBase;
  text.replace(text.find("\"/home/ubuntu/project\""), 22, "\"~/fp\"");
  EXPECT_EQ(ErrorOf(text),
            "/specs/cluster.toml:4:11: error: defaults.workdir: \"~/fp\" must be an absolute "
            "path without \".\" or \"..\" components (the same on every node, such as "
            "\"/home/ubuntu/project\": `~` is not expanded)\n"
            "  workdir = \"~/fp\"\n"
            "            ^");
  std::string own = kBase;
  own.replace(own.find("address = \"10.0.0.2\""), 20, "address = \"10.0.0.2\"\nworkdir = \"w\"");
  EXPECT_THAT(ErrorOf(own), ::testing::StartsWith(
                                "/specs/cluster.toml:14:11: error: nodes[1].workdir: \"w\" must "
                                "be an absolute path"));
}

TEST(SpecParserTest, NoNodesAndNoJob) {
  EXPECT_EQ(ErrorOf("name = \"x\"\n"),
            "/specs/cluster.toml:1:1: error: nodes: at least one [[nodes]] entry is required\n"
            "  name = \"x\"\n  ^\n"
            "/specs/cluster.toml:1:1: error: job: missing: a [job] table with `program`\n"
            "  name = \"x\"\n  ^");
}

TEST(SpecParserTest, LoadSpecFileRefusesADirectory) {
  std::string dir = NormalizedTmpDir();
  absl::StatusOr<ClusterSpec> spec = LoadSpecFile(dir);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(), absl::StrCat(dir, ": is a directory, not a spec file"));
}

TEST(SpecParserTest, LoadSpecFileNamesAMissingFile) {
  EXPECT_THAT(LoadSpecFile("/nonexistent/spec.toml"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/spec.toml"));
}

}  // namespace
}  // namespace fleetplan
