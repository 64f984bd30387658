"""Every figure a model shows on a player's page has plain words beside its symbol."""

from __future__ import annotations

from synelo.models import MODELS, create_model
from synelo.models.positional import PositionalSkill
from synelo.service.pages.glossary import FIGURES, explained


def test_every_models_figures_are_explained() -> None:
    for name in MODELS:
        model = create_model(name)
        for field in model.fields(model.new_state()):
            label, meaning = explained(field)
            assert label and meaning, (name, field)
    # a positional player's figures at each position they played
    played = PositionalSkill(1600.0, {"offense": 1650.0}, {"offense": 3})
    shown = [explained(f) for f in create_model("positional").fields(played)]
    assert ("rating at offense", "their rating when they play offense") in shown
    assert ("rounds at offense", "the rounds they played at offense") in shown


def test_the_symbols_name_their_formula() -> None:
    assert FIGURES["convergence"][0] == "C (convergence, F3)"
    assert FIGURES["k"][0] == "K (step size, F5)"  # F5 makes K, F3 makes C
    assert explained("something new") == ("something new", "")
