"""What every part shares, knowing no tool and no schema.

The version, frozen values, issues and the errors made of them, names, a call's JSON arguments read within
bounds, where handlers run, and tracing.
"""
