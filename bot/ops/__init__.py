"""Operating FAA: the one `faa` command line (`cli.py`, `admin.py`), how a process runs (`lifecycle.py`), several
web processes on one port (`supervisor.py`), where the database is (`runtime.py`), and the local model servers
(`local_models.py`, `local_servers.py`)."""
