# The tracking manifest: the jobs whose stats the MLflow mirror of one seed collects. Not
# a list kept by hand: every job of the DAG of `all` whose rule has an output named
# `stats` (and its benchmark), read off the rules by xlalign.workflow.manifest.
import functools


@functools.cache
def tracked_jobs():
    """Every tracked job of every seed (walked once per parse: the `track` jobs' input,
    params and resources all ask)."""
    return manifest.tracked_jobs(workflow.rules, all_targets(), skip={"track"})


def track_records(seed):
    """The records of the jobs the MLflow run of training seed `seed` mirrors."""
    return manifest.seed_records(tracked_jobs(), int(seed), sample_seed(seed))
