"""The runtime: a set of tools checked once, and the order of a call, written once.

The grants a call is checked against, the checks of what a runtime is built from, the pieces a call is made of,
lenient mode as a call carries it, and the two drivers of a call.
"""
