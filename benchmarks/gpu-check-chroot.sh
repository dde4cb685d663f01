#!/usr/bin/env bash
# benchmarks/gpu-check.sh on a GPU machine that has no Slurm 26.05 (docs/howto-gpu.md): the lab's
# own Slurm 26.05.5 userland (Debian forky's packages, as `lab/kube/images.sh` builds them) packed
# into one archive here, unpacked there, and the check run in a chroot with the machine's /dev,
# /proc, /sys and its nvidia-smi; first with AutoDetect=nvidia, then with the devices declared.
#   benchmarks/gpu-check-chroot.sh pack DIR     # here, after lab/kube/images.sh: DIR/root.tar.xz
#   sudo benchmarks/gpu-check-chroot.sh run DIR # there, as root; logs under $OUT (default /tmp/gpu-check)
# Exit status of run: 0 when both modes passed, 1 autodetect failed, 2 declared failed, 3 both.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
images=${SLIME_LAB_IMAGE_PREFIX:-localhost/slime-kube/slinkyproject}
tag=${SLIME_LAB_SLURM_TAG:-26.05-forky}
say() { printf 'gpu-check-chroot: %s\n' "$*"; }

pack() {
  local dir=$1 root c
  root=$(mktemp -d)
  trap 'rm -rf "$root"' RETURN
  # slurmd's image has slurmd, slurmstepd and the clients; slurmctld comes from its own image
  c=$(podman create "$images/slurmd:$tag")
  podman export "$c" | tar -x -C "$root"
  podman rm "$c" >/dev/null
  c=$(podman create "$images/slurmctld:$tag")
  podman cp "$c:/usr/sbin/slurmctld-wlm" "$root/usr/sbin/slurmctld"
  podman rm "$c" >/dev/null
  # what no check runs (the archive travels: 240 MB of image, 25 MB packed)
  rm -rf "$root"/usr/share/{doc,man,locale,info,bash-completion,perl5} "$root"/usr/lib/python3* \
    "$root"/usr/lib/{systemd,openssh,apt} "$root"/var/cache/* "$root"/var/lib/apt/lists/* \
    "$root"/usr/lib/x86_64-linux-gnu/{gconv,perl-base,systemd,libapt*}
  for tool in slurmctld slurmd slurmstepd srun scontrol; do
    chroot "$root" sh -c "ldd \$(command -v $tool)" | grep -q 'not found' && { say "$tool misses a library"; exit 1; }
  done
  mkdir -p "$dir"
  tar -C "$root" -c . | xz -9 -T0 >"$dir/root.tar.xz"
  say "$dir/root.tar.xz: $(chroot "$root" slurmd -V), $(du -h "$dir/root.tar.xz" | cut -f1)"
}

run() {
  local dir=$1 root=/tmp/slime-gpu-root out=${OUT:-/tmp/gpu-check} smi lib files rc=0
  [ "$(id -u)" -eq 0 ] || { say "run as root (chroot, mount)"; exit 1; }
  mkdir -p "$root" "$out"
  # shellcheck source=/dev/null
  say "host: $(uname -srm); $(. /etc/os-release && echo "$PRETTY_NAME")"
  if command -v xz >/dev/null; then tar -xJf "$dir/root.tar.xz" -C "$root"
  else python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$dir/root.tar.xz" "$root"; fi
  for m in dev proc sys; do mountpoint -q "$root/$m" || mount --rbind "/$m" "$root/$m"; done
  # nvidia-smi for the job step, with the NVML library it loads (the driver's, whatever its path)
  mkdir -p "$root/usr/local/nvidia/bin" "$root/usr/local/nvidia/lib"
  if smi=$(command -v nvidia-smi); then
    say "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
    cp -L "$smi" "$root/usr/local/nvidia/bin/"
    for lib in $( (ldd "$smi" | awk '/nvidia/ {print $3}'; ldconfig -p | awk '/libnvidia-ml\.so/ {print $NF}') | sort -u); do
      [ -e "$lib" ] && cp -L "$lib" "$root/usr/local/nvidia/lib/"
    done
  fi
  cp "$here/gpu-check.sh" "$root/root/gpu-check.sh"
  local env_=(env -i HOME=/root PATH=/usr/local/nvidia/bin:/usr/sbin:/usr/bin:/sbin:/bin LD_LIBRARY_PATH=/usr/local/nvidia/lib KEEP=1)
  say "AutoDetect=nvidia"
  chroot "$root" "${env_[@]}" bash /root/gpu-check.sh || rc=1
  files=$(find /dev -maxdepth 1 -name 'nvidia[0-9]*' | sort | paste -sd, -)
  say "declared: ${files:-no /dev/nvidiaN}"
  [ -n "$files" ] && chroot "$root" "${env_[@]}" GPU_CHECK_PORT=16917 GPU_CHECK_TYPE="${GPU_CHECK_TYPE:-declared}" \
    GPU_CHECK_FILES="$files" bash /root/gpu-check.sh || rc=$((rc + 2))
  for log in "$root"/tmp/slime-gpu-check.*/log/*; do cp "$log" "$out/$(basename "$(dirname "$(dirname "$log")")")-$(basename "$log")"; done
  say "rc=$rc, logs in $out"
  return "$rc"
}

case "${1:-}" in
  pack) pack "${2:?pack DIR}" ;;
  run) run "${2:?run DIR}" ;;
  *) sed -n '2,8p' "$0"; exit 2 ;;
esac
