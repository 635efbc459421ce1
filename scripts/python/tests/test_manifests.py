"""deploy/kubernetes validated offline against the Kubernetes JSON schemas that kubernetes-validate
ships (strict: unknown fields fail), and held to what the other deploy files say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List

import kubernetes_validate
import pytest
import yaml

from conftest import ROOT

K8S = ROOT / "deploy" / "kubernetes"
VERSION = "1.30.0"  # the oldest release the manifests need (backoffLimitPerIndex)


def _docs() -> List[Dict[str, Any]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def _kind(kind: str, name: str) -> Dict[str, Any]:
    return next(d for d in _docs() if d["kind"] == kind and d["metadata"]["name"] == name)


@pytest.mark.parametrize("doc", _docs(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_manifest_validates_strictly(doc: Dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_validator_rejects_a_broken_manifest() -> None:
    doc = _kind("Deployment", "ehrgym-replica")
    doc["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["paht"] = "/healthz"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, VERSION, strict=True)
    doc = _kind("Job", "ehrgym-rollout")
    doc["spec"]["completions"] = "eight"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, VERSION, strict=True)


def test_replicas_probe_healthz_and_drain_within_the_grace_period() -> None:
    pod = _kind("Deployment", "ehrgym-replica")["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["readinessProbe"]["httpGet"]["path"] == c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    drain = int(re.search(r"--drain-timeout (\d+)", c["args"][0]).group(1))
    assert 0 < drain < pod["terminationGracePeriodSeconds"]
    live = c["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] > drain
    assert _kind("Service", "ehrgym-replicas")["spec"]["clusterIP"] == "None"


def _without_upstream(conf: str) -> str:
    conf = re.sub(r"upstream ehrgym \{.*?\n\}\n", "", conf, flags=re.S)
    return re.sub(r"^resolver .*\n\n?", "", conf, flags=re.M)


def test_the_proxy_configmap_is_deploy_nginx_with_the_replicas_service() -> None:
    conf = _kind("ConfigMap", "ehrgym-nginx")["data"]["default.conf"]
    assert _without_upstream(conf) == _without_upstream((ROOT / "deploy" / "nginx" / "ehrgym.conf").read_text())
    assert "hash $ehrgym_route consistent;" in conf and "ehrgym-replicas.default.svc.cluster.local:8000 resolve" in conf


def test_the_indexed_job_shards_by_completion_index_and_the_build_reads_every_shard() -> None:
    job = _kind("Job", "ehrgym-rollout")["spec"]
    assert job["completionMode"] == "Indexed"
    cmd = job["template"]["spec"]["containers"][0]["args"][0]
    assert f"--shards {job['completions']}" in cmd and "$JOB_COMPLETION_INDEX" in cmd
    out = re.search(r'--out "([^"]+)"', cmd).group(1)
    build = _kind("Job", "ehrgym-dataset-build")["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert f"--from {out.replace('$JOB_COMPLETION_INDEX', '*')}" in build


def test_the_dockerfile_runs_the_cli_the_manifests_call() -> None:
    docker = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["node", "/app/bin/ehrgym.js"]' in docker
    for doc in _docs():
        for c in doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            if c["image"].startswith("ehrgym:"):
                assert "node /app/bin/ehrgym.js " in c["args"][0]
