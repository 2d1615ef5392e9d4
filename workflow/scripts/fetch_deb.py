"""Snakemake job: fetch one Debian package and unpack the files later jobs read (see
xlalign.resources.debian and xlalign.resources.catalog.DEB_MEMBERS), without apt, dpkg or
root: the archive comes from embedded.debian or the machine's apt configuration, its
indices are cached in resources/packages/deb/_archive. The .deb is deleted once unpacked."""

from pathlib import Path

from xlalign.resources.debian import deb_download, debian_sources, extract_deb
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    sources = debian_sources(snakemake.config["embedded"].get("debian"))
    deb = deb_download(
        snakemake.wildcards.package,
        out.parent / "_debs",
        sources,
        cache_dir=out.parent / "_archive",
    )
    extract_deb(deb, out, snakemake.params.members)
    deb.unlink()
