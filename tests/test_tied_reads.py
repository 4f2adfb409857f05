"""tied_reads.py: a tied tensor a module call reads under a path outside it is read under its path inside."""

from __future__ import annotations

import torch

import fxexport
from fxexport.calls import body_nodes, recorded_frames
from fxexport.tied_reads import inside_reads
from tests import models
from tests.packages import imported


def test_a_tied_tensor_read_outside_the_call_is_read_under_the_innermost_call_holding_it() -> None:
    gm = models.tied_read_outside()
    leaves = {str(n.target) for n in gm.graph.find_nodes(op="call_module")}
    nodes = body_nodes(gm)
    found = inside_reads(gm, nodes, {n: recorded_frames(n, leaves) for n in nodes})
    assert {u.name: {r.target: path for r, path in reads.items()} for u, reads in found.items()} == {
        "embedding": {"head.weight": "encoder.embed.weight"}  # the head's own read stays as it is
    }


def test_the_call_is_cut_out_reading_its_own_weight_and_computes_the_same(tmp_path) -> None:
    gm = models.tied_read_outside()
    fxexport.export(gm, tmp_path / "tied_pkg")
    text = (tmp_path / "tied_pkg" / "module.py").read_text()
    assert "return self.head(self.encoder(ids))" in text
    assert "def forward(self, ids):\n        return self.norm(self.embed(ids))" in text  # was (ids, weight), passed on
    assert "return F.embedding(ids, self.weight) * 2.0" in text
    ids = torch.tensor([[1, 2, 3]])
    with imported(tmp_path / "tied_pkg") as package:
        model = package.FxModule()
        assert list(model.state_dict()) == list(gm.state_dict())
        assert model.encoder.embed.weight is model.head.weight
        assert torch.equal(model(ids), gm(ids))
