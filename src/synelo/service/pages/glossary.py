"""What a model's figures mean, in plain words beside their symbols: a player's page lists
them ("C (convergence, F3)", "σ"…), and a player who has not read the maths should still
know what each says about them."""

from __future__ import annotations

# each figure a model's `fields` gives: its name on the page, and what it says
FIGURES: dict[str, tuple[str, str]] = {
    "convergence": (
        "C (convergence, F3)",
        "how unsettled the rating still is: 1 for a new player, falling towards 0 while "
        "results keep matching the predictions",
    ),
    "k": (
        "K (step size, F5)",
        "the most points one round can move the rating now (a surprise moves it most); it "
        "falls as C falls",
    ),
    "mu": ("μ (skill)", "the model's best guess of the player's skill"),
    "sigma": (
        "σ (uncertainty)",
        "how unsure the model still is of μ; it shrinks as they play (the rating shown "
        "is μ − 3σ, a skill they very likely have)",
    ),
    "rating": ("rating", "the model's rating of the player"),
    "uncertainty": (
        "uncertainty",
        "how far, in rating points, the true rating may lie from it (one standard deviation)",
    ),
    "natural": ("natural rating", "the same rating on the model's own scale (0: 1500)"),
    "days": ("days played", "the days with a round that the model keeps"),
    "games": ("games", "the rounds the model keeps"),
    "s": ("s (skill, H9)", "the player's skill on the model's own scale"),
    "o": (
        "o (side offset)",
        "how much better they play one side than the other (0: no difference)",
    ),
    "chi": ("χ (commanding skill)", "their skill as their team's commander"),
    "rounds": ("rounds", "the rounds the model has rated them in"),
    "commanded": ("rounds commanded", "the rounds they commanded"),
}


def explained(name: str) -> tuple[str, str]:
    """A figure's name on the page and what it says: a positional model's
    `offense.rating` and `offense.games` are the rating and rounds at that position; a
    figure without words of its own keeps its name, unexplained."""
    position, dot, what = name.rpartition(".")
    if dot and what == "rating":
        return f"rating at {position}", f"their rating when they play {position}"
    if dot and what == "games":
        return f"rounds at {position}", f"the rounds they played at {position}"
    return FIGURES.get(name, (name, ""))
