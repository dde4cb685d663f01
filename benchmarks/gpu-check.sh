#!/usr/bin/env bash
# GPUs as Slurm 26.05 finds them on this machine (docs/howto-gpu.md): starts a slurmctld and a
# dynamic slurmd (-Z, as the collection's bare-metal workers run) in a scratch directory, on ports
# of their own, with the GPU detection the model's `autodetect` writes into gres.conf
# (NodeName=HOST AutoDetect=...), then prints the node's record and runs a job step that asks for
# one GPU. Needs root, Slurm 26.05's slurmctld, slurmd, srun and scontrol on PATH (or under
# SLURM_PREFIX/sbin and /bin), and an NVIDIA GPU with its driver; nothing of the machine's own Slurm
# configuration is read or changed. The tests never depend on it.
#   sudo benchmarks/gpu-check.sh                      # AutoDetect=nvidia (the driver's /proc, no NVML)
#   sudo AUTODETECT=nvml benchmarks/gpu-check.sh      # a Slurm built with NVML
#   sudo GPU_CHECK_TYPE=fake GPU_CHECK_FILES=/dev/nvidia0,/dev/nvidia1 benchmarks/gpu-check.sh
#                                                     # declared devices instead (the model's files)
# Exit status: 0 when slurmd registered at least one GPU and the step saw one, else 1.
set -euo pipefail

autodetect=${AUTODETECT:-nvidia}
files=${GPU_CHECK_FILES:-}
gtype=${GPU_CHECK_TYPE:-}
ctld_port=${GPU_CHECK_PORT:-16817}
slurmd_port=$((ctld_port + 1))
prefix=${SLURM_PREFIX:-}
[ -z "$prefix" ] || PATH=$prefix/sbin:$prefix/bin:$PATH

say() { printf 'gpu-check: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (slurmd starts job steps as their user)"
for tool in slurmctld slurmd srun scontrol; do
  command -v "$tool" >/dev/null || die "$tool not found: install Slurm 26.05 or set SLURM_PREFIX"
done
version=$(slurmd -V | awk '{print $2}')
case "$version" in 26.05.*) ;; *) say "slurmd $version: this check was written for Slurm 26.05" ;; esac
if [ -n "$files" ]; then
  [ -n "$gtype" ] || die "GPU_CHECK_FILES needs GPU_CHECK_TYPE (the GRES type, as the model's type)"
  IFS=, read -r -a devices <<<"$files"
  for device in "${devices[@]}"; do
    [ -c "$device" ] || [ -b "$device" ] || die "$device is not a device"
  done
fi

node=$(hostname -s)
dir=$(mktemp -d /tmp/slime-gpu-check.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
head -c 64 /dev/urandom >"$dir/slurm.key"
chmod 0600 "$dir/slurm.key"
cat >"$dir/slurm.conf" <<EOF
ClusterName=gpucheck
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/slurm
CredType=cred/slurm
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SelectType=select/cons_tres
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MaxNodeCount=4
GresTypes=gpu
MailProg=/bin/true
PartitionName=gpu Nodes=ALL Default=YES State=UP MaxTime=10
EOF
echo "CgroupPlugin=disabled" >"$dir/cgroup.conf"
if [ -n "$files" ]; then
  echo "NodeName=$node Name=gpu Type=$gtype File=$files" >"$dir/gres.conf"
  conf="Feature=gpu Gres=gpu:$gtype:${#devices[@]}"
else
  echo "NodeName=$node AutoDetect=$autodetect" >"$dir/gres.conf"
  conf="Feature=gpu"   # no gpu in --conf: slurmd detects (Slurm 26.05, slurmd.c, autofill)
fi
export SLURM_CONF=$dir/slurm.conf
say "Slurm $version, node $node, gres.conf: $(cat "$dir/gres.conf")"

slurmctld -D -i >"$dir/log/slurmctld.out" 2>&1 & pids+=($!)
for _ in $(seq 30); do scontrol ping >/dev/null 2>&1 && break; sleep 1; done
scontrol ping >/dev/null 2>&1 || { tail -20 "$dir/log/slurmctld.out" "$dir/log/slurmctld.log" 2>/dev/null; die "slurmctld did not start"; }
slurmd -D -Z -N "$node" --conf "$conf" >"$dir/log/slurmd.out" 2>&1 & pids+=($!)
record=""
for _ in $(seq 60); do
  record=$(scontrol --oneliner show node "$node" 2>/dev/null || true)
  case "$record" in *State=IDLE*) break ;; esac
  sleep 1
done
case "$record" in *State=IDLE*) ;; *)
  tail -20 "$dir/log/slurmd.out" "$dir/log/slurmd.log" 2>/dev/null
  die "slurmd did not register as IDLE: ${record:-no record}" ;;
esac
gres=$(tr ' ' '\n' <<<"$record" | sed -n 's/^Gres=//p')
say "scontrol show node: Gres=$gres $(tr ' ' '\n' <<<"$record" | grep -E '^(State|AvailableFeatures)=' | tr '\n' ' ')"
case "$gres" in gpu:*:[1-9]*|gpu:[1-9]*) ;; *)
  grep -i -E 'gpu|gres' "$dir/log/slurmd.log" | tail -5 | while IFS= read -r line; do say "slurmd.log: $line"; done
  die "slurmd registered no GPU (Gres=$gres)" ;;
esac
if command -v nvidia-smi >/dev/null; then
  say "nvidia-smi -L on the host: $(nvidia-smi -L | wc -l) GPU(s)"
  # shellcheck disable=SC2016  # expanded by the step's shell
  step='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS=$SLURM_STEP_GPUS"; nvidia-smi -L'
else
  # shellcheck disable=SC2016
  step='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS=$SLURM_STEP_GPUS"'
fi
out=$(timeout 60 srun -N1 -w "$node" --gres=gpu:1 sh -c "$step" 2>&1) || { say "step: $out"; die "the one-GPU step failed"; }
say "srun --gres=gpu:1:"
while IFS= read -r line; do say "  $line"; done <<<"$out"
grep -q '^CUDA_VISIBLE_DEVICES=[0-9]' <<<"$out" || die "the step saw no GPU"
say "ok"
