"""The run's conversation with its user at start-up: the checks that stop a run before any job when a job would
only fail (:mod:`.data_check`)."""
