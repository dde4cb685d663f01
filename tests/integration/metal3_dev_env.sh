#!/usr/bin/env bash
# The Metal3 lab's role (lab/metal3-dev-env/roles/metal3_dev_env) on this machine, for real (tests/integration/metal3_dev_env.yml):
#   a) with the bring-up enabled, the prerequisite check stops the role and names exactly what this
#      runner finds missing here (distribution, /dev/kvm, libvirt, git, make, user, sudo, CPUs,
#      memory, disk, filesystem), and nothing was written;
#   b) with the bring-up disabled, config_USER.sh is written; bash sources it to the values given;
#      a second run changes nothing, a changed input changes the file, and that again only once;
#   c) three bad inputs are refused before anything is written, naming the value;
#   d) over a working directory laid out as metal3-dev-env leaves it, metal3_dev_env_hosts holds its
#      hosts (metal3_hosts_list format, accepted by metal3_hosts), and no BMC password is printed;
#   e) inventories/metal3-dev-env matches the role's defaults, passes the cluster model and
#      metal3_hosts validators, and over that working directory equals what the role reads;
#   f) the guarded bring-up (checkout at the pinned commit, make with CONFIG, once per configuration,
#      hosts read afterwards), with a local stand-in repository instead of metal3-dev-env.
# Nothing outside a temporary directory is written; no VM, container or network is created.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
export PATH="$cache/venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-$cache/collections}
export ANSIBLE_CONFIG=$here/ansible.cfg PY_COLORS=0 ANSIBLE_NOCOLOR=1
# The role is the lab's, found on its roles path; the collection's filters it shares come installed.
export ANSIBLE_ROLES_PATH=$here/lab/metal3-dev-env/roles
# One line per result, so the messages can be picked out of the log.
export ANSIBLE_CALLBACK_RESULT_FORMAT=json
if [ ! -e "$ANSIBLE_COLLECTIONS_PATH/ansible_collections/slime/hybrid/roles/metal3_hosts" ]; then
  echo "slime.hybrid is not installed at $ANSIBLE_COLLECTIONS_PATH (run: make collection)" >&2
  exit 2
fi
pb=$here/tests/integration/metal3_dev_env.yml
work=$(mktemp -d /tmp/slime-metal3-dev-env.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# JSON list of the arguments (for -e).
json_list() { python -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"; }
# ansible-playbook on localhost; output kept in $work/last.log.
play() { ansible-playbook -i localhost, -c local "$pb" "$@" >"$work/last.log" 2>&1; }
recap_changed() { sed -nE 's/^localhost +:.* changed=([0-9]+).*/\1/p' "$work/last.log"; }
show_stop() { grep -F '"msg": "STOPPED at' "$work/last.log" | sed -E 's/^ *"msg": "/    /; s/"$//'; }

# ---------------------------------------------------------------------------------------------
echo "== a) prerequisite check on $(hostname)"
# What this machine has, found here independently of the role.
sbin_path="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
has() { PATH=$sbin_path command -v "$1" >/dev/null 2>&1; }
supported="centos9 rhel9 ubuntu20 ubuntu22"
# shellcheck disable=SC1091
distro=$(. /etc/os-release && echo "${ID}${VERSION_ID%%.*}")
missing=() present=()
os_ok=0
case " $supported " in *" $distro "*) os_ok=1 ;; esac
if [ $os_ok = 1 ]; then present+=("supported OS:"); else missing+=("supported OS: $distro is not one of"); fi
if [ -c /dev/kvm ]; then present+=("KVM:"); else missing+=("KVM: /dev/kvm is missing"); fi
if { has virsh && { has libvirtd || has virtqemud; }; } || [ $os_ok = 1 ]; then present+=("libvirt:")
else missing+=("libvirt: virsh and libvirtd"); fi
# CONTAINER_RUNTIME auto: docker on Ubuntu (installed by metal3-dev-env there), podman elsewhere.
if [ "${distro#ubuntu}" != "$distro" ]; then
  if { has docker && [ -S /var/run/docker.sock ]; } || [ $os_ok = 1 ]; then present+=("container runtime")
  else missing+=("container runtime docker"); fi
elif has podman || [ $os_ok = 1 ]; then present+=("container runtime")
else missing+=("container runtime podman"); fi
if has git; then present+=("git:"); else missing+=("git: not installed"); fi
if has make; then present+=("make:"); else missing+=("make: not installed"); fi
if [ "$(id -u)" = 0 ]; then missing+=("a non-root user: connected as $(id -un)"); else present+=("a non-root user:"); fi
if has sudo; then present+=("sudo: not installed"); else missing+=("sudo: not installed"); fi
if [ "$(id -u)" != 0 ] && has sudo; then
  if sudo -n true 2>/dev/null && sudo -n -l 2>/dev/null | grep -qF '(ALL) NOPASSWD: ALL'; then present+=("passwordless sudo:")
  else missing+=("passwordless sudo:"); fi
fi
cpus=$(grep -c '^processor' /proc/cpuinfo)
if [ "$cpus" -ge 4 ]; then present+=("CPUs:"); else missing+=("CPUs: $cpus, at least 4 needed"); fi
mem_mb=$(( $(sed -nE 's/^MemTotal: +([0-9]+) kB/\1/p' /proc/meminfo) / 1024 ))
if [ "$mem_mb" -ge $((2 * 4096 + 4096)) ]; then present+=("memory:"); else missing+=("memory: $mem_mb MB, at least 12288 MB"); fi
avail_kb=$(df -k --output=avail "$work" | tail -n 1 | tr -d ' ')
if [ "$avail_kb" -ge $((40 * 1048576)) ]; then present+=("disk:"); else missing+=("disk:"); fi
fs=$(df --output=fstype / | tail -n 1 | tr -d ' ')
case "$fs" in ext4 | btrfs | xfs) present+=("filesystem:") ;; *) missing+=("filesystem: / is $fs") ;; esac
printf '   missing here: %s\n' "${missing[@]:-(nothing)}"
printf '   present here: %s\n' "${present[@]}"
if [ ${#missing[@]} -eq 0 ]; then
  echo "   this machine has every prerequisite: the check cannot be shown to stop the role here"
  fail "a) nothing is missing on this machine"
elif play -e scenario=preflight -e metal3_dev_env_base_dir="$work/lab-a" -e metal3_dev_env_working_dir="$work/opt-a" \
    -e "{\"expect_missing\": $(json_list "${missing[@]}"), \"expect_present\": $(json_list "${present[@]}")}"; then
  show_stop
  if [ ! -e "$work/lab-a" ] && [ ! -e "$work/opt-a" ]; then
    pass "a) the prerequisite check stopped the role naming ${#missing[@]} missing prerequisite(s) and nothing present; nothing written"
  else
    fail "a) the role wrote $(ls -d "$work"/lab-a "$work"/opt-a 2>/dev/null) before stopping"
  fi
else
  sed 's/^/    /' "$work/last.log" | tail -n 30
  fail "a) the prerequisite check did not stop the role as expected"
fi

# ---------------------------------------------------------------------------------------------
echo "== b) configuration only (metal3_dev_env_run=false)"
cfg="$work/lab-b/config_$(id -un).sh"
render_vars=(-e scenario=converge -e metal3_dev_env_run=false -e metal3_dev_env_base_dir="$work/lab-b"
  -e metal3_dev_env_working_dir="$work/opt-b" -e metal3_dev_env_control_plane_machine_count=1
  -e metal3_dev_env_worker_machine_count=2 -e metal3_dev_env_bmc_driver=redfish-virtualmedia
  -e metal3_dev_env_boot_mode=UEFI -e metal3_dev_env_image_os=ubuntu
  -e metal3_dev_env_image_name=UBUNTU_22.04_NODE_IMAGE_K8S_v1.33.0.qcow2 -e metal3_dev_env_container_runtime=docker
  -e metal3_dev_env_external_subnet_v4=192.168.222.0/24 -e metal3_dev_env_provisioning_network=172.23.0.0/24
  -e metal3_dev_env_node_memory_mb=6144
  -e '{"metal3_dev_env_extra_config": {"KUBERNETES_VERSION": "v1.33.0", "IRONIC_TLS_SETUP": false}}')
names=(WORKING_DIR NUM_NODES CONTROL_PLANE_MACHINE_COUNT WORKER_MACHINE_COUNT TARGET_NODE_MEMORY NAMESPACE BMC_DRIVER
  BOOT_MODE IMAGE_OS IMAGE_NAME IMAGE_USERNAME CONTAINER_RUNTIME EPHEMERAL_CLUSTER IP_STACK EXTERNAL_SUBNET_V4
  EXTERNAL_SUBNET_V4_HOST BARE_METAL_PROVISIONER_NETWORK KUBERNETES_VERSION IRONIC_TLS_SETUP)
sourced() {  # the variables as metal3-dev-env's bash sees them after sourcing the file (exported only)
  # shellcheck disable=SC2016
  env -i bash -c 'set -eu; source "$1"; shift; for n in "$@"; do printf "%s=%s\n" "$n" "$(printenv "$n" || echo UNSET)"; done' \
    _ "$cfg" "${names[@]}"
}
expected() {
  cat <<EOF
WORKING_DIR=$work/opt-b
NUM_NODES=$1
CONTROL_PLANE_MACHINE_COUNT=1
WORKER_MACHINE_COUNT=2
TARGET_NODE_MEMORY=6144
NAMESPACE=metal3
BMC_DRIVER=redfish-virtualmedia
BOOT_MODE=UEFI
IMAGE_OS=ubuntu
IMAGE_NAME=UBUNTU_22.04_NODE_IMAGE_K8S_v1.33.0.qcow2
IMAGE_USERNAME=metal3
CONTAINER_RUNTIME=docker
EPHEMERAL_CLUSTER=kind
IP_STACK=v4
EXTERNAL_SUBNET_V4=192.168.222.0/24
EXTERNAL_SUBNET_V4_HOST=192.168.222.1
BARE_METAL_PROVISIONER_NETWORK=172.23.0.0/24
KUBERNETES_VERSION=v1.33.0
IRONIC_TLS_SETUP=false
EOF
}
check_render() {  # $1 label, $2 NUM_NODES, $3 expected changed count
  local label=$1 nodes=$2 want=$3 got
  if ! play "${render_vars[@]}" -e metal3_dev_env_num_nodes="$nodes"; then
    sed 's/^/    /' "$work/last.log" | tail -n 20; fail "b) $label: the play failed"; return
  fi
  got=$(recap_changed)
  if [ "$want" = any ] && [ "${got:-0}" -gt 0 ] || [ "$got" = "$want" ]; then pass "b) $label: changed=$got"
  else fail "b) $label: changed=$got, expected $want"; fi
  if diff <(expected "$nodes") <(sourced) >"$work/diff" 2>&1; then pass "b) $label: bash sources $cfg to the given values (NUM_NODES=$nodes)"
  else sed 's/^/    /' "$work/diff"; fail "b) $label: $cfg does not source to the given values"; fi
}
check_render "first run" 3 any
check_render "second run, same inputs" 3 0
check_render "NUM_NODES changed" 4 1
check_render "run again" 4 0
if [ -e "$work/lab-b/metal3-dev-env" ] || [ -e "$work/opt-b" ] || [ -e "$work/lab-b/.slime-bringup" ]; then
  fail "b) with the bring-up disabled something besides the configuration was created"
else
  pass "b) only the configuration was written (no checkout, no working directory, no bring-up stamp)"
fi

# ---------------------------------------------------------------------------------------------
echo "== c) bad inputs"
refuse() {  # $1 label, $2 JSON list of strings the message must contain, then -e arguments
  local label=$1 want=$2
  shift 2
  if play -e scenario=refused -e metal3_dev_env_base_dir="$work/lab-c" -e metal3_dev_env_working_dir="$work/opt-c" \
      -e "{\"expect_in_msg\": $want}" "$@"; then
    show_stop
    if [ -e "$work/lab-c" ] || [ -e "$work/opt-c" ]; then fail "c) $label: refused, but something was written"
    else pass "c) $label: refused before anything was written"; fi
  else
    sed 's/^/    /' "$work/last.log" | tail -n 25; fail "c) $label: not refused as expected"
  fi
}
refuse "NUM_NODES 0" "$(json_list 'metal3_dev_env_num_nodes=0' 'from 1 to 63')" -e metal3_dev_env_num_nodes=0
refuse "BMC driver idrac" "$(json_list 'idrac' 'mixed, ipmi, redfish, redfish-virtualmedia, redfish-uefihttp')" \
  -e metal3_dev_env_bmc_driver=idrac
refuse "external subnet 192.168.111.0/33" "$(json_list 'metal3_dev_env_external_subnet_v4' '192.168.111.0/33' 'CIDR')" \
  -e metal3_dev_env_external_subnet_v4=192.168.111.0/33

# ---------------------------------------------------------------------------------------------
echo "== d) reading the hosts of a lab"
# A working directory as metal3-dev-env leaves it with the role's defaults (BMC_DRIVER=redfish):
# ironic_nodes.json as vm-setup's ironic_nodes.json.j2 writes it, and the images 01_prepare_host.sh
# downloads and converts. The MACs and UUIDs stand for the random ones a real lab gets.
lab="$work/wd-lab"
mkdir -p "$lab/ironic/html/images"
node() {  # name uuid mac
  cat <<EOF
    {
      "name": "$1",
      "driver": "redfish",
      "resource_class": "baremetal",
      "driver_info": {
        "username": "admin",
        "password": "password",
        "port": "8000",
        "address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/$2",
        "redfish_verify_ca": "False",
        "deploy_kernel": "http://172.22.0.1/images/ironic-python-agent.kernel",
        "deploy_ramdisk": "http://172.22.0.1/images/ironic-python-agent.initramfs"
      },
      "ports": [{"address": "$3", "pxe_enabled": true}],
      "properties": {"local_gb": "50", "cpu_arch": "x86_64"}
    }
EOF
}
{ echo '{"nodes": ['; node node-0 1b6a2f0e-6f5a-4c43-9a50-0f3c3f1f6a01 00:6a:3c:91:0e:20; echo ','
  node node-1 7d2c5e44-0b1e-4f0b-8b0c-5d1f2a9e7b02 00:6a:3c:91:0e:24; echo ']}'; } >"$lab/ironic_nodes.json"
image=UBUNTU_24.04_NODE_IMAGE_K8S_v1.37.0
head -c 1048576 /dev/urandom >"$lab/ironic/html/images/$image.qcow2"
head -c 2097152 /dev/urandom >"$lab/ironic/html/images/$image-raw.img"
sha256sum "$lab/ironic/html/images/$image-raw.img" | cut -d' ' -f1 >"$lab/ironic/html/images/$image-raw.img.sha256sum"
: >"$lab/ironic/html/images/ironic-python-agent.kernel"
python - "$work/expected_hosts.json" "$image-raw.img" <<'PY'
import json, sys
nodes = [("node-0", "1b6a2f0e-6f5a-4c43-9a50-0f3c3f1f6a01", "00:6a:3c:91:0e:20"),
         ("node-1", "7d2c5e44-0b1e-4f0b-8b0c-5d1f2a9e7b02", "00:6a:3c:91:0e:24")]
url = "http://172.22.0.1/images/" + sys.argv[2]
hosts = [{"name": n, "bmc": {"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/" + u,
                             "username": "admin", "password": "password", "disable_certificate_verification": True},
          "boot_mac": m, "boot_mode": "legacy",
          "image": {"url": url, "checksum": url + ".sha256sum", "checksum_type": "sha256", "format": "raw"},
          "root_device_hints": {"deviceName": "/dev/sda"}, "features": ["baremetal"]} for n, u, m in nodes]
json.dump(hosts, open(sys.argv[1], "w"))
PY
if play -v -e scenario=hosts -e metal3_dev_env_run=false -e metal3_dev_env_base_dir="$work/lab-d" \
    -e metal3_dev_env_working_dir="$lab" -e expected_hosts_file="$work/expected_hosts.json"; then
  pass "d) metal3_dev_env_hosts = the 2 hosts of ironic_nodes.json with the raw image, accepted by metal3_hosts"
  grep -E '"msg": "node-[01]: bmc' "$work/last.log" | sed -E 's/^ *"msg": "/    /; s/"$//'
  if grep -qE "password['\"]?: ['\"]?password" "$work/last.log"; then fail "d) a BMC password was printed (-v)"
  else pass "d) no BMC password in the -v output"; fi
else
  sed 's/^/    /' "$work/last.log" | grep -v -i password | tail -n 25; fail "d) metal3_dev_env_hosts is not what the working directory holds"
fi

# With metal3_dev_env_image_name set (the lab's IMAGE_NAME), the raw image is the one made of that
# image (its extension, and a .xz/.bz2 before it, replaced by -raw.img), even beside another lab's.
decoy="$lab/ironic/html/images/CENTOS_9_NODE_IMAGE_K8S_v1.37.0-raw.img"
head -c 16 /dev/urandom >"$decoy"
if play -e scenario=hosts -e metal3_dev_env_run=false -e metal3_dev_env_base_dir="$work/lab-d" \
    -e metal3_dev_env_working_dir="$lab" -e expected_hosts_file="$work/expected_hosts.json" \
    -e metal3_dev_env_image_name="$image.qcow2"; then
  pass "d) metal3_dev_env_image_name=$image.qcow2 picks $image-raw.img beside another raw image"
else
  sed 's/^/    /' "$work/last.log" | grep -v -i password | tail -n 25; fail "d) the raw image of metal3_dev_env_image_name was not found"
fi
rm -f "$decoy"

# ---------------------------------------------------------------------------------------------
echo "== e) inventories/metal3-dev-env"
inv=$here/inventories/metal3-dev-env/hosts.yml
if ansible-playbook -i "$inv" "$pb" -e scenario=inventory >"$work/last.log" 2>&1; then
  pass "e) without a lab: matches the role's defaults; slime_cluster valid; metal3_hosts refuses only the LAB-NOT-UP values"
else
  sed 's/^/    /' "$work/last.log" | tail -n 25; fail "e) the inventory without a lab"
fi
if ansible-playbook -i "$inv" "$pb" -e scenario=inventory -e metal3_dev_env_working_dir="$lab" \
    -e expected_hosts_file="$work/expected_hosts.json" >"$work/last.log" 2>&1; then
  pass "e) over the lab: metal3_hosts_list is accepted by metal3_hosts and equals what the role reads"
else
  sed 's/^/    /' "$work/last.log" | grep -v -i password | tail -n 25; fail "e) the inventory over the lab"
fi

# The lab's playbook finds the role beside it (no roles path given) and runs it on the inventory.
if env -u ANSIBLE_ROLES_PATH ansible-playbook -i "$inv" "$here/lab/metal3-dev-env/up.yml" -e metal3_dev_env_run=false \
    -e metal3_dev_env_base_dir="$work/lab-e" >"$work/last.log" 2>&1 && [ -s "$work/lab-e/config_$(id -un).sh" ]; then
  pass "e) lab/metal3-dev-env/up.yml on the inventory (bring-up off): config_$(id -un).sh written"
else
  sed 's/^/    /' "$work/last.log" | tail -n 25; fail "e) lab/metal3-dev-env/up.yml on the inventory"
fi

# ---------------------------------------------------------------------------------------------
echo "== f) the guarded bring-up, with a stand-in for metal3-dev-env (preflight off)"
# Not metal3-dev-env (that needs a KVM host of a supported distribution): a local repository whose
# make sources CONFIG, logs the call and leaves d)'s node list and image in WORKING_DIR, as
# 02_configure_host.sh and 01_prepare_host.sh do. It shows the role's own mechanics: the pinned
# checkout, make run with CONFIG, once per configuration, and the hosts read after it; a make that
# changes tracked files (as a lab run may) does not break the next run.
repo="$work/standin" base="$work/lab-f" wd="$work/opt-f"
mkdir -p "$repo/images"
cp "$lab/ironic_nodes.json" "$repo/nodes.json"
cp "$lab/ironic/html/images/$image-raw.img" "$lab/ironic/html/images/$image-raw.img.sha256sum" "$repo/images/"
# shellcheck disable=SC2016  # make's $$ escapes, expanded by make and bash, not here
{
  printf 'all:\n'
  printf '\t@bash -c '\''set -eu; source "$$CONFIG"; echo "make all NUM_NODES=$$NUM_NODES CONFIG=$$CONFIG" >>"$$(dirname "$$CONFIG")/make.log"; '
  printf 'mkdir -p "$$WORKING_DIR/ironic/html/images"; cp nodes.json "$$WORKING_DIR/ironic_nodes.json"; '
  printf 'cp images/* "$$WORKING_DIR/ironic/html/images/"; echo run >>tracked.log'\''\n'
} >"$repo/Makefile"
: >"$repo/tracked.log"   # committed, and changed by every make: the checkout has local changes afterwards
gitc() { git -C "$repo" -c user.name=test -c user.email=test@example.invalid "$@"; }
gitc init -q && gitc add -A && gitc commit -qm pinned
pinned=$(gitc rev-parse HEAD)
printf 'all:\n\t@echo "not the pinned commit" >&2; exit 1\n' >"$repo/Makefile"
gitc commit -qam later
bringup() {  # NUM_NODES
  play -e scenario=converge -e metal3_dev_env_preflight=false -e metal3_dev_env_repo="$repo" \
    -e metal3_dev_env_version="$pinned" -e metal3_dev_env_base_dir="$base" -e metal3_dev_env_working_dir="$wd" \
    -e metal3_dev_env_num_nodes="$1"
}
make_calls() { wc -l <"$base/make.log" 2>/dev/null || echo 0; }
if bringup 2; then
  head=$(git -C "$base/metal3-dev-env" rev-parse HEAD)
  if [ "$head" = "$pinned" ]; then pass "f) checkout at the pinned commit ${pinned:0:12}, not the branch head"
  else fail "f) checkout at $head, not the pinned $pinned"; fi
  if [ "$(make_calls)" -eq 1 ] && grep -qxF "make all NUM_NODES=2 CONFIG=$base/config_$(id -un).sh" "$base/make.log"; then
    pass "f) make ran once, with CONFIG=$base/config_$(id -un).sh (NUM_NODES=2 read from it)"
  else fail "f) make calls: $(cat "$base/make.log" 2>/dev/null)"; fi
  if git -C "$base/metal3-dev-env" status --porcelain | grep -q ' tracked.log$'; then
    pass "f) make changed a tracked file of the checkout (the next runs must cope)"
  else fail "f) the stand-in's make did not change the checkout"; fi
  if grep -qE '"msg": "node-1: bmc redfish\+http://192.168.111.1:8000/' "$work/last.log"; then
    pass "f) the hosts were read after the bring-up"
  else fail "f) no hosts read after the bring-up"; fi
else
  sed 's/^/    /' "$work/last.log" | grep -v -i password | tail -n 25; fail "f) the bring-up failed"
fi
if bringup 2 && [ "$(recap_changed)" = 0 ] && [ "$(make_calls)" -eq 1 ]; then
  pass "f) second run: changed=0, make not run again"
else fail "f) second run: changed=$(recap_changed), make calls $(make_calls)"; fi
if bringup 3 && [ "$(make_calls)" -eq 2 ] && tail -n 1 "$base/make.log" | grep -q 'NUM_NODES=3 '; then
  pass "f) NUM_NODES changed: the configuration changed and make ran again (changed=$(recap_changed))"
else fail "f) NUM_NODES changed: make calls $(make_calls)"; fi
if bringup 3 && [ "$(recap_changed)" = 0 ] && [ "$(make_calls)" -eq 2 ]; then
  pass "f) and again: changed=0"
else fail "f) and again: changed=$(recap_changed), make calls $(make_calls)"; fi

echo
if [ "$failures" -eq 0 ]; then echo "metal3_dev_env: all checks passed"; else echo "metal3_dev_env: $failures check(s) failed"; fi
[ "$failures" -eq 0 ]
