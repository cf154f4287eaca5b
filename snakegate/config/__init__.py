"""Run configs as files: read exactly as Snakemake reads them (`read`), hostile shapes refused before
anything walks them (`shape`), written so that they read back unchanged (`write`), and the templates of
`snakegate init` (`template`). Never runs Snakemake.
"""
