"""Read-only views of a run folder: its facts as plain data (`facts`) and its HTML page (`report`).
They never change a record.
"""
