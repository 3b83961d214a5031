"""Pure domain logic: no IO, no Textual. Every other layer may import it."""
