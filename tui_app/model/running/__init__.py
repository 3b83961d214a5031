"""How the local service runs a job, as rules without IO: what fits the machine (capacity), what
it costs, the scheduling limits, why a queued job waits, which gs:// paths a replica may touch,
the hyperparameter search that picks each trial's parameters, and when a replica that stopped
runs again (restarts).
"""
