"""Testing tools for plugin authors: fixtures, contract checks and Hypothesis strategies.

Installed with ``pip install 'hermesos-core[testing]'``, which registers the
pytest plugin :mod:`hermes_core.testing.plugin`; it does nothing until a test
asks for one of its fixtures.
"""
