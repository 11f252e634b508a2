"""The simulation studies of Cai, Wang & Zhang (2021) §5 (and of the 2019 preprint §5): designs drawn from their own
streams, the estimators and their tuning variants run on the same draws, the minimax rates fitted to the curves."""
