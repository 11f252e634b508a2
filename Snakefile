# The workflow is workflow/Snakefile (the snakemake-workflows catalog's layout, and what a module deployment names);
# this file only lets `snakemake` run from the repository's root by the other convention too.


include: "workflow/Snakefile"


# An include keeps the including file's default target: this one is the workflow's `all`.
localrules:
    default,


rule default:
    default_target: True
    input:
        rules.all.input,
