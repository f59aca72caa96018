"""The front door: a call from a model or a client in, its result or its error out, the same at every edge.

Wire names, and the door the adapters and the server share.
"""
