"""The run, as the workflow sees it: its configuration resolved once (:mod:`.config`, the facts the rules read), the
checks that stop a run before any job (:mod:`.startup`, :mod:`.data_check`: the config, the data the targets need,
the downloaded tables' preparations) and its estimated work (:mod:`.workload`), what each rule's job is handed
(:mod:`.args`), what the run makes (:mod:`.targets`), what it says at its end (:mod:`.closing`) and what it was
given (:mod:`.record`, read before the config: it imports nothing here)."""
