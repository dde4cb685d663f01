# slime.hybrid — entry points. Everything installs what it needs (scripts/install-deps.sh)
# and keeps build products under ~/.cache/slime-hybrid, never in the repository.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/slime-hybrid
VENV := $(CACHE)/venv
COLLECTIONS := $(CACHE)/collections
export SLIME_CACHE := $(CACHE)
export PATH := $(VENV)/bin:$(CACHE)/k8s/bin:$(PATH)
export K8S_AUTH_KUBECONFIG := $(CACHE)/k8s/kubeconfig
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PY_COLORS := 0
# Python keeps the bytecode of what it imports (in the venv under ~/.cache; this checkout's
# __pycache__ is ignored by git and galaxy.yml's build_ignore). Where the environment sets
# PYTHONDONTWRITEBYTECODE (this workplace's shell does), every ansible-playbook, local module
# and molecule process compiles jinja2, kubernetes, ... from source again: measured 1.0 CPU-s
# instead of 0.4 for the imports of one kubernetes.core module run, of which make test runs
# about 1,400 (benchmarks/test.sh).
unexport PYTHONDONTWRITEBYTECODE
# Upstream charts, CRDs and sources the test tiers fall back to where registries refuse them
# (never part of the repository): beside the checkout, or this workplace's shared copy.
SLIME_VENDOR_DIR ?= $(firstword $(wildcard $(CURDIR)/../shared/vendor /work/shared/vendor))
export SLIME_VENDOR_DIR

.PHONY: deps deps-system ee-image collection demo doctor kube-up kube-down test builds static unit k8s kube kube-modes kube-routed kube-openshift kube-faults integration sanity lint docs-check ee-check galaxy-check bench bench-kube bench-rerun bench-demo bench-test bench-metal3 build

deps:
	./scripts/install-deps.sh

# The system's part only (packages, podman's settings, Go): what the cluster builds need.
deps-system:
	./scripts/install-deps.sh --system

# Make this checkout the slime.hybrid collection Ansible loads; a copy under ~/.ansible (an older
# molecule's prerun, ansible-lint's) would be found first.
collection:
	@mkdir -p $(COLLECTIONS)/ansible_collections/slime
	@ln -sfn $(CURDIR) $(COLLECTIONS)/ansible_collections/slime/hybrid
	@rm -rf $(HOME)/.ansible/collections/ansible_collections/slime/hybrid

# The real-Kubernetes lab: kubelet, containerd, CNI, kube-proxy and CoreDNS in three node
# containers, and the bare-metal hosts beside them (lab/kube/README.md).
kube-up: deps collection
	./lab/kube/up.sh

kube-down:
	./lab/kube/down.sh

# The main job on a real Kubernetes (lab/kube): site.yml installs cert-manager, Slinky's operator
# and the slurm chart, reads the controller from the cluster and joins the bare-metal hosts;
# then sinfo and srun across pod and bare-metal workers, from the controller pod and from bare metal.
KUBECTL := $(CACHE)/k8s/bin/kubectl --kubeconfig $(CACHE)/kube/kubeconfig
CTL := $(KUBECTL) -n slurm exec slurm-controller-0 -c slurmctld --
demo: deps collection kube-up
	K8S_AUTH_KUBECONFIG=$(CACHE)/kube/kubeconfig ansible-playbook -i inventories/kube/hosts.yml playbooks/site.yml
	@echo; echo '$$ kubectl get pods -A -o wide'
	@$(KUBECTL) get pods -A -o wide
	@echo; echo '$$ sinfo -N -o "%N %T %f"   (in the controller pod)'
	@$(CTL) sinfo -N -o '%N %T %f'
	@echo; echo '$$ srun -N4 hostname   (pod and bare-metal workers in one step, from the controller pod)'
	@set -o pipefail; $(CTL) timeout 60 srun -N4 -l hostname | sort
	@echo; echo '$$ srun -N4 hostname   (launched from bare-metal host bm-1)'
	@set -o pipefail; podman exec bm-1 timeout 60 srun -N4 -l hostname | sort
	@echo; echo '$$ sacct -a -X   (the jobs in the accounting database, from the controller pod)'
	@$(CTL) sacct --allusers -X -o JobID,JobName,User,State,NodeList%30
	@echo; ./lab/kube/next-steps.sh

# The doctor (playbooks/doctor.yml) on the lab make demo built (SLIME_LAB_SLOT: another lab): every path the
# network mode needs, from every bare-metal host.
doctor: deps collection
	K8S_AUTH_KUBECONFIG=$(CACHE)/kube$(SLIME_LAB_SLOT)/kubeconfig ansible-playbook -i inventories/kube/hosts.yml playbooks/doctor.yml

# Every test tier, with a closing summary; SKIP_TIERS="k8s ..." leaves tiers out on request. The
# venv (make deps) installs beside the first builds (scripts/test-tiers.sh).
test: deps-system
	./scripts/test-tiers.sh

# What the real-Kubernetes labs run, built once (and cached): the Kubernetes binaries, CoreDNS,
# cert-manager, Slinky's operator, charts and containers, the bare hosts' image
# (lab/kube/up.sh --build-only), and the execution environment image (molecule ee; with the Helm
# client built above). Each tier also builds what it misses itself: make test builds these first so
# that the labs, which then run side by side, never build them twice; what one tier alone needs
# (Metal3's baremetal-operator: make k8s) is built there, beside the labs.
builds: deps-system
	./lab/kube/up.sh --build-only
	$(MAKE) --no-print-directory ee-image

ee-image: deps collection
	SLIME_EE_HELM=$(CACHE)/k8s/bin/helm ./scripts/build-ee.sh

# galaxy-check first: it runs ansible-lint under the importer's fixed time limit, best before the
# labs that make test runs beside this tier are at their busiest.
static: galaxy-check lint sanity docs-check ee-check

# What Galaxy's importer says about the tarball: no error, no warning.
galaxy-check: deps
	./scripts/check-galaxy.sh

docs-check: collection
	./scripts/check-docs.sh

ee-check: deps
	./scripts/check-ee.sh

lint: collection
	yamllint -s .
	@# Conditions YAML read as mappings (a ': ' in a plain scalar) are always true.
	python scripts/check_conditions.py
	@# Changelog fragments: known sections, valid YAML and RST (what a release's changelog is built from).
	antsibull-changelog lint
	@# ansible-lint installs the collection it lints under its ANSIBLE_HOME unless it finds a link to
	@# this checkout there: a home of its own, so that no copy shadows the checkout for other runs.
	@mkdir -p $(CACHE)/lint-home/collections/ansible_collections/slime
	@ln -sfn $(CURDIR) $(CACHE)/lint-home/collections/ansible_collections/slime/hybrid
	ANSIBLE_HOME=$(CACHE)/lint-home ansible-lint -c .config/ansible-lint.yml

sanity: collection
	./scripts/sanity.sh

unit: collection
	python -m pytest -q tests/unit

# Metal3 tier: Metal3's real baremetal-operator with Ironic and a Redfish emulator, on a control
# plane of the real API server and Slinky's operator (kwok for kubelets: no pod runs there; every
# claim about the Slurm pods is made on lab/kube by the kube tier). It fails when its binaries
# cannot be built.
k8s: collection
	./tests/k8s/k8s-test-bins.sh
	./tests/k8s/bmo-bin.sh
	./tests/integration/metal3/metal3-test-services.sh install
	molecule test -s metal3

# The whole mission on a real Kubernetes (lab/kube): site.yml installs cert-manager, Slinky's
# operator and the slurm chart with Slinky's containers rebuilt here, joins the bare-metal hosts,
# and one srun spans pods and metal. ee and kube share one cluster (network_mode nat), as a site
# keeps one: ee converges it from nothing with the execution environment image and runs site.yml
# again (idempotence), kube then proves the mission on it (its verify alone: its own converge and
# idempotence would be site.yml's third and fourth run on the same cluster); the faults and
# scaling run in the same mode on a cluster of their own (kube-faults).
# Each scenario alone (molecule test -s NAME) makes, converges and removes its own cluster.
# `--destroy never` skips the scenario's first destroy too, so the state molecule keeps of the last
# run ("created") is reset here, or ee would skip creating the cluster down.sh just removed.
kube: collection
	./lab/kube/down.sh
	molecule reset -s ee
	molecule reset -s kube
	molecule test -s ee --destroy never
	molecule verify -s kube
	$(MAKE) --no-print-directory kube-down

# The other network modes on a real Kubernetes: kube-routed and kube-openshift (hostnetwork, with
# OpenShift's SCC admission), each from a cluster of its own (a NodeSet takes a new network only
# through the operator's rolling update; OpenShift admits every pod from the first), in labs of
# their own (SLIME_LAB_SLOT=2 and 4, lab/env.sh: own network, addresses and containers), so that
# make test runs them beside the kube tier: routed in a lane of its own, OpenShift after the
# Metal3 tiers (k8s, integration) in theirs (scripts/test-tiers.sh).
kube-modes: kube-routed kube-openshift

kube-routed: collection
	SLIME_LAB_SLOT=2 molecule test -s kube-routed

kube-openshift: collection
	SLIME_LAB_SLOT=4 molecule test -s kube-openshift

# The faults catalogue (docs/faults.md) and the bare-metal lifecycle (cloud-init, scale-in while a
# job runs, scale-out, autoscaling) in network mode nat, on a cluster of its own in the third lab
# (SLIME_LAB_SLOT=3), so that make test runs them beside the kube tier's mission.
kube-faults: collection
	SLIME_LAB_SLOT=3 molecule test -s kube-faults

# Against real services on this machine: BMC preflight (sushy-tools Redfish, IPMI) and
# Ironic enrollment (Ironic 35.0.0 from PyPI, standalone); the Metal3 lab role's checks and rendering (lab/metal3-dev-env).
integration: collection
	python -m pytest -q tests/integration/metal3
	./tests/integration/metal3_dev_env.sh

bench: deps collection
	./benchmarks/run.sh

# The real-Kubernetes lab's figures: cluster up, site.yml first run and re-run, NodeAddr before and
# after the fix, srun across pods and metal (BENCH_COLD=1: from nothing, builds included).
bench-kube: deps collection
	./benchmarks/kube.sh

# A converged site.yml re-run against an empty play over the same hosts (3 pairs: wall, CPU-seconds, ratio), on
# the cluster make demo or bench-kube left (BENCH_PROFILE=1: and the re-run's slowest tasks).
bench-rerun: deps collection
	K8S_AUTH_KUBECONFIG=$(CACHE)/kube/kubeconfig ./benchmarks/rerun.sh

# `make demo` timed as a newcomer runs it (BENCH_COLD=1: from nothing, the whole cache removed).
# Not through deps: a cold run must find no venv either.
bench-demo:
	./benchmarks/demo.sh

# `make test` timed as CI runs it, with how busy the CPUs were (BENCH_COLD=1: from nothing).
bench-test:
	./benchmarks/test.sh

# Provisioning waves of 10, 30 and 100 BareMetalHosts through site.yml on the Metal3 tier's stack
# (BENCH_HOSTS="N ...": other counts). Not beside make test (the Metal3 tier's ports).
bench-metal3: deps collection
	./benchmarks/metal3_scale.sh $(BENCH_HOSTS)

build: collection
	ansible-galaxy collection build --force --output-path $(CACHE)/dist .
