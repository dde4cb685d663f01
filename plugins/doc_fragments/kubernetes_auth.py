# -*- coding: utf-8 -*-
# Copyright: slime.hybrid contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How slime.hybrid's modules that talk to the Kubernetes API are told where and as whom.

The options are kubernetes.core's connection options (its module_utils/args_common.py
AUTH_ARG_SPEC, which these modules take as their own argument spec, and its client, which reads
each from the environment when the task leaves it unset), documented here in this collection's
own words so that the documentation renders where only this collection is installed, as in
Galaxy's importer. tests/unit/plugins/doc_fragments/test_kubernetes_auth.py holds them to the
installed kubernetes.core's AUTH_ARG_SPEC.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path of the kubeconfig to use, or the kubeconfig itself as a dictionary.
      - Unset, the environment's E(K8S_AUTH_KUBECONFIG), else the client's default (C(~/.kube/config),
        or the service account of the pod the task runs in).
      - The collection's playbooks set it from the inventory variable C(slime_kubeconfig) (module_defaults
        of the action group C(slime.hybrid.kubernetes)).
    type: raw
  context:
    description:
      - Context of the kubeconfig to use (E(K8S_AUTH_CONTEXT)); unset, the kubeconfig's current context.
      - The collection's playbooks set it from the inventory variable C(slime_kube_context).
    type: str
  host:
    description:
      - URL of the API server, when it is not taken from a kubeconfig (E(K8S_AUTH_HOST)).
    type: str
  api_key:
    description:
      - Bearer token for the API server (E(K8S_AUTH_API_KEY)).
    type: str
  username:
    description:
      - User name for basic authentication, where the API server still accepts it (E(K8S_AUTH_USERNAME)).
    type: str
  password:
    description:
      - Password for basic authentication (E(K8S_AUTH_PASSWORD)).
    type: str
  validate_certs:
    description:
      - Whether the API server's certificate is verified (E(K8S_AUTH_VERIFY_SSL)).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - CA certificate the API server's certificate is verified against (E(K8S_AUTH_SSL_CA_CERT)).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Client certificate to authenticate with (E(K8S_AUTH_CERT_FILE)).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Key of O(client_cert) (E(K8S_AUTH_KEY_FILE)).
    type: path
    aliases: [key_file]
  proxy:
    description:
      - HTTP proxy for the connection to the API server (E(K8S_AUTH_PROXY)).
    type: str
  no_proxy:
    description:
      - Hosts, domains, addresses and networks reached without O(proxy), comma-separated
        (E(K8S_AUTH_NO_PROXY)).
    type: str
  proxy_headers:
    description:
      - Headers sent to O(proxy).
    type: dict
    suboptions:
      proxy_basic_auth:
        description:
          - C(user:password) for the proxy (E(K8S_AUTH_PROXY_HEADERS_PROXY_BASIC_AUTH)).
        type: str
      basic_auth:
        description:
          - C(user:password) sent as basic authorization (E(K8S_AUTH_PROXY_HEADERS_BASIC_AUTH)).
        type: str
      user_agent:
        description:
          - User agent sent to the proxy (E(K8S_AUTH_PROXY_HEADERS_USER_AGENT)).
        type: str
  persist_config:
    description:
      - Whether a token the client refreshes is written back to the kubeconfig file
        (E(K8S_AUTH_PERSIST_CONFIG)).
    type: bool
  impersonate_user:
    description:
      - User to act as (E(K8S_AUTH_IMPERSONATE_USER)).
    type: str
  impersonate_groups:
    description:
      - Groups to act as (E(K8S_AUTH_IMPERSONATE_GROUPS), comma-separated).
    type: list
    elements: str
notes:
  - The Python packages C(kubernetes) and, for its connection, kubernetes.core's module utilities
    (the collection kubernetes.core) are needed where the module runs.
"""
