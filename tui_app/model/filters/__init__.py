"""Filters over the job list: the expression language, gcloud's ``--filter`` and the list's own
filter box.
"""
