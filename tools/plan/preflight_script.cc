#include "tools/plan/preflight_script.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// The sh functions the checks share. Every check ends in one fp_check
// call; fp_failed remembers a failure for the exit status. Variables start
// with fp_ so that the ranks' exports cannot clash with them.
constexpr char kCommon[] = R"sh(fp_failed=0
fp_check() {
  fp_m=$(printf '%s' "$3" | tr '\r\n' '  ')
  printf 'fleetplan-check %s %s %s\n' "$1" "$2" "$fp_m"
  if [ "$2" = fail ]; then fp_failed=1; fi
}
fp_fact() { printf 'fleetplan-fact %s %s\n' "$1" "$2"; }
fp_user=$(id -un 2>/dev/null || id -u)
)sh";

// fp_workdir DIR STATE_DIR BYTES MANIFEST: DIR can be written (in apply
// mode after creating STATE_DIR in it) and BYTES fit on its filesystem,
// less what an earlier sync left (the sizes in MANIFEST).
constexpr char kWorkdir[] = R"sh(fp_existing() {
  fp_d=$1
  while [ ! -e "$fp_d" ]; do fp_d=$(dirname "$fp_d"); done
  printf '%s' "$fp_d"
}
# Sets fp_why and fp_fix for a folder $1 that is not writable.
fp_not_writable() {
  fp_mp=$(df -P "$1" 2>/dev/null | awk 'NR == 2 {print $6}')
  case ",$(awk -v m="$fp_mp" '$2 == m {o = $4} END {print o}' /proc/mounts 2>/dev/null)," in
    *,ro,*)
      fp_why="on a read-only filesystem, mounted at $fp_mp"
      fp_fix="choose a workdir on a writable filesystem" ;;
    *)
      fp_why="owner uid $(stat -c %u "$1" 2>/dev/null), mode $(stat -c %a "$1" 2>/dev/null)"
      fp_fix="chmod u+w $1 or chown it to $fp_user, or choose another workdir" ;;
  esac
}
fp_workdir() {
  fp_w=$1
  if [ "$fp_mode" = apply ] && ! fp_e=$(mkdir -p "$2" 2>&1); then
    fp_check workdir fail "$fp_w: cannot be created or written by $fp_user ($fp_e); expected a folder $fp_user can write at this absolute path on every node; fix: choose a workdir on a writable filesystem, or create it and give $fp_user write access to it"
    return
  fi
  if [ -d "$fp_w" ]; then
    fp_d=$fp_w
    fp_note="writable by $fp_user"
  elif [ -e "$fp_w" ]; then
    fp_check workdir fail "$fp_w: exists but is not a folder; expected a folder at this absolute path; fix: move it away or choose another workdir"
    return
  else
    fp_d=$(fp_existing "$fp_w")
    if [ ! -d "$fp_d" ]; then
      fp_check workdir fail "$fp_w: cannot be created: $fp_d is not a folder; expected a folder at this absolute path; fix: move $fp_d away or choose another workdir"
      return
    fi
    fp_note="does not exist yet; $fp_user can create it in $fp_d"
  fi
  if [ ! -w "$fp_d" ]; then
    if [ "$fp_d" = "$fp_w" ]; then fp_e="not writable"; else fp_e="cannot be created: $fp_d is not writable"; fi
    fp_not_writable "$fp_d"
    fp_check workdir fail "$fp_w: $fp_e by $fp_user ($fp_why); expected a folder $fp_user can write at this absolute path on every node; fix: $fp_fix"
    return
  fi
  fp_kb=$(df -Pk "$fp_d" 2>/dev/null | awk 'NR == 2 && $4 ~ /^[0-9]+$/ {print $4}')
  fp_held=0
  if [ -f "$4" ]; then fp_held=$(awk '{s += $3} END {printf "%.0f", s}' "$4"); fi
  fp_more=$(($3 - ${fp_held:-0}))
  if [ -n "$fp_kb" ] && [ "$fp_more" -gt $((fp_kb * 1024)) ]; then
    fp_check workdir fail "$fp_w: $((fp_kb / 1024)) MiB free, the sync needs $(((fp_more + 1048575) / 1048576)) MiB; expected at least the sync's size free; fix: free space on the filesystem of $fp_d, or choose another workdir"
    return
  fi
  if [ -n "$fp_kb" ]; then fp_note="$fp_note, $((fp_kb / 1024)) MiB free"; fi
  fp_check workdir ok "$fp_w: $fp_note"
}
)sh";

// fp_listen PORT CONNECTIONS (the chief): the agent binds PORT, prints the
// port check, and accepts CONNECTIONS (every node's, this one's too) or
// stops when this script's stdin (fd 3) closes, which apply does once the
// other nodes' checks have ended, however long that takes with a bounded
// --parallelism (the timeout is only a backstop). The script waits for it
// before it ends, so the port is free again when launch binds it.
constexpr char kListen[] = R"sh(fp_listener=
fp_listen() {
  if [ ! -x "$fp_agent" ]; then
    fp_check port skip "port $1 not checked: fleetplan-agent is not on this node yet (apply copies it there before its preflight)"
    return
  fi
  "$fp_agent" --probe-listen="$1" --probe-expect="$2" --probe-timeout=24h <&3 &
  fp_listener=$!
}
)sh";

// fp_connect HOST PORT TIMEOUT: a TCP connection to the chief's listener.
constexpr char kConnect[] = R"sh(fp_connect() {
  if [ ! -x "$fp_agent" ]; then
    fp_check connect skip "$1:$2 not checked: fleetplan-agent is not on this node yet (apply copies it there before its preflight)"
    return
  fi
  if fp_e=$("$fp_agent" --probe-connect="$1:$2" --probe-timeout="$3" 2>&1); then
    fp_check connect ok "$fp_e"
  else
    fp_check connect fail "$fp_e; expected a TCP connection from this node to MASTER_ADDR:MASTER_PORT; fix: allow TCP port $2 into the chief from this node (firewall, security group), and make $1 the chief's address on the network the nodes share (its private_address)"
  fi
}
)sh";

// fp_nccl ADDRESS ENV_FILE: the interface that holds ADDRESS (resolved
// here), never lo or docker0; written to ENV_FILE in apply mode.
constexpr char kNccl[] = R"sh(fp_nccl() {
  fp_ip=$1
  case $1 in
    *:*) ;;
    *[!0-9.]*)
      fp_ip=$(getent ahostsv4 "$1" 2>/dev/null | awk 'NR == 1 {print $1}')
      if [ -z "$fp_ip" ]; then fp_ip=$(getent ahosts "$1" 2>/dev/null | awk 'NR == 1 {print $1}'); fi ;;
  esac
  fp_if=
  if [ -z "$fp_ip" ]; then
    fp_e="$1 does not resolve on this node; expected the address the other nodes reach it by; fix: add $1 to /etc/hosts or DNS here, or set the node's private_address to its IP address"
  elif command -v ip >/dev/null 2>&1 || [ -x "$fp_agent" ]; then
    if command -v ip >/dev/null 2>&1; then
      fp_if=$(ip -o addr show 2>/dev/null | awk -v a="$fp_ip" '{split($4, p, "/"); if (p[1] == a) {sub(/@.*/, "", $2); print $2; exit}}')
    else
      fp_if=$("$fp_agent" --probe-ifname="$fp_ip" 2>/dev/null)
    fi
    case $fp_if in
      '') fp_e="no interface here holds $fp_ip (what $1 is on this node); expected the interface with the address the other nodes reach this node by; fix: set the node's private_address to one of its addresses (ip -4 addr), or set nccl_socket_ifname" ;;
      lo|docker0) fp_e="$1 is $fp_ip here, on $fp_if; expected an interface the other nodes reach, never lo or docker0; fix: set the node's private_address to its address on the network the nodes share, or set nccl_socket_ifname" ;;
      *[!A-Za-z0-9_.:@-]*) fp_e="$fp_ip is on interface '$fp_if', a name NCCL_SOCKET_IFNAME cannot carry; fix: set nccl_socket_ifname" ;;
      *) fp_e= ;;
    esac
  else
    fp_e="cannot list the interfaces: no ip command (iproute2) on this node; fix: install iproute2, or set nccl_socket_ifname"
  fi
  if [ -n "$fp_e" ]; then
    if [ "$fp_mode" = apply ]; then rm -f "$2"; fi
    fp_check nccl fail "$fp_e"
    return
  fi
  if [ "$fp_mode" = apply ] && ! fp_e=$({ printf 'export NCCL_SOCKET_IFNAME=%s\n' "$fp_if" >"$2.tmp" && mv -f "$2.tmp" "$2"; } 2>&1); then
    fp_check nccl fail "cannot write $2: $fp_e; expected the node's state folder to be writable; fix: check the workdir"
    return
  fi
  fp_check nccl ok "$fp_if holds $fp_ip ($1)"
  fp_fact nccl_socket_ifname "$fp_if"
}
)sh";

constexpr char kVenv[] = R"sh(fp_venv() {
  if [ ! -f "$1/bin/activate" ]; then
    if [ -d "$1" ]; then fp_e="$1 has no bin/activate"; else fp_e="$1 does not exist"; fi
    fp_check python fail "venv $fp_e; expected a python venv at $1 on every node; fix: create it there (python3 -m venv $1) and install the job's packages into it, or correct python.venv"
    return 1
  fi
  if ! fp_e=$(. "$1/bin/activate" 2>&1); then
    fp_check python fail "venv $1: bin/activate fails: $fp_e; expected it to activate; fix: create the venv again"
    return 1
  fi
  fp_check python ok "venv $1 activates"
}
)sh";

constexpr char kConda[] = R"sh(fp_conda() {
  if [ ! -f "$1" ]; then
    fp_check python fail "conda.sh $1 does not exist; expected conda's shell setup there; fix: correct python.conda_sh (<conda root>/etc/profile.d/conda.sh)"
    return 1
  fi
  if ! fp_e=$({ . "$1" && conda activate "$2"; } 2>&1); then
    fp_check python fail "conda activate $2 fails: $fp_e; expected the environment $2 to exist; fix: create it (conda create -n $2) or correct python.conda"
    return 1
  fi
  fp_check python ok "conda environment $2 activates"
}
)sh";

// fp_gpus "0 1" "0, 1": every listed id is one nvidia-smi lists.
constexpr char kGpus[] = R"sh(fp_gpus() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    fp_check gpus skip "no nvidia-smi on the ranks' PATH; GPU ids $2 not checked"
    return
  fi
  if ! fp_e=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>&1); then
    fp_check gpus fail "nvidia-smi fails: $fp_e; expected it to list this node's GPUs; fix: check the NVIDIA driver here (nvidia-smi)"
    return
  fi
  fp_have=$(printf '%s\n' "$fp_e" | awk 'NF {gsub(/[ \r]/, ""); printf "%s%s", s, $0; s = ","}')
  fp_miss=
  for fp_g in $1; do
    case ",$fp_have," in
      *",$fp_g,"*) ;;
      *) fp_miss="$fp_miss${fp_miss:+, }$fp_g" ;;
    esac
  done
  if [ -n "$fp_miss" ]; then
    fp_check gpus fail "GPU $fp_miss not found: nvidia-smi lists ${fp_have:-none}; expected every id in gpus = [$2]; fix: list only GPUs this node has in its gpus"
  else
    fp_check gpus ok "GPUs $2 present (nvidia-smi lists $fp_have)"
  fi
}
)sh";

// fp_libs PROGRAM: ldd finds every shared library; libtorch_cpu's identity
// becomes a fact apply compares across nodes.
constexpr char kLibraries[] = R"sh(fp_libs() {
  if [ ! -e "$1" ]; then
    if [ "$fp_mode" = apply ]; then
      fp_check libraries fail "$1 does not exist; expected the job's program there; fix: check [job] program (a relative path is taken from the workdir)"
    else
      fp_check libraries skip "$1 is not on this node yet (apply copies it); libraries not checked"
    fi
    return
  fi
  if ! command -v ldd >/dev/null 2>&1; then
    fp_check libraries skip "no ldd on the ranks' PATH; the shared libraries of $1 not checked"
    return
  fi
  fp_e=$(ldd "$1" 2>&1)
  fp_status=$?
  case $fp_e in
    *"not a dynamic executable"*)
      fp_check libraries skip "$1 is not a dynamically linked program; libraries not checked"
      return ;;
    *"statically linked"*)
      fp_check libraries ok "$1 is statically linked"
      return ;;
  esac
  fp_miss=$(printf '%s\n' "$fp_e" | awk '$2 == "=>" && $3 == "not" {printf "%s%s", s, $1; s = ", "}')
  if [ -n "$fp_miss" ]; then
    fp_check libraries fail "$1 needs $fp_miss, not found on this node (LD_LIBRARY_PATH=$LD_LIBRARY_PATH); expected every shared library of the job's program to resolve; fix: install them on this node, or add their folder to LD_LIBRARY_PATH in [env]"
    return
  fi
  if [ "$fp_status" -ne 0 ]; then
    fp_check libraries fail "ldd $1 fails: $fp_e; expected it to list the program's libraries; fix: check that $1 is a program for this machine"
    return
  fi
  fp_check libraries ok "$1: all $(printf '%s\n' "$fp_e" | grep -c '=>') shared libraries resolve"
  fp_t=$(printf '%s\n' "$fp_e" | awk '$1 ~ /^libtorch_cpu[.]so/ && $2 == "=>" {print $3; exit}')
  if [ -n "$fp_t" ]; then
    fp_r=$(readlink -f "$fp_t" 2>/dev/null)
    fp_r=${fp_r:-$fp_t}
    fp_fact libtorch "$(cksum <"$fp_r" | awk '{print $1, $2}') $fp_r"
  fi
}
)sh";

// How long a node retries connecting to the chief's listener, which starts
// at the same time; without the agent on the chief (plan --check) nothing
// listens, so do not wait as long.
absl::string_view ConnectTimeout(PreflightMode mode) {
  return mode == PreflightMode::kApply ? "30s" : "10s";
}

absl::string_view ModeName(PreflightMode mode) {
  return mode == PreflightMode::kApply ? "apply" : "check";
}

std::string WorkdirCall(const NodeSpec& node, uint64_t bytes, bool count_held) {
  return absl::StrCat("fp_workdir ", ShellQuote(node.workdir), " ",
                      ShellQuote(NodeStateDir(node)), " ", bytes, " ",
                      count_held ? ShellQuote(SyncManifestPath(node)) : "''",
                      "\n");
}

// The python check, then the activation when it passed.
std::string PythonLines(const PythonEnv& python) {
  std::string check;
  switch (python.kind) {
    case PythonEnv::Kind::kVenv:
      check = absl::StrCat("if fp_venv ", ShellQuote(python.venv), "; then\n");
      break;
    case PythonEnv::Kind::kConda:
      check = absl::StrCat("if fp_conda ", ShellQuote(python.conda_sh), " ",
                           ShellQuote(python.conda), "; then\n");
      break;
    case PythonEnv::Kind::kNone:
      return "";
  }
  return absl::StrCat(check, "{\n", PythonActivation(python), "} >/dev/null 2>&1\nfi\n");
}

std::string GpuLines(const std::vector<int>& gpus) {
  if (gpus.empty()) return "";
  return absl::StrCat("fp_gpus ", ShellQuote(absl::StrJoin(gpus, " ")), " ",
                      ShellQuote(absl::StrJoin(gpus, ", ")), "\n");
}

}  // namespace

std::string PreflightLibrary(PreflightMode mode) {
  return absl::StrCat(
      "# fleetplan preflight checks: one `fleetplan-check` line per check.\n",
      "fp_mode=", ModeName(mode), "\n",
      // ip and the like live there, which a non-login shell's PATH may lack.
      "PATH=\"$PATH:/usr/sbin:/sbin\"\n", kCommon, kWorkdir, kListen, kConnect, kNccl,
      kVenv, kConda, kGpus, kLibraries);
}

std::string PreflightScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                            const PreflightInputs& inputs) {
  bool chief = &node == inputs.chief;
  const std::string& master = ReachAddress(*inputs.chief);
  std::string script = absl::StrCat("# The checks of node ", ShellQuote(node.name), ".\n",
                                    "fp_agent=", ShellQuote(AgentPath(node)), "\n");
  if (chief) {
    // The listener's stdin: the step's own, which apply closes once every
    // node has connected or failed. A closed stdin would end the script.
    absl::StrAppend(&script,
                    "if ( exec 3<&0 ) 2>/dev/null; then exec 3<&0; else exec 3</dev/null; fi\n",
                    "fp_listen ", inputs.master_port, " ", inputs.nodes, "\n");
  }
  absl::StrAppend(&script, WorkdirCall(node, inputs.sync_bytes, /*count_held=*/true),
                  "fp_connect ", ShellQuote(master), " ", inputs.master_port, " ",
                  ConnectTimeout(inputs.mode), "\n");
  if (inputs.nccl_auto) {
    absl::StrAppend(&script, "fp_nccl ", ShellQuote(ReachAddress(node)), " ",
                    ShellQuote(PreflightEnvPath(node)), "\n");
  }
  absl::StrAppend(&script, "# The ranks' environment, as env.sh makes it.\n",
                  PythonLines(node.python), EnvExports(node_env), GpuLines(node.gpus),
                  "fp_libs ", ShellQuote(ProgramPath(*inputs.job, node)), "\n");
  if (chief) absl::StrAppend(&script, "if [ -n \"$fp_listener\" ]; then wait \"$fp_listener\"; fi\n");
  absl::StrAppend(&script, "exit $fp_failed\n");
  return script;
}

std::string WorkdirCheckScript(const NodeSpec& node, uint64_t bytes) {
  return absl::StrCat(PreflightLibrary(PreflightMode::kApply),
                      WorkdirCall(node, bytes, /*count_held=*/false), "exit $fp_failed\n");
}

}  // namespace fleetplan
