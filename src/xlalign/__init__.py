"""xlalign: cross-lingual representation research as a Snakemake workflow and library."""

__version__ = "0.1.0"
