"""Reusable Textual widgets, one per module, styled from theme variables only."""
