#!/bin/bash
# fleetplan's NCCL/CUDA path on a CUDA host that has no Bazel: an opt +
# --config=nccl build, packed here by bench/cuda_host_bundle.sh, unpacked and
# run there. Every step is bounded by `timeout`, and the whole by a budget.
#
#   bench/cuda_host_bundle.sh                  # here: makes .cuda_carry/*.tar.xz
#   bench/cuda_host_check.sh [ARCHIVE|DIR]     # there, from the repository root
#
# The host needs bash, coreutils, tar with xz (else python3 unpacks), gzip,
# glibc 2.35 or newer and libstdc++ of GCC 12 or newer, the NVIDIA driver,
# libcudart.so.13 and libnccl.so.2 (pip's nvidia packages or /usr/local/cuda),
# and for the torchrun steps a python3 with torch; nothing of Bazel's. ARCHIVE
# defaults to .cuda_carry/fleetplan-cuda.tar.xz under this script's folder's
# parent; it is unpacked beside itself (fleetplan-cuda/) and reused by a later
# run while it is not older than the archive. DIR is an unpacked bundle, which
# holds a copy of this script: `tar -xJf fleetplan-cuda.tar.xz &&
# fleetplan-cuda/cuda_host_check.sh` works anywhere. Fashion-MNIST, which only
# cuda_train_test reads (from /usr/share/datasets/fashion-mnist, used where
# it exists), is a second archive, .cuda_carry/fashion-mnist.tar.xz: the two
# (45 + 26 MB) do not fit one 64 MiB transfer to the lent GPU machine, so a
# second run there carries the data and runs CHECK_STEPS=gpu,libs,train_test.
#
# Steps, each reported as ok, FAIL: why, or skip: why (never ok when it could
# not run):
#   gpu          nvidia-smi -L (always run)
#   libs         ldd of fleetplan, the agent, the trainer and the two tests with
#                the bundle's libraries, pip's nvidia libraries (found under
#                every python3's site-packages) and /usr/local/cuda: nothing
#                "not found"
#   pg_test      trainer/nccl_process_group_test: its device case must run
#   train_test   trainer/cuda_train_test (NCCL vs Gloo accuracy on Fashion-MNIST)
#   apply_*      fleetplan apply of a local spec (written here into a temp
#                folder) running the installed trainer, synthetic data, gpus =
#                [0], attached: NCCL and Gloo at world size 1, then 2 ranks on
#                the one GPU (as nproc_per_node = 2, and as two local nodes each
#                with gpus = [0]; NCCL may refuse either: recorded, not fatal)
#   torchrun_*   fleetplan's torchrun launcher running python3 (pip torch) with a
#                script doing a torch.distributed all_reduce on cuda (NCCL) and,
#                as a control, on CPU (Gloo); the result is checked
# then a summary with samples/s NCCL vs Gloo.
#
# Environment: OUT (results: check.log, summary.txt, logs.tar.gz; default a
# temp folder), CHECK_STEPS (comma-separated step names or prefixes, default
# all), CHECK_BUDGET_S (default 300: steps that would start later are
# skipped), CHECK_PYTHON (the python3 with torch), CHECK_DATA (a Fashion-MNIST
# folder or archive), CHECK_CUDA_LIBDIRS (instead of searching). Exit status:
# 0 when no step failed, 1 otherwise.
set -uo pipefail

started=$SECONDS
budget="${CHECK_BUDGET_S:-300}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-}"
if [[ -z $OUT ]]; then OUT="$(mktemp -d /tmp/cuda-check-out.XXXXXX)"; fi
mkdir -p "$OUT"
W="$(mktemp -d /tmp/cuda-check.XXXXXX)"
exec > >(tee -a "$OUT/check.log") 2>&1

orig_ldpath="${LD_LIBRARY_PATH:-}"
results=()        # "name|status|why"
declare -A rate   # step -> samples/s
created_data=""

log() { printf '\n=== %s [%ds]\n' "$*" "$((SECONDS - started))"; }
record() {  # record NAME STATUS WHY
  results+=("$1|$2|${3//|//}")
  printf -- '--> %s: %s%s\n' "$1" "$2" "${3:+: $3}"
}
wanted() {  # wanted NAME: is the step selected by CHECK_STEPS?
  [[ -z ${CHECK_STEPS:-} ]] && return 0
  local s
  IFS=, read -ra s <<< "$CHECK_STEPS"
  for p in "${s[@]}"; do [[ $1 == "$p"* ]] && return 0; done
  return 1
}
# bounded SECONDS: the step's timeout, cut to what is left of the budget;
# prints 0 when too little is left to start.
bounded() {
  local left=$((budget - (SECONDS - started)))
  if ((left < 20)); then echo 0; elif (($1 < left)); then echo "$1"; else echo "$left"; fi
}
errorish='error|fail|invalid|refus|duplicate|not found|cannot|abort|terminate|needs'
last_error() {  # the last line of FILE that looks like an error, shortened
  grep -aiE "$errorish" "$1" 2>/dev/null | grep -avE '^\s*$|NCCL INFO|ERROR_HANDLING' |
    tail -n 1 | cut -c1-220
}
why_failed() {  # why_failed APPLY_LOG: NCCL's first warning and a rank's last error
  local warn rank
  warn="$(grep -a -m1 'NCCL WARN' "$1" | sed 's/.*NCCL WARN *//' | cut -c1-160)"
  rank="$(grep -aE '^\[[a-z]+/[0-9]+\] [^{]' "$1" | grep -aiE "$errorish" |
    grep -avE 'NCCL (INFO|WARN)|ERROR_HANDLING' | tail -n 1 | cut -c1-220)"
  [[ -z $rank ]] && rank="$(last_error "$1")"
  echo "${rank}${warn:+ (NCCL WARN: $warn)}"
}

finish() {
  log summary
  local fails=0 line name status why
  {
    printf 'fleetplan CUDA host check, %s, %ds\n' "$(date -u +%FT%TZ)" "$((SECONDS - started))"
    [[ -f ${B:-/nonexistent}/BUNDLE ]] && sed -n '1,4p' "$B/BUNDLE"
    printf '%-16s %s\n' step result
    for line in "${results[@]}"; do
      IFS='|' read -r name status why <<< "$line"
      [[ $status == FAIL ]] && fails=$((fails + 1))
      printf '%-16s %s%s\n' "$name" "$status" "${why:+: $why}"
    done
    echo
    echo "samples/s (the trainer's last epoch, rank 0, times the world size; synthetic CNN, CPU compute, one thread per rank):"
    printf '  world size 1:                     nccl %-10s gloo %s\n' "${rate[apply_nccl_1]:--}" "${rate[apply_gloo_1]:--}"
    printf '  world size 2 (2 nodes x 1 rank):  nccl %-10s gloo %s\n' "${rate[apply_nccl_2nodes]:--}" "${rate[apply_gloo_2nodes]:--}"
    echo "  (at world size 1 the trainer all-reduces nothing: both columns are the same CPU training)"
  } | tee "$OUT/summary.txt"
  [[ -n $created_data ]] && rm -rf "$created_data"
  tar -C "$W" -czf "$OUT/logs.tar.gz" --exclude='*.pt' --exclude='fleetplan-agent' . 2>/dev/null
  rm -rf "$W"
  echo "results in $OUT"
  ((fails == 0))
}

trap 'record interrupted FAIL "killed by a signal"; finish; exit 1' TERM INT HUP

# ---------------------------------------------------------------- the bundle
target="${1:-}"
if [[ -z $target ]]; then
  if [[ -x $here/bin/fleetplan ]]; then target="$here"
  else target="$(cd "$here/.." && pwd)/.cuda_carry/fleetplan-cuda.tar.xz"; fi
fi
log "bundle: $target"
unpack() {  # unpack ARCHIVE DIR
  mkdir -p "$2"
  if command -v xz >/dev/null; then timeout 180 tar -C "$2" -xJf "$1"
  else timeout 180 python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; fi
}
if [[ -d $target ]]; then
  B="$(cd "$target" && pwd)"
elif [[ -f $target ]]; then
  B="$(dirname "$target")/fleetplan-cuda"
  if [[ ! -f $B/BUNDLE || $target -nt $B/BUNDLE ]]; then
    rm -rf "$B"
    unpack "$target" "$(dirname "$target")" || { record unpack FAIL "cannot unpack $target"; finish; exit; }
    touch "$B/BUNDLE"
  fi
else
  record unpack FAIL "no bundle at $target (make it with bench/cuda_host_bundle.sh)"
  finish; exit
fi
sed -n '1,5p' "$B/BUNDLE"
echo "host: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(ldd --version 2>/dev/null | head -n 1), $(nproc) cores, $(uname -r)"

# ----------------------------------------------- the host's CUDA libraries
# Folders holding libnccl.so.2 or libcudart.so.13: pip's nvidia packages of
# every python3 found, then /usr/local/cuda's.
pythons=()
for py in ${CHECK_PYTHON:-} python3 /usr/bin/python3 /usr/local/bin/python3; do
  p="$(command -v "$py" 2>/dev/null)" || continue   # not resolved: a venv's python is a link
  [[ " ${pythons[*]} " == *" $p "* ]] || pythons+=("$p")
done
cuda_dirs="${CHECK_CUDA_LIBDIRS:-}"
if [[ -z $cuda_dirs ]]; then
  sites="$(for py in "${pythons[@]}"; do
    env LD_LIBRARY_PATH="$orig_ldpath" timeout 30 "$py" -c '
import site, sysconfig
paths = set(site.getsitepackages() + [site.getusersitepackages()])
paths |= {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
print("\n".join(sorted(paths)))' 2>/dev/null
  done | sort -u)"
  dirs=()
  for s in $sites; do
    [[ -d $s/nvidia ]] || continue
    while read -r d; do dirs+=("$d"); done < <(timeout 30 find "$s/nvidia" -maxdepth 4 \
      \( -name libnccl.so.2 -o -name 'libcudart.so.13' \) -printf '%h\n' 2>/dev/null | sort -u)
  done
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -e $d/libnccl.so.2 || -e $d/libcudart.so.13 ]] && dirs+=("$(readlink -f "$d")")
  done
  cuda_dirs="$(printf '%s\n' "${dirs[@]}" | awk '!seen[$0]++' | paste -sd: -)"
fi
echo "python3 candidates: ${pythons[*]:-none}"
echo "CUDA library folders: ${cuda_dirs:-none found}"
ldpath="$B/lib/deps${cuda_dirs:+:$cuda_dirs}${orig_ldpath:+:$orig_ldpath}"
run_bundle() { env LD_LIBRARY_PATH="$ldpath" "$@"; }
fleetplan="$B/bin/fleetplan"
train="$B/lib/fleetplan/train"
export XDG_CACHE_HOME="$W/cache" TMPDIR="${TMPDIR:-/tmp}"

# ------------------------------------------------------------------ a: gpu
# Always run: the other steps' results depend on whether there is a GPU.
have_gpu=0
log "gpu: nvidia-smi -L"
if ! command -v nvidia-smi >/dev/null; then
  record gpu skip "no nvidia-smi on this host"
elif timeout 30 nvidia-smi -L > "$W/nvidia-smi.txt" 2>&1 && grep -q '^GPU ' "$W/nvidia-smi.txt"; then
  cat "$W/nvidia-smi.txt"
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv 2>&1
  have_gpu=1
  record gpu ok "$(grep -c '^GPU ' "$W/nvidia-smi.txt") GPU(s): $(head -n 1 "$W/nvidia-smi.txt" | cut -c1-80)"
else
  cat "$W/nvidia-smi.txt"
  record gpu skip "nvidia-smi lists no GPU: $(tail -n 1 "$W/nvidia-smi.txt" | cut -c1-120)"
fi
# A check that needs the device: without one it ran only to test the path.
gpu_result() {  # gpu_result NAME OK(0/1) WHY
  if ((have_gpu)); then
    if (($2)); then record "$1" ok "$3"; else record "$1" FAIL "$3"; fi
  else
    record "$1" skip "no GPU on this host (ran anyway: $3)"
  fi
}

# ------------------------------------------------------------------ a: libs
if wanted libs; then
  log "libs: ldd with LD_LIBRARY_PATH=$ldpath"
  bins=("$fleetplan" "$B/lib/fleetplan/fleetplan-agent" "$train" "$B/tests/nccl_process_group_test" "$B/tests/cuda_train_test")
  run_bundle timeout 60 ldd "${bins[@]}" > "$W/ldd.txt" 2>&1
  grep -E 'libnccl|libcudart|libcuda\.|libtorch_cpu|libstdc\+\+|libc\.so' "$W/ldd.txt" | sed 's/ (0x.*//' | sort -u
  outside="$(grep '=>' "$W/ldd.txt" | grep -v "$B/lib/deps" |
    grep -vE '^\s*(ld-linux|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl)\.so' | awk '{print $1}' | sort -u | paste -sd' ' -)"
  [[ -n $outside ]] && echo "from the host, not the bundle (unexpected): $outside"
  if grep -q 'not found' "$W/ldd.txt"; then
    grep 'not found' "$W/ldd.txt" | sort -u
    record libs FAIL "$(grep 'not found' "$W/ldd.txt" | sort -u | awk '{print $1}' | paste -sd' ' - | cut -c1-200) not found"
  elif ! run_bundle timeout 30 "$fleetplan" version > "$W/version.txt" 2>&1; then
    cat "$W/version.txt"
    record libs FAIL "fleetplan does not start: $(tail -n 1 "$W/version.txt" | cut -c1-160)"
  else
    cat "$W/version.txt"
    nccl="$(grep -m1 'libnccl.so.2 =>' "$W/ldd.txt" | awk '{print $3}')"
    cudart="$(grep -m1 'libcudart.so.13 =>' "$W/ldd.txt" | awk '{print $3}')"
    record libs ok "all resolve; libnccl: ${nccl:-?}; libcudart: ${cudart:-?}"
  fi
fi

# -------------------------------------------------------------- b: gtests
gtest() {  # gtest NAME BINARY SECONDS DEVICE_CASE
  local name="$1" bin="$2" t rc
  t="$(bounded "$3")"
  if ((t == 0)); then record "$name" skip "out of time budget"; return; fi
  log "$name: $(basename "$bin") (timeout ${t}s)"
  mkdir -p "$W/$name/tmp"
  (cd "$W/$name" && run_bundle TEST_SRCDIR="$B/runfiles" TEST_TMPDIR="$W/$name/tmp" \
     timeout -k 10 "$t" "$bin" --gtest_output="xml:$W/$name/test.xml" > "$W/$name/test.log" 2>&1)
  rc=$?
  tail -n 40 "$W/$name/test.log"
  local case="$4" ran skipped
  ran="$(grep -c "^\[       OK \] .*$case" "$W/$name/test.log")"
  skipped="$(grep -c "^\[  SKIPPED \] .*$case" "$W/$name/test.log")"
  if ((rc == 124 || rc == 137)); then
    gpu_result "$name" 0 "timed out after ${t}s"
  elif ((rc != 0)); then
    gpu_result "$name" 0 "exit $rc: $(grep -m1 -E '^\[  FAILED  \]' "$W/$name/test.log" | cut -c1-160)"
  elif ((ran > 0)); then
    gpu_result "$name" 1 "passed; $case ran on the device"
  elif ((skipped > 0)); then
    if ((have_gpu)); then record "$name" FAIL "$case SKIPPED on a host with a GPU"
    else record "$name" skip "no GPU on this host: passed with $case skipped"; fi
  else
    gpu_result "$name" 0 "$case not in the output"
  fi
}
wanted pg_test && gtest pg_test "$B/tests/nccl_process_group_test" 90 OneRankAllReducesAndBroadcastsThroughTheDevice

# Fashion-MNIST for cuda_train_test, which reads the trainer's default folder.
fmnist=/usr/share/datasets/fashion-mnist
find_data() {  # sets data_from; not in a subshell: it sets created_data too
  if [[ -f $fmnist/train-images-idx3-ubyte.gz && -f $fmnist/t10k-labels-idx1-ubyte.gz ]]; then
    data_from="$fmnist (the host's)"; return 0
  fi
  local src="${CHECK_DATA:-}"
  if [[ -z $src ]]; then
    if [[ -d $B/data/fashion-mnist ]]; then src="$B/data/fashion-mnist"
    elif [[ -f $B/../fashion-mnist.tar.xz ]]; then src="$B/../fashion-mnist.tar.xz"
    else return 1; fi
  fi
  if [[ -f $src ]]; then
    local dir
    dir="$(dirname "$src")/fashion-mnist"
    if [[ ! -f $dir/train-images-idx3-ubyte ]]; then unpack "$src" "$(dirname "$src")" || return 1; fi
    src="$dir"
  fi
  mkdir -p "$fmnist" 2>/dev/null || return 1
  created_data="$fmnist"
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    if [[ -f $src/$f.gz ]]; then cp "$src/$f.gz" "$fmnist/" || return 1
    else timeout 60 gzip -1 -c "$src/$f" > "$fmnist/$f.gz" || return 1; fi
  done
  data_from="$fmnist (made from $src for this run, removed at the end)"
}
if wanted train_test; then
  if find_data; then
    echo "Fashion-MNIST: $data_from"
    gtest train_test "$B/tests/cuda_train_test" 240 NcclReachesTheAccuracyOfGloo
  else
    record train_test skip "no Fashion-MNIST: not at $fmnist, no .cuda_carry/fashion-mnist.tar.xz (carry it in a run of its own: CHECK_STEPS=train_test)"
  fi
fi

# ---------------------------------------------------------------- c: apply
port=29610
next_port() {  # sets master_port: the next P with P and P+1 free on 127.0.0.1
  while (: < "/dev/tcp/127.0.0.1/$port") 2>/dev/null || (: < "/dev/tcp/127.0.0.1/$((port + 1))") 2>/dev/null; do
    port=$((port + 10))
  done
  master_port=$port
  port=$((port + 10))
}
# write_spec DIR NODES(1|2) NPROC PROGRAM ARGS_TOML [ENV_TOML]
write_spec() {
  local dir="$1" nodes="$2" nproc="$3" program="$4" args="$5" env="${6:-}"
  next_port
  {
    printf 'name = "cuda-check-%s"\n\n[defaults]\ntransport = "local"\ngpus = [0]\n\n' "$(basename "$dir")"
    printf '[[nodes]]\nname = "a"\naddress = "127.0.0.1"\nworkdir = "%s/work-a"\n' "$dir"
    if ((nodes == 2)); then
      printf 'chief = true\n\n[[nodes]]\nname = "b"\naddress = "127.0.0.2"\nworkdir = "%s/work-b"\n' "$dir"
    fi
    printf '\n[network]\nmaster_port = %d\n' "$master_port"
    [[ -n $env ]] && printf '\n[env]\n%s\n' "$env"
    printf '\n[job]\nprogram = "%s"\nargs = %s\nnproc_per_node = %d\nlauncher = "torchrun"\n' \
      "$program" "$args" "$nproc"
  } > "$dir/spec.toml"
}
# apply_job NAME SECONDS: fleetplan apply of NAME/spec.toml, attached; sets rc.
apply_job() {
  local name="$1" t
  t="$(bounded "$2")"
  if ((t == 0)); then rc=-1; return; fi
  log "$name: fleetplan apply (timeout ${t}s)"
  cat "$W/$name/spec.toml"
  run_bundle timeout -k 15 "$t" "$fleetplan" apply --color=never "$W/$name/spec.toml" \
    > "$W/$name/apply.log" 2>&1 < /dev/null
  rc=$?
  if ((rc == 124 || rc == 137)); then
    run_bundle timeout 30 "$fleetplan" stop "$W/$name/spec.toml" >> "$W/$name/apply.log" 2>&1
  fi
  grep -v '"event":"step"' "$W/$name/apply.log" | grep -vE 'NCCL INFO (Channel|Ring|Trees|P2P|Connected|comm 0x|[0-9]+ coll|ncclCommInitRank comm)' | tail -n 30
  echo "apply exit status: $rc"
}
trainer_run() {  # trainer_run NAME BACKEND NODES NPROC
  local name="$1" backend="$2" nodes="$3" nproc="$4" env=""
  wanted "$name" || return 0
  mkdir -p "$W/$name"
  [[ $backend == nccl ]] && env='NCCL_DEBUG = "INFO"'
  write_spec "$W/$name" "$nodes" "$nproc" "$train" \
    "[\"--backend=$backend\", \"--dataset=synthetic\", \"--arch=cnn\", \"--epochs=2\", \"--steps-per-epoch=300\", \"--log-every=100\", \"--rendezvous-timeout=30\"]" \
    "$env"
  apply_job "$name" 120
  if ((rc == -1)); then record "$name" skip "out of time budget"; return; fi
  local r0="$W/$name/work-a/.fleetplan/nodes/a/logs/latest/rank-0.log" line sps
  line="$(grep -h '"event":"epoch"' "$r0" 2>/dev/null | tail -n 1)"
  [[ -z $line ]] && line="$(grep '"event":"epoch"' "$W/$name/apply.log" | grep '"rank":0' | tail -n 1)"
  sps="$(grep -o '"samples_per_sec":[0-9.e+-]*' <<< "$line" | cut -d: -f2)"
  [[ -n $sps ]] && sps="$(printf '%.1f' "$sps")"
  local why="exit $rc"
  [[ -n $sps ]] && why="$why, ${sps} samples/s"
  grep -m1 -o 'NCCL version [^ ]*' "$W/$name/apply.log" >/dev/null && why="$why, $(grep -m1 -o 'NCCL version [^ ]*' "$W/$name/apply.log")"
  ((rc != 0)) && why="$why: $(why_failed "$W/$name/apply.log")"
  if ((rc == 0 && ${#sps} > 0)); then rate[$name]="$sps"; fi
  if [[ $backend == nccl ]]; then
    if ((nodes * nproc > 1)) && ((rc != 0)) && ((have_gpu)); then
      # Two ranks on one GPU: NCCL may refuse it; recorded, not a failure.
      record "$name" "skip" "2 ranks on 1 GPU refused (expected with one GPU): $why"
    else
      gpu_result "$name" "$((rc == 0 && ${#sps} > 0))" "$why"
    fi
  elif ((rc == 0 && ${#sps} > 0)); then
    record "$name" ok "$why"
  else
    record "$name" FAIL "$why"
  fi
}
trainer_run apply_nccl_1 nccl 1 1
trainer_run apply_gloo_1 gloo 1 1
trainer_run apply_nccl_2x1 nccl 1 2       # LOCAL_RANK 1 on CUDA_VISIBLE_DEVICES=0
trainer_run apply_nccl_2nodes nccl 2 1    # two local nodes, each LOCAL_RANK 0
trainer_run apply_gloo_2nodes gloo 2 1

# ------------------------------------------------------------- d: torchrun
python=""
for py in "${pythons[@]}"; do
  if env LD_LIBRARY_PATH="$orig_ldpath" timeout 90 "$py" -c 'import torch' 2>/dev/null; then python="$py"; break; fi
done
cat > "$W/allreduce.py" <<'EOF'
# A torch.distributed all_reduce under fleetplan's torchrun launcher: every
# rank adds (rank + 1) * arange(N); the sum must be N(N+1)/2-weighted exactly.
import datetime, json, os, sys, time
import torch
import torch.distributed as dist

backend = sys.argv[1]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ["LOCAL_RANK"])
info = {"backend": backend, "rank": rank, "world_size": world, "torch": torch.__version__,
        "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
        "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "launcher_env": {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK",
                                                        "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE")}}
if backend == "nccl":
    if not torch.cuda.is_available():
        info["error"] = "no CUDA device"
        print(json.dumps(info), flush=True)
        print(f"RESULT ok=False error=no CUDA device torch={torch.__version__}", flush=True)
        sys.exit(3)
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    info["device"] = torch.cuda.get_device_name(device)
    info["nccl"] = ".".join(map(str, torch.cuda.nccl.version())) if hasattr(torch.cuda, "nccl") else None
else:
    device = torch.device("cpu")
kwargs = {"timeout": datetime.timedelta(seconds=60)}
try:
    dist.init_process_group(backend, device_id=device if backend == "nccl" else None, **kwargs)
except TypeError:  # torch before 2.3 has no device_id
    dist.init_process_group(backend, **kwargs)
n = 1 << 20
t = torch.arange(n, dtype=torch.float64, device=device) * (rank + 1)
dist.all_reduce(t)
expected = torch.arange(n, dtype=torch.float64, device=device) * (world * (world + 1) // 2)
info["ok"] = bool(torch.equal(t, expected))
x = torch.ones(16 << 20, dtype=torch.float32, device=device)  # 64 MiB
dist.all_reduce(x)
if backend == "nccl":
    torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(10):
    dist.all_reduce(x)
if backend == "nccl":
    torch.cuda.synchronize()
info["allreduce_64MiB_ms"] = round((time.perf_counter() - start) * 100, 3)
dist.destroy_process_group()
print(json.dumps(info), flush=True)
print("RESULT " + " ".join(f"{k}={info.get(k)}" for k in (
    "ok", "torch", "cuda", "nccl", "device", "allreduce_64MiB_ms")), flush=True)
sys.exit(0 if info["ok"] else 1)
EOF
torchrun_run() {  # torchrun_run NAME BACKEND
  local name="$1" backend="$2" env
  wanted "$name" || return 0
  if [[ -z $python ]]; then record "$name" skip "no python3 with torch among: ${pythons[*]:-none}"; return; fi
  mkdir -p "$W/$name"
  # The ranks get the host's own library path first; the bundle's libraries
  # follow for the launch agent, which runs its checks in the ranks'
  # environment (their sonames differ from pip torch's: libc10.so.1.13).
  env="LD_LIBRARY_PATH = \"${orig_ldpath:+$orig_ldpath:}$B/lib/deps\""
  [[ $backend == nccl ]] && env="$env"$'\nNCCL_DEBUG = "INFO"'
  write_spec "$W/$name" 1 1 "$python" "[\"$W/allreduce.py\", \"$backend\"]" "$env"
  apply_job "$name" 150
  if ((rc == -1)); then record "$name" skip "out of time budget"; return; fi
  local line why
  line="$(grep -o 'RESULT .*' "$W/$name/apply.log" | tail -n 1)"
  echo "${line:-no RESULT line}"
  why="exit $rc, $python: ${line#RESULT }"
  ((rc != 0)) && [[ -z $line ]] && why="$why $(why_failed "$W/$name/apply.log")"
  if [[ $backend == nccl ]]; then
    gpu_result "$name" "$((rc == 0))" "$why"
  elif ((rc == 0)); then
    record "$name" ok "$why"
  else
    record "$name" FAIL "$why"
  fi
}
torchrun_run torchrun_nccl nccl
torchrun_run torchrun_gloo gloo

finish
