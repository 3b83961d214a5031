"""The config builder's rules: its form's fields and validation, the starter presets, a tier's
summary.
"""
