"""Running hermesos serve as several replicas behind nginx: the launcher, and the load test's driver and plugin."""
