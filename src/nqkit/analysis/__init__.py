"""Analyses that explain a number rather than being one: breakdowns of the NQ metrics,
the Bayes-optimal NULL rule, dataset statistics, and pictures (PR curves).

Official metrics live in :mod:`nqkit.metrics`; this layer reads their results and the
records of :mod:`nqkit.formats`, and nothing below imports it.
"""
