"""Vertex AI custom jobs: ml v1 requests translated both ways (``translate``), the images that
stand in for runtime versions, resource names, and what a backend cannot do of a config.
"""
