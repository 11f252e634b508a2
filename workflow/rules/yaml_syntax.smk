# Read before the workflow's `configfile:` (the Snakefile includes this first): snakemake's message for a YAML syntax
# error names neither the file nor the line; this one says both, in one line, with a non-zero exit. Files given with
# --configfile are read by snakemake before any workflow code runs, so only config/config.yaml can be checked here.
# What it holds is kept (WORKFLOW_CONFIG, None when there is no such file) for rules/run_record.smk.


def _yaml_syntax(path):
    import sys
    import yaml

    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except FileNotFoundError:
        return None  # snakemake's own message (or the --configfile files given instead)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = (
            f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else path
        )
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        start = getattr(exc, "context_mark", None)
        if start is not None and getattr(exc, "context", None):
            problem += f" ({exc.context} that starts at line {start.line + 1}, column {start.column + 1})"
        print(f"config error: {where}: YAML syntax: {problem}", file=sys.stderr)
        raise SystemExit(1)


WORKFLOW_CONFIG = _yaml_syntax("config/config.yaml")
