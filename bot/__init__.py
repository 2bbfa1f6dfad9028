"""Everything that faces the outside: `channels` (one subpackage per way members reach FAA, behind one protocol and
a registry), `web` (the web process: the HTTP API and every channel's webhook) and `ops` (the `faa` command line
and what it runs: process supervision, the database's location, local model servers)."""
