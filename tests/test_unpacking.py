"""A traced shape whose rank the graph does not know, unpacked by its first items (unpacking.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import fx, nn

import fxexport
from tests.packages import imported


class _Sizes(nn.Module):
    def forward(self, x):
        b, c = x.shape[0], x.shape[1]  # one `x.shape` read twice is two getattr nodes: not unpacked
        shape = x.shape
        return x.reshape(shape[0], shape[1], -1).mean(-1) + b * c


class _Size(nn.Module):
    def forward(self, x):
        n, _, length = x.size()
        return x.flatten(2).sum(-1) * length + n


class _ReadLater(nn.Module):
    """A shape's items read where used, not unpacked: indexed where they are."""

    def forward(self, x):
        size = x.size()
        return x.flatten(2).sum(-1) * size[2] + size[0]


class _Later(nn.Module):
    """Items after the first ones only: the ones before are `_`."""

    def forward(self, x):
        _, _, h, w = x.shape
        return x.mean((2, 3)) * h / w


class _ShapeReadLater(nn.Module):
    """An attribute read symbolic_trace names `getattr_1`, its items read where used: named after the attribute."""

    def forward(self, x):
        shape = x.shape
        return x.flatten(2).sum(-1) * shape[2] + shape[0]


# (model, what the forward unpacks the shape into, inputs of the example's rank and of longer ranks)
CASES = [
    (_Sizes, "shape1, shape2 = x.shape[:2]", [(2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6)]),
    (_Size, "size1, _, size3 = x.size()[:3]", [(2, 3, 4), (2, 3, 4, 5)]),
    (_Later, "_, _, shape3, shape4 = x.shape[:4]", [(2, 3, 4, 5), (2, 3, 4, 5, 6)]),
    (_ReadLater, "size = x.size()", [(2, 3, 4), (2, 3, 4, 5)]),
    (_ShapeReadLater, "shape = x.shape\n", [(2, 3, 4), (2, 3, 4, 5)]),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[type, tuple[fx.GraphModule, Path]]:
    out = {}
    for cls, _, _shapes in CASES:
        gm = fx.symbolic_trace(cls())
        folder = tmp_path_factory.mktemp("unpacking") / f"shape_{cls.__name__.lower()}"
        fxexport.export(gm, folder)
        out[cls] = gm, folder
    return out


@pytest.mark.parametrize(("cls", "unpacked", "shapes"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_shape_is_unpacked_by_the_items_the_graph_reads(cls, unpacked, shapes, exported) -> None:
    code = (exported[cls][1] / "module.py").read_text(encoding="utf-8")
    assert unpacked in code


@pytest.mark.parametrize(("cls", "unpacked", "shapes"), CASES, ids=[c[0].__name__ for c in CASES])
def test_the_export_takes_inputs_of_a_longer_rank_as_the_graph_does(cls, unpacked, shapes, exported) -> None:
    gm, folder = exported[cls]
    with imported(folder) as package:
        model = package.FxModule()
        for shape in shapes:
            x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
            assert torch.equal(model(x), gm(x))


@pytest.mark.parametrize(("cls", "unpacked", "shapes"), CASES, ids=[c[0].__name__ for c in CASES])
def test_the_export_of_the_export_unpacks_it_alike(cls, unpacked, shapes, exported) -> None:
    _, folder = exported[cls]
    with imported(folder) as package:
        _, sources = fxexport.generate(fx.symbolic_trace(package.FxModule()), package_name=folder.name)
    first = (folder / "module.py").read_text(encoding="utf-8")
    assert [line for line in sources["module.py"].splitlines() if "Producer:" not in line] == [line for line in first.splitlines() if "Producer:" not in line]
