"""The user's configuration and where things live on disk: settings, presets, locations.

Imported by every part (the service finds its state dir here, the clients their profiles), so
it imports none of them, nor Textual.
"""
