"""A training job as submitted: its id, its spec and the rules that check it (tiers, roles,
machine types, runtimes, images), its states, and the readers for untrusted JSON (``wire``).

The floor of the model: every other room may import it, and it imports none of them.
"""
