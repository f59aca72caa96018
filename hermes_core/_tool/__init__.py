"""A tool and what its handler sees.

Its definition, with the schemas read from type hints and docstrings; what it tells clients about itself; its
result's content blocks; its call's context and approval; the resources it may hold.
"""
