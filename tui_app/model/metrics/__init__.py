"""Scalar curves: TensorFlow event files read (and written, for tests), metrics a trainer prints,
series in bounded memory with smoothing, what a chart draws and its ticks, a tuning job's best
trial.
"""
