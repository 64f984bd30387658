"""`sectors-edge`: Sector's Edge's scoreboard power (`synelo.models.sectors_edge`) under
replay."""

from __future__ import annotations

from synelo.evaluation.models.base import Bounds, register
from synelo.evaluation.models.served import (
    ServedModel,
    named_choices,
    numeric_defaults,
    text_params,
)
from synelo.models.sectors_edge import SectorsEdge


@register
class SectorsEdgeModel(ServedModel):
    """`synelo.models.sectors_edge.SectorsEdge` under replay; `-p power=community` runs the
    community proposal's power instead of sortedPower."""

    served = SectorsEdge
    name = SectorsEdge.name
    summary = SectorsEdge.summary
    defaults = numeric_defaults(SectorsEdge)
    texts = text_params(SectorsEdge)
    choices = named_choices(SectorsEdge)
    tunable = {
        "scale_prior": Bounds(0.001, 2.0, log=True),
        "scale_precision": Bounds(1.0, 1e5, log=True),
        "new_place": Bounds(0.0, 1.0),
    }
