"""The curated workflows and their demo data, shipped in the package for `snakegate new --with-examples`.

`WORKFLOWS` holds one folder per workflow (and the contribution guide, CONTRIBUTING.md); `DATA` the demo
data their examples and tests read, which a registry keeps under data/examples/. In a source checkout both
are links to the repository's own workflows/ and data/examples/ (the repository is a registry too); a
built wheel holds them as plain files. Read only.
"""

from pathlib import Path

WORKFLOWS = Path(__file__).with_name("workflows")
DATA = Path(__file__).with_name("data")
