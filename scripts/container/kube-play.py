#!/usr/bin/env python3
"""Prepares `helm template` output for `podman kube play` (podman 4.3, Debian 12) and checks its shape.

  kube-play.py RENDERED OUT_DIR   writes OUT_DIR/play.yaml (every document podman plays) and, for each Secret,
                                  OUT_DIR/secret-NAME.json: the Secret's data as podman reads a secret that
                                  secretKeyRef names ({"KEY": "<base64>"}); prints "secret NAME FILE" lines.

podman 4.3 stores a Secret document of a played file as YAML but reads secrets back as JSON, so a pod that
refers to it fails ("secret ... is not valid JSON"); the test creates the secret itself (`podman secret
create NAME FILE`) and plays the other documents. Services are dropped: podman has no Service (the test
talks to each gateway pod on its own port), and so are NetworkPolicies. With hostNetwork, the containers' `ports` are dropped: they only
name the ports, and podman 4.3 refuses them there ("PortMappings can only be used with Bridge or
slirp4netns networking").
"""
import json
import os
import sys

import yaml

rendered, out = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
play = []
for d in docs:
    kind = d.get("kind")
    if kind == "Secret":
        name = d["metadata"]["name"]
        path = os.path.join(out, "secret-%s.json" % name)
        with open(path, "w") as f:
            json.dump(d.get("data", {}), f)
        print("secret", name, path)
    elif kind in ("Service", "NetworkPolicy"):
        continue
    else:
        pod = d.get("spec", {}).get("template", {}).get("spec")
        if pod and pod.get("hostNetwork"):
            for c in pod.get("containers", []):
                c.pop("ports", None)
        play.append(d)
with open(os.path.join(out, "play.yaml"), "w") as f:
    yaml.safe_dump_all(play, f, sort_keys=False)
