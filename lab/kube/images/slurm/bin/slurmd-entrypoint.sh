#!/usr/bin/env bash
# slurmd container entrypoint (slime.hybrid), keeping the contract of Slinky's image
# (SlinkyProject/containers @ 05efda0, files/usr/local/bin/slurmd-entrypoint.sh) that
# slurm-operator v1.2.1 relies on (internal/builder/workerbuilder/worker_app.go):
# - args `-Z --conf-server <controller>:6817 --conf '<Features=... ...>'` (the operator's) and
#   $SLURMD_OPTIONS become slurmd's options; the quoted --conf value stays one argument;
# - POD_CPUS (whole CPUs) and POD_MEMORY (MiB), the pod's limits, reserve the rest of the node:
#   CoreSpecCount and MemSpecLimit added to --conf; POD_TOPOLOGY (a pod annotation) becomes
#   Topology= (dynamic topology);
# - sshd beside slurmd (nodeset ssh), with pam_slurm_adopt in its account stack
#   ($PAM_SLURM_ADOPT_OPTIONS), host keys generated when none is mounted;
# - slurmd serves /livez and /readyz on 6818 (the probes); the preStop hook runs
#   `/usr/bin/sh -c "scontrol update nodename=$(hostname) state=down ..."`.
set -euo pipefail

export SLURMD_OPTIONS="${SLURMD_OPTIONS:-} $*"
export SSHD_OPTIONS="${SSHD_OPTIONS:-}"
export PAM_SLURM_ADOPT_OPTIONS="${PAM_SLURM_ADOPT_OPTIONS:-action_adopt_failure=deny action_generic_failure=deny}"
POD_CPUS=${POD_CPUS:-0}
POD_MEMORY=${POD_MEMORY:-0}
POD_TOPOLOGY=${POD_TOPOLOGY:-}

say() { printf '[%s] entrypoint: %s\n' "$(date -Is)" "$*"; }

# field NAME: NAME=<n> from `slurmd -C` (this node's hardware as slurmd sees it).
hw=
field() {
  [ -n "$hw" ] || hw=$(slurmd -C)
  printf '%s\n' "$hw" | tr ' ' '\n' | sed -n "s/^$1=\([0-9][0-9]*\)\$/\1/p" | head -n 1
}

# Cores the pod may not use: the node's cores minus the pod's CPUs (threads) in cores.
core_spec_count() {
  local cores threads n
  cores=$(( $(field Boards) * $(field SocketsPerBoard) * $(field CoresPerSocket) ))
  threads=$(field ThreadsPerCore)
  n=$(( cores - POD_CPUS / threads ))
  echo $(( n > 0 ? n : 0 ))
}

# Memory (MiB) the pod may not use: the node's RealMemory minus the pod's limit.
mem_spec_limit() {
  local n
  n=$(( $(field RealMemory) - POD_MEMORY ))
  echo $(( n > 0 ? n : 0 ))
}

# add_conf ITEM: ITEM joins the value of --conf in SLURMD_OPTIONS (one is added if none).
# The options string is split as the shell will split it (quotes kept together) with gawk.
add_conf() {
  local item=$1 found=0 i val words=()
  readarray -t words < <(printf '%s' "$SLURMD_OPTIONS" \
    | gawk -v FPAT="([^ ]+)|[^ ]*((\"[^\"]+\")|('[^']+'))" '{ for (i = 1; i <= NF; i++) print $i }')
  for i in "${!words[@]}"; do
    case ${words[$i]} in
      --conf=*)
        val=${words[$i]#--conf=}; val=${val//[\"\']/}
        words[i]="--conf='$val $item'"; found=1 ;;
      --conf)
        val=${words[$((i + 1))]}; val=${val//[\"\']/}
        words[i + 1]="'$val $item'"; found=1 ;;
    esac
  done
  [ "$found" = 1 ] || words+=(--conf "'$item'")
  SLURMD_OPTIONS="${words[*]}"
}

# pam_slurm_adopt before common-account, whose pam_localuser would otherwise end the stack
# for local users before it.
pam_slurm_adopt() {
  local f=/etc/pam.d/sshd
  [ -f "$f" ] || return 0
  grep -q pam_slurm_adopt.so "$f" && return 0
  sed -i "s|^@include[[:space:]]*common-account|account    required     pam_slurm_adopt.so $PAM_SLURM_ADOPT_OPTIONS\n&|" "$f"
}

mkdir -p /run/slurm /var/spool/slurmd /run/sshd
chmod 0755 /run/sshd
ssh-keygen -A >/dev/null
pam_slurm_adopt

n=0
if [ "$POD_CPUS" -gt 0 ]; then n=$(core_spec_count); fi
if [ "$n" -gt 0 ]; then add_conf "CoreSpecCount=$n"; fi
n=0
if [ "$POD_MEMORY" -gt 0 ]; then n=$(mem_spec_limit); fi
if [ "$n" -gt 0 ]; then add_conf "MemSpecLimit=$n"; fi
if [ -n "$POD_TOPOLOGY" ]; then add_conf "Topology=$POD_TOPOLOGY"; fi
export SLURMD_OPTIONS
say "SLURMD_OPTIONS=$SLURMD_OPTIONS"
exec supervisord -c /etc/supervisor/supervisord.conf
