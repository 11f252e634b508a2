# The cost of differential privacy, measured on real data.
# Reproduces and extends the data analysis of Cai, Wang & Zhang, "The Cost of Privacy" (Ann. Statist. 2021).
# Run: snakemake --cores N   (see README.md)

from snakemake.utils import min_version

min_version("9.0")


# before configfile: a YAML syntax error in it is named by file and line (snakemake names neither)
include: "workflow/rules/yaml_syntax.smk"


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/tune.smk"
include: "workflow/rules/estimate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/privacy_map.smk"
include: "workflow/rules/attack.smk"
include: "workflow/rules/simulation.smk"
include: "workflow/rules/libsvm.smk"
include: "workflow/rules/benchmark.smk"


# Run on the submitting host under a cluster executor: downloads need the internet, which compute nodes often
# lack, and the rest take seconds.
localrules:
    all,
    download_snp,
    download_libsvm,
    download_table,
    libsvm_table,
    aggregate,
    plot,
    ledger,
    config_snapshot,
    compare,
    privacy_map,
    attack,
    simulation,
    simulation_aggregate,
    simulation_plot,
    benchmark,
    benchmark_summary,


rule all:
    default_target: True
    input:
        final_outputs(),


# The simulation study (not in the default target: 1,500 s of CPU, at least 13 minutes on 2 cores, no data;
# docs/performance.md).
rule simulation:
    input:
        simulation_outputs(),


# The real-data benchmark of private regression (not in the default target; config/presets/benchmark.yaml,
# docs/usage.md "The real-data benchmark").
rule benchmark:
    input:
        benchmark_outputs(),
