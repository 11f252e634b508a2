"""The run's conversation with its user: the checks that stop a run before any job when a job would only fail
(:mod:`.data_check`: the data the targets need, the downloaded tables' preparations) and what a run says at its end
(:mod:`.closing`)."""
