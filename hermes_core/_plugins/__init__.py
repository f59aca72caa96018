"""Plugin loading: from the installed distributions to a checked set of plugins and its runtime.

The distributions' entry points, the hooks, what no tool may write, one plugin loaded, the plugins checked
together, and the set of them.
"""
