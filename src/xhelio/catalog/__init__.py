"""Missions, datasets and parameters of CDAWeb, with ranked search."""
