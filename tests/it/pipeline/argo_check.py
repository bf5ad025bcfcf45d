"""Checks an Argo Workflows `Workflow` (YAML) with the Workflow models of
PyPI's `hera` (generated from Argo's published JSON Schema; installed by
scripts/test-deps in target/test-tools/hera): every value must have the
schema's type, and, since the models ignore keys they do not know, every
key must survive a round trip through them. Then what the schema cannot
say: the entrypoint, the exit handler and every task name templates that
exist, and a task's `depends` names tasks of its DAG.

Prints each problem and exits 1 when there is one.
usage: PYTHONPATH=target/test-tools/hera python3 argo_check.py WORKFLOW
"""

import re
import sys

import yaml
from hera.workflows.models import Workflow


def dropped(given, kept, path):
    """Keys of `given` the models did not keep, as paths."""
    if isinstance(given, dict):
        if not isinstance(kept, dict):
            return [path]
        found = []
        for key, value in given.items():
            if key not in kept:
                found.append(f"{path}.{key}")
            else:
                found.extend(dropped(value, kept[key], f"{path}.{key}"))
        return found
    if isinstance(given, list) and isinstance(kept, list):
        found = []
        for i, (a, b) in enumerate(zip(given, kept)):
            found.extend(dropped(a, b, f"{path}[{i}]"))
        return found
    return []


def main(path):
    with open(path) as f:
        document = yaml.safe_load(f)
    try:
        workflow = Workflow.parse_obj(document)
    except Exception as error:  # pydantic's ValidationError
        print(f"{path}: {error}")
        return 1
    problems = [
        f"{path}: unknown key {key}"
        for key in dropped(document, workflow.dict(by_alias=True, exclude_unset=True), "")
    ]
    spec = document["spec"]
    templates = {t["name"] for t in spec.get("templates", [])}
    for key in ("entrypoint", "onExit"):
        if key in spec and spec[key] not in templates:
            problems.append(f"{path}: spec.{key} names no template: {spec[key]}")
    for template in spec.get("templates", []):
        tasks = (template.get("dag") or {}).get("tasks", [])
        names = {t["name"] for t in tasks}
        for task in tasks:
            if task.get("template") not in templates:
                problems.append(f"{path}: task {task['name']} names no template")
            for word in re.findall(r"[A-Za-z0-9_-]+(?:\.[A-Za-z]+)?", task.get("depends", "")):
                name = word.split(".")[0]
                if name not in names:
                    problems.append(f"{path}: task {task['name']} depends on no task {name}")
        for step_group in template.get("steps") or []:
            for step in step_group:
                if step.get("template") not in templates:
                    problems.append(f"{path}: step {step['name']} names no template")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
