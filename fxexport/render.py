"""render: PackageIR -> {relative path: source text}, through the Jinja templates."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import jinja2

from .ir import PackageIR

_HERE = Path(__file__).resolve().parent


def template_dirs() -> list[Path]:
    """The templates shipped in the wheel, or the repository's top-level `templates/`."""
    return [d for d in (_HERE / "templates", _HERE.parent / "templates") if d.is_dir()][:1]


def environment(extra: Sequence[Path] = ()) -> jinja2.Environment:
    """The one Jinja environment: user template folders first, then ours."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([*map(str, extra), *map(str, template_dirs())]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _summary(package: PackageIR) -> str:
    weights = ", ".join(package.weight_files) or "no weight file"
    return (
        f"Parameters: {package.parameter_count:,}; buffers: {package.buffer_count}; "
        f"{package.weight_bytes:,} bytes of tensors in {weights}.\nGenerated with torch {package.torch_version}."
    )


def render(package: PackageIR, templates: Sequence[Path] = ()) -> dict[str, str]:
    env = environment(templates)
    codes = {"class_name": repr(package.class_name), "weight_files": repr(package.weight_files)}
    context = {"package": package, "codes": codes, "summary": _summary(package)}
    return {
        "__init__.py": env.get_template("__init__.py.jinja").render(context),
        "module.py": env.get_template("module.py.jinja").render(context),
    }
