"""A job as the views and commands show it: its row (``job_view``), describe, the diff of two
jobs, its trials, where each replica runs and what it uses.
"""
