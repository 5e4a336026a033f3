#!/usr/bin/env python3
"""Checks the shape of `helm template` output of deploy/helm/qim (default values): prints one line per
problem and exits 1 if there is any.

  chart-check.py RENDERED

A Deployment per role (gateway, fanout, mailbox, archiver) running `qim ROLE` from the image; a Service in
front of the gateways only; the shared configuration from the ConfigMap and QIM_AUTH_SECRET from the
Secret; startup, liveness and readiness probes on /healthz at the admin port; Prometheus annotations on
the pods; the pods run as a non-root user; the MailboxNodes are named (QIM_NODE_ID) by their pod; no mapping
has a key twice.
"""
import sys

import yaml



class StrictLoader(yaml.SafeLoader):
    """A mapping with a key twice is an error (the API server's strict decoding refuses it)."""


def _mapping(loader, node, deep=False):
    keys = [loader.construct_object(k) for k, _ in node.value]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise yaml.constructor.ConstructorError(None, None, "duplicate keys %s" % dup, node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
try:
    docs = [d for d in yaml.load_all(open(sys.argv[1]), Loader=StrictLoader) if d]
except yaml.YAMLError as e:
    print("chart: the rendered manifests do not parse strictly:", e)
    sys.exit(1)
problems = []
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)

deployments = {d["metadata"]["labels"]["app.kubernetes.io/component"]: d for d in by_kind.get("Deployment", [])}
if sorted(deployments) != ["archiver", "fanout", "gateway", "mailbox"]:
    problems.append("Deployments: %s, want archiver fanout gateway mailbox" % sorted(deployments))
services = by_kind.get("Service", [])
if len(services) != 1 or services[0]["spec"]["selector"].get("app.kubernetes.io/component") != "gateway":
    problems.append("want one Service, selecting the gateways")
configmaps = [c["metadata"]["name"] for c in by_kind.get("ConfigMap", [])]
secrets = [s["metadata"]["name"] for s in by_kind.get("Secret", [])]
if len(configmaps) != 1 or len(secrets) != 1:
    problems.append("want one ConfigMap and one Secret, got %s and %s" % (configmaps, secrets))
elif "QIM_AUTH_SECRET" not in by_kind["Secret"][0].get("data", {}):
    problems.append("the Secret has no QIM_AUTH_SECRET")

for role, d in sorted(deployments.items()):
    pod = d["spec"]["template"]
    ann = pod["metadata"].get("annotations", {})
    c = pod["spec"]["containers"][0]
    admin = [p["containerPort"] for p in c.get("ports", []) if p["name"] == "admin"]
    if c.get("args") != [role]:
        problems.append("%s: args %s, want [%s]" % (role, c.get("args"), role))
    if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/path") != "/metrics" or \
            [ann.get("prometheus.io/port")] != [str(p) for p in admin]:
        problems.append("%s: Prometheus annotations %s do not name the admin port %s" % (role, ann, admin))
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") != "/healthz" or [get.get("port")] != admin:
            problems.append("%s: %s is %s, want /healthz on the admin port" % (role, probe, get))
    if [r["configMapRef"]["name"] for r in c.get("envFrom", [])] != configmaps:
        problems.append("%s: envFrom does not read the ConfigMap" % role)
    env = {e["name"]: e for e in c.get("env", [])}
    ref = env.get("QIM_AUTH_SECRET", {}).get("valueFrom", {}).get("secretKeyRef", {})
    if ref.get("name") not in secrets:
        problems.append("%s: QIM_AUTH_SECRET does not come from the Secret" % role)
    sc = pod["spec"].get("securityContext", {})
    if not sc.get("runAsNonRoot") or not sc.get("runAsUser"):
        problems.append("%s: the pod does not run as a non-root user" % role)
    if role == "mailbox" and env.get("QIM_NODE_ID", {}).get("valueFrom", {}).get("fieldRef", {}).get(
            "fieldPath") != "metadata.name":
        problems.append("mailbox: QIM_NODE_ID is not the pod's name")

for p in problems:
    print("chart:", p)
sys.exit(1 if problems else 0)
