"""Offline checks for the code samples that are not Python.

- shell: ``bash -n`` (syntax only); ``<placeholder>`` words are replaced first;
- Kubernetes manifests: the OpenAPI schema bundled in kubernetes-validate
  (strict: unknown fields are errors), plus the rules the API server applies
  that the schema cannot express (a Job's pods must not restart ``Always``);
  Volcano Jobs: ``schemas/volcano-job.schema.json`` plus each task's pod
  template against Kubernetes' schema;
- ``prometheus.yml``: ``schemas/prometheus-config.schema.json``.

Each check returns a list of problems (empty when the sample is fine).
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path

import jsonschema

SCHEMAS = Path(__file__).resolve().parent / "schemas"
K8S_VERSION = "1.34"
_PLACEHOLDER = re.compile(r"<([A-Za-z][\w.-]*)>")


def check_bash(code: str) -> list[str]:
    code = _PLACEHOLDER.sub(lambda m: "PLACEHOLDER_" + re.sub(r"\W", "_", m.group(1)), code)
    proc = subprocess.run(["bash", "-n"], input=code, capture_output=True, text=True)
    return [line for line in proc.stderr.splitlines() if line.strip()]


@cache
def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _schema_errors(data, schema: dict, where: str = "") -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{where}{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in validator.iter_errors(data)
    ]


def _k8s_schema_errors(doc: dict) -> list[str]:
    import kubernetes_validate

    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'/'.join(map(str, error.path)) or '(top)'}: {error.message}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [f"no schema: {error}"]
    return []


def _pod_template_errors(template: dict, where: str) -> list[str]:
    wrapped = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "check"}, "template": template}
    return [where + e for e in _k8s_schema_errors(wrapped)]


def check_k8s_manifest(doc: dict) -> list[str]:
    if not isinstance(doc, dict) or "apiVersion" not in doc:
        return ["not a Kubernetes manifest (no apiVersion)"]
    if doc["apiVersion"].startswith("batch.volcano.sh/"):
        errors = _schema_errors(doc, _schema("volcano-job.schema.json"))
        for i, task in enumerate(doc.get("spec", {}).get("tasks", [])):
            errors += _pod_template_errors(task.get("template", {}), f"spec/tasks/{i}/template: ")
        return errors
    errors = _k8s_schema_errors(doc)
    if doc.get("kind") == "Job":
        policy = doc.get("spec", {}).get("template", {}).get("spec", {}).get("restartPolicy")
        if policy not in ("Never", "OnFailure"):
            errors.append(
                "spec/template/spec/restartPolicy: a Job's pods need 'Never' or "
                f"'OnFailure' (got {policy!r}; the default 'Always' is rejected)"
            )
    return errors


def check_prometheus(doc: dict) -> list[str]:
    return _schema_errors(doc, _schema("prometheus-config.schema.json"))
