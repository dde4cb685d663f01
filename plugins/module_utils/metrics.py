# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Metrics: the model's ``metrics`` section - slurmctld's OpenMetrics and a node exporter on bare metal.

- ``controller``: slurm.conf MetricsType=metrics/openmetrics, which Slinky's slurm chart 1.2.1 writes
  for ``controller.metrics.enabled`` (slurm-operator v1.2.1 internal/builder/controllerbuilder/
  controller_config.go); slurmctld then serves OpenMetrics on its own port, 6817, under /metrics/jobs,
  /metrics/nodes, /metrics/partitions, /metrics/scheduler and /metrics/jobs-users-accts (Slurm 26.05,
  doc/html/metrics.shtml), without authentication unless PrivateData or MetricsAuthUsers is set. With
  the chart's ``controller.metrics.serviceMonitor`` the operator makes a Prometheus Operator
  ServiceMonitor of the first four where the cluster serves its API. MetricsType is new in Slurm 25.11 (absent from 24.11's
  and 25.05's src/common/read_config.c): an older slurmd refuses the whole slurm.conf it fetches
  ("Parsing error at unrecognized key"), so with it every slurmd must be 25.11 or newer (OLDEST).
- ``node_exporter``: the distribution's Prometheus node exporter on every bare-metal worker (Debian's
  prometheus-node-exporter, which its package starts on port 9100), and an inbound firewall rule for
  that port; what a site expects to scrape of a node (file systems, memory, network, hardware), which
  slurmctld's metrics do not say. apt workers only: EL has no node exporter in its own repositories.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DEFAULTS = {"controller": False, "node_exporter": False}
# The oldest slurmd that reads a slurm.conf with MetricsType (see above).
OLDEST = {"release": "25.11", "why": "slurm.conf's MetricsType (slime_cluster.metrics.controller) is new in Slurm 25.11"}
ENDPOINTS = ("/metrics/jobs", "/metrics/nodes", "/metrics/partitions", "/metrics/scheduler", "/metrics/jobs-users-accts")
NODE_EXPORTER_PORT = 9100
# Per package manager: the package and its service (Debian's package enables and starts it).
NODE_EXPORTER = {"apt": {"package": "prometheus-node-exporter", "service": "prometheus-node-exporter"}}


def settings(raw):
    """(section, errors): the model's metrics section with defaults; every error at once."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, ["metrics=%r must be a mapping of %s (see docs/howto-metrics.md)" % (raw, ", ".join(sorted(DEFAULTS)))]
    errors = ["metrics.%s is not a setting; allowed: %s" % (key, ", ".join(sorted(DEFAULTS)))
              for key in sorted(set(raw) - set(DEFAULTS), key=str)]
    section = dict(DEFAULTS, **dict((k, v) for k, v in raw.items() if v is not None and k in DEFAULTS))
    errors += ["metrics.%s=%r must be true or false" % (key, section[key]) for key in sorted(DEFAULTS)
               if not isinstance(section[key], bool)]
    return (None, errors) if errors else (section, [])


def oldest_slurmd(section):
    """The oldest slurmd the cluster's slurm.conf lets join ({release, why}), None for Slurm's window alone."""
    return dict(OLDEST) if section and section["controller"] else None


def inbound(section):
    """The bare-metal workers' inbound rules the section adds (the node exporter's port)."""
    if not section or not section["node_exporter"]:
        return []
    ports = str(NODE_EXPORTER_PORT)
    return [{"name": "node-exporter", "ports": ports, "comment": "slime.hybrid/in-node-exporter tcp:%s" % ports}]


def node_exporter(model, manager):
    """{package, service, port} of a bare-metal worker's node exporter, None without one; ValueError where the
    package manager has none."""
    section = model.get("metrics")
    if not section or not section["node_exporter"]:
        return None
    if manager not in NODE_EXPORTER:
        raise ValueError("slime_cluster.metrics.node_exporter: no node exporter package for package_manager %s "
                         "(supported: %s)" % (manager, ", ".join(sorted(NODE_EXPORTER))))
    return dict(NODE_EXPORTER[manager], port=NODE_EXPORTER_PORT)


def chart_values(values, model):
    """With the controller's metrics on: the chart's controller.metrics - MetricsType, and a ServiceMonitor of the
    chart's endpoints, which the operator makes only where the cluster serves monitoring.coreos.com/v1 and skips
    elsewhere (slurm-operator v1.2.1 internal/controller/controller/controller_sync.go, isServiceMonitorUnavailable)."""
    section = model.get("metrics")
    if section and section["controller"]:
        values["controller"]["metrics"] = {"enabled": True, "serviceMonitor": {"enabled": True}}
    return values
