"""The Snakemake layer: output paths, job resources, job-script glue, MLflow tracking."""
