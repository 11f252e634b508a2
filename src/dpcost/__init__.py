"""dpcost: the cost of differential privacy, measured on real data.

Estimators, mechanisms, data parsers and the bootstrap engine behind the Snakemake workflow in this repository.
Everything here is numpy in, numpy out; nothing imports Snakemake.
"""

__version__ = "0.1.0"
