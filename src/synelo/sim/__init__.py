"""Closed-loop simulation of game servers, players and the service (`synelo simulate`)."""
